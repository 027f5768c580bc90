//! Standard output that never panics: `println!` panics when stdout is closed (`| head`)
//! or full (`> /dev/full`). Every line of the CLI goes through [`emit`] instead.

use std::io::Write;

/// Prints one line on stdout, like `println!`, through [`emit`].
macro_rules! say {
    () => {
        $crate::cli::output::emit(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::cli::output::emit(format_args!($($arg)*))
    };
}
pub(crate) use say;

/// Writes one line to stdout. Stdout is line-buffered, so a failure shows at once.
pub fn emit(args: std::fmt::Arguments) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.write_all(b"\n")) {
        failed(e)
    }
}

/// Ends the program after a failed write to stdout. A reader that went away (a closed
/// pipe) wanted no more: end quietly, successfully. Anything else (a full device) is an
/// error, in one line. Exiting here is safe: every file the program writes is written
/// under a temporary name and renamed when complete, and the build lock is the operating
/// system's, released with the process.
pub fn failed(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("error: writing to standard output: {e}");
    std::process::exit(1)
}

/// User text quoted in an error: control characters escaped, cut after a few dozen.
pub fn shown(text: &str) -> String {
    const SHOWN: usize = 40;
    let mut s: String = text
        .chars()
        .take(SHOWN)
        .flat_map(char::escape_debug)
        .collect();
    if text.chars().nth(SHOWN).is_some() {
        s.push_str(&format!("… ({} bytes)", text.len()));
    }
    s
}

/// An error message as printed: one line (line breaks escaped), at most a few hundred
/// characters, whatever text it quotes.
pub fn clip_line(message: &str) -> String {
    const LONGEST: usize = 300;
    let one_line = message.replace('\n', "\\n").replace('\r', "\\r");
    match one_line.char_indices().nth(LONGEST) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}

/// The "captures" column of a move line: the seeds a move captures, or blanks as wide.
pub fn captures_column(captured: u8) -> String {
    if captured > 0 {
        format!("captures {captured:>2}")
    } else {
        " ".repeat("captures 00".len())
    }
}
