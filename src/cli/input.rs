//! Input read with bounds: a line or a file longer than anything the program reads is an
//! error of its own, and memory stays flat however much comes in (`/dev/zero` has no line
//! break, `/dev/urandom` no end).

use anyhow::{bail, Context, Result};
use std::io::{BufRead, Read};

/// The longest line `probe --batch` and `play` read: a board is a few dozen characters, so
/// this leaves room for any spacing and a comment, and a line longer than this is garbage.
pub const MAX_LINE: usize = 1024;

/// The largest game `analyze` reads: a move list is a few kilobytes (a game of a thousand
/// moves, with comments, is under 10 KiB).
pub const MAX_GAME: u64 = 1 << 20;

/// One line of input, without its line break.
pub enum BoundedLine {
    /// The line, at most [`MAX_LINE`] bytes (not necessarily UTF-8).
    Bytes(Vec<u8>),
    /// A line over the cap: its length in bytes (so far, if the input ended first). Its bytes
    /// were read and dropped.
    TooLong(u64),
}

impl BoundedLine {
    /// The line as text: `Err` says what is wrong with it, in words for an error message.
    pub fn text(&self) -> std::result::Result<&str, String> {
        match self {
            BoundedLine::Bytes(b) => std::str::from_utf8(b).map_err(|_| "not UTF-8 text".into()),
            BoundedLine::TooLong(n) => Err(format!(
                "line too long ({n} bytes; a line holds at most {MAX_LINE})"
            )),
        }
    }
}

/// Reads the next line, keeping at most `max` bytes of it; `None` at the end of the input.
/// A trailing `\r` is dropped with the `\n`.
pub fn read_line(input: &mut impl BufRead, max: usize) -> std::io::Result<Option<BoundedLine>> {
    let mut kept: Vec<u8> = Vec::new();
    let mut total: u64 = 0;
    let mut any = false;
    loop {
        let buf = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            if !any {
                return Ok(None);
            }
            break;
        }
        any = true;
        let (chunk, ended) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], true),
            None => (buf, false),
        };
        total += chunk.len() as u64;
        if kept.len() < max + 1 {
            let room = max + 1 - kept.len();
            kept.extend_from_slice(&chunk[..chunk.len().min(room)]);
        }
        let used = chunk.len() + usize::from(ended);
        input.consume(used);
        if ended {
            break;
        }
    }
    if kept.last() == Some(&b'\r') && total <= max as u64 + 1 {
        kept.pop();
        total -= 1;
    }
    if total > max as u64 {
        return Ok(Some(BoundedLine::TooLong(total)));
    }
    Ok(Some(BoundedLine::Bytes(kept)))
}

/// The whole of a game file (or stdin), at most [`MAX_GAME`] bytes of UTF-8 text.
pub fn read_game(input: impl Read, what: &str) -> Result<String> {
    let mut bytes = Vec::new();
    input
        .take(MAX_GAME + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("reading {what}"))?;
    if bytes.len() as u64 > MAX_GAME {
        bail!(
            "{what} is larger than {} KiB, which no move list is (a game of a thousand moves is under 10 KiB)",
            MAX_GAME >> 10
        );
    }
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "{what} is not UTF-8 text (a bad byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], max: usize) -> Vec<std::result::Result<Vec<u8>, u64>> {
        let mut r = std::io::BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        while let Some(l) = read_line(&mut r, max).unwrap() {
            out.push(match l {
                BoundedLine::Bytes(b) => Ok(b),
                BoundedLine::TooLong(n) => Err(n),
            });
        }
        out
    }

    #[test]
    fn lines_are_cut_at_breaks_and_long_ones_are_counted_not_kept() {
        let got = lines(b"ab\r\n\nabcdefghij\nxyz", 5);
        assert_eq!(
            got,
            vec![Ok(b"ab".to_vec()), Ok(vec![]), Err(10), Ok(b"xyz".to_vec())]
        );
        // Exactly at the cap, with and without a carriage return.
        assert_eq!(lines(b"abcde\r\nabcde", 5), vec![Ok(b"abcde".to_vec()); 2]);
        assert_eq!(lines(b"abcdef\r\n", 5), vec![Err(7)]);
        assert!(lines(b"", 5).is_empty());
    }

    #[test]
    fn a_game_over_the_cap_or_not_utf8_is_an_error() {
        assert_eq!(read_game(&b"1 2 3"[..], "stdin").unwrap(), "1 2 3");
        let big = vec![b' '; MAX_GAME as usize + 1];
        let e = read_game(&big[..], "stdin").unwrap_err().to_string();
        assert!(e.contains("larger than"), "{e}");
        let e = read_game(&b"1 \xff"[..], "stdin").unwrap_err().to_string();
        assert!(e.contains("not UTF-8"), "{e}");
    }
}
