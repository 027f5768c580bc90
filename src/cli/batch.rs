//! The loop of `probe --batch`, for every kind of table: lines read from stdin by a thread
//! of their own (bounded, so garbage of any length or encoding is an error for its line
//! alone), answered in batches, and written one output line per input line.

use super::input::{read_line, BoundedLine, MAX_LINE};
use super::json::batch_error_json;
use super::output;
use anyhow::{Context, Result};
use std::io::Write;

/// Lines answered together at most: their lookups are grouped by block, so each block a
/// group touches is read and decoded once for the whole group. A million random boards of
/// layers 0..=24 touch nearly every block: answered in one group instead of eight, they
/// take 2.6 s instead of 11.3 s (docs/measurements.md).
const BATCH_LINES: usize = 1 << 20;
/// Memory of one batch at most (lines and their answers, as [`Line::bytes`] counts them),
/// so that it stays bounded whatever the input: endless lines of garbage included.
const BATCH_BYTES: usize = 512 << 20;
/// What a line costs while its group is answered, besides its text: its answer and what
/// is built on the way to it (its board and its children's, their lookups, the answer's
/// text). Measured as peak RSS over lines, a million random boards of layers 0..=24 in one
/// group: 266 bytes a line in text from zstd files, 598 from files with don't-cares (whose
/// captures are looked up too); 805 and 828 with `--json`.
const ANSWER_BYTES: usize = 512;
const ANSWER_BYTES_JSON: usize = 1024;
/// Lines read ahead of the batch being answered.
const READ_AHEAD: usize = 1 << 16;
/// A batch closes when no new line arrives for this long, so a program that writes one
/// board and waits for its answer is answered at once.
const BATCH_WAIT: std::time::Duration = std::time::Duration::from_millis(20);

/// One line of `probe --batch` input, without its line break.
pub enum Line {
    Text(String),
    /// Not UTF-8, or too long: an error for this line alone (the reason).
    Bad(String),
}

impl Line {
    fn from_input(line: BoundedLine) -> Line {
        match line.text() {
            Ok(t) => Line::Text(t.to_string()),
            Err(why) => Line::Bad(why),
        }
    }
    /// The line's text if it has a board to answer: `Err` is the error of a line that is
    /// not text, `Ok(None)` a blank line (answered by a blank line).
    pub fn board_text(&self) -> std::result::Result<Option<&str>, String> {
        match self {
            Line::Bad(why) => Err(why.clone()),
            Line::Text(t) if t.trim().is_empty() => Ok(None),
            Line::Text(t) => Ok(Some(t)),
        }
    }
    /// The line's board text, or why it has none: a line that is not text, or a blank
    /// line (`"blank line"`: its answer is a blank line, written by the batch loop).
    pub fn board(&self) -> std::result::Result<&str, String> {
        self.board_text()?.ok_or_else(|| "blank line".into())
    }
    fn is_blank(&self) -> bool {
        matches!(self, Line::Text(t) if t.trim().is_empty())
    }
    /// The memory it and its answer take, for the batch's bound.
    fn bytes(&self, json_out: bool) -> usize {
        (if json_out {
            ANSWER_BYTES_JSON
        } else {
            ANSWER_BYTES
        }) + match self {
            Line::Text(t) => t.len(),
            Line::Bad(why) => why.len(),
        }
    }
}

/// The answer to one line: its output line, or the one line of its error. Errors are kept
/// as their text: an error value can hold much more (a backtrace when RUST_BACKTRACE is
/// set), and a batch of garbage is all errors.
pub type Answer = std::result::Result<String, String>;

/// The answer to a bad line: `error: line N: why`, or with `--json` a JSON object
/// `{"line": N, "error": "why"}`.
fn error_text(line_no: usize, message: &str, json_out: bool) -> String {
    if json_out {
        batch_error_json(line_no, message).to_string()
    } else {
        format!("error: line {line_no}: {message}")
    }
}

/// Runs `probe --batch`: `answer` gets each batch of lines and returns one answer a line
/// (what it returns for a blank line is not written: a blank line gets a blank line).
/// `Ok(false)` when some line was an error.
pub fn run(json_out: bool, mut answer: impl FnMut(&[Line]) -> Vec<Answer>) -> Result<bool> {
    let rx = read_ahead();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut all_ok = true;
    let mut line_no = 0usize;
    while let Ok(first) = rx.recv() {
        let first = first.context("reading stdin")?;
        let mut bytes = first.bytes(json_out);
        let mut lines = vec![first];
        while lines.len() < BATCH_LINES && bytes < BATCH_BYTES {
            match rx.recv_timeout(BATCH_WAIT) {
                Ok(line) => {
                    let line = line.context("reading stdin")?;
                    bytes += line.bytes(json_out);
                    lines.push(line);
                }
                Err(_) => break,
            }
        }
        let answers = answer(&lines);
        for (line, result) in lines.iter().zip(answers) {
            line_no += 1;
            let written = match result {
                _ if line.is_blank() => writeln!(out),
                Ok(text) => writeln!(out, "{text}"),
                Err(e) => {
                    all_ok = false;
                    writeln!(out, "{}", error_text(line_no, &e, json_out))
                }
            };
            written.unwrap_or_else(|e| output::failed(e));
        }
        out.flush().unwrap_or_else(|e| output::failed(e));
    }
    Ok(all_ok)
}

/// A thread that reads stdin line by line into a channel, so that the lines that have
/// arrived can be taken as one batch while more are read.
fn read_ahead() -> std::sync::mpsc::Receiver<std::io::Result<Line>> {
    let (tx, rx) = std::sync::mpsc::sync_channel::<std::io::Result<Line>>(READ_AHEAD);
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        loop {
            let line = match read_line(&mut stdin, MAX_LINE) {
                Ok(None) => break,
                Ok(Some(l)) => Ok(Line::from_input(l)),
                Err(e) => Err(e),
            };
            let stop = line.is_err();
            if tx.send(line).is_err() || stop {
                break;
            }
        }
    });
    rx
}
