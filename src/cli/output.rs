//! Standard output and standard error that never panic: `println!` and `eprintln!` panic
//! when their stream is closed (`| head`, `2>&1 | head -c0`) or full (`> /dev/full`). Every
//! line of the CLI goes through [`emit`] (stdout) or [`emit_err`] (stderr) instead; clippy's
//! `print_stdout` and `print_stderr` lints (denied in `main.rs`) keep it that way. The
//! build's progress bar (indicatif) draws only on a terminal and drops its own write errors.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Mutex;

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

/// Prints one line on stderr, like `eprintln!`, through [`emit_err`].
macro_rules! tell {
    ($($arg:tt)*) => {
        $crate::cli::output::emit_err(format_args!($($arg)*))
    };
}
pub(crate) use tell;

/// Writes one line to stderr. A failure is dropped: stderr is where failures are reported,
/// so there is nowhere left to report this one, and the program's work (and its exit code)
/// must not depend on whether anyone reads its messages.
pub fn emit_err(args: std::fmt::Arguments) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.write_all(b"\n"));
}

/// One line on stderr, for `main`.
pub fn tell_line(line: &str) {
    emit_err(format_args!("{line}"));
}

/// Text on stderr as it is (its own line breaks), for `main`.
pub fn tell_raw(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// Set by [`keep_going_without_stdout`]: a failed write to stdout does not end the program.
static KEEP_GOING: AtomicBool = AtomicBool::new(false);
/// Set once a write to stdout failed in that mode; later lines are not attempted.
static STDOUT_GONE: AtomicBool = AtomicBool::new(false);
/// The first failure other than a closed pipe, reported by [`stdout_result`].
static STDOUT_ERROR: Mutex<Option<String>> = Mutex::new(None);

/// For `build`: its stdout is a report of work whose product is the files, so a reader
/// that goes away (`awari build | head -c1`) must neither stop a build of hours half-way
/// nor let it exit 0 before it is done. From now on a failed write to stdout silences
/// stdout and the work goes on; [`stdout_result`] says at the end whether that was an error.
pub fn keep_going_without_stdout() {
    KEEP_GOING.store(true, Relaxed);
}

/// After the work of [`keep_going_without_stdout`]: an error if stdout failed other than by
/// its reader going away (a full device), so the exit code still says the report is lost.
pub fn stdout_result() -> anyhow::Result<()> {
    let failure = STDOUT_ERROR
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    match failure {
        Some(e) => Err(anyhow::anyhow!("writing to standard output: {e}")),
        None => Ok(()),
    }
}

/// Writes one line to stdout. Stdout is line-buffered, so a failure shows at once.
pub fn emit(args: std::fmt::Arguments) {
    if STDOUT_GONE.load(Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.write_all(b"\n")) {
        if !KEEP_GOING.load(Relaxed) {
            failed(e)
        }
        // Silent from now on; a closed pipe is what the reader asked for, anything else
        // is kept for the exit code.
        if !STDOUT_GONE.swap(true, Relaxed) && e.kind() != std::io::ErrorKind::BrokenPipe {
            *STDOUT_ERROR.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.to_string());
        }
    }
}

/// Text on stdout as it is (`--help`, `--version`), with a failed write treated as
/// [`emit`] treats one: a closed pipe ends quietly, a full device is an error.
pub fn show_raw(text: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
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
    emit_err(format_args!("error: writing to standard output: {e}"));
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

/// An error and its causes in one line, as [`clip_line`] prints it: each cause after a
/// colon, except a cause whose text the line already holds (an error that quotes its
/// source's reason, and still offers it as its `source()`, is not said twice).
pub fn error_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = with_advice(cause).unwrap_or_else(|| cause.to_string());
        if text.is_empty() || line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    clip_line(&line)
}

/// The library's errors describe the problem; the command line adds what to run or which
/// flag to change, since only it knows its commands and flags. `None` for an error that
/// needs no advice.
fn with_advice(cause: &(dyn std::error::Error + 'static)) -> Option<String> {
    use awari::build::BuildError;
    use awari::probe::ProbeError;
    use awari::store::{shell_word, StoreError};
    use awari::verify::VerifyError;

    // A probe's missing layer: the library says the command that builds it.
    let probe = ProbeError::with_build_command;
    if let Some(e) = cause.downcast_ref::<ProbeError>() {
        return probe(e);
    }
    if let Some(e) = cause.downcast_ref::<VerifyError>() {
        return match e {
            VerifyError::Incomplete {
                seeds, rules, dir, ..
            } => Some(format!(
                "{e}; build it again: awari build --rules {rules} --max-seeds {seeds} --db {}",
                shell_word(dir)
            )),
            // Transparent: the probe error is not a cause of its own in the chain.
            VerifyError::Probe(p) => probe(p),
            _ => None,
        };
    }
    let started_without = |e: &StoreError| match e {
        StoreError::StartedWithoutDistances { path, seeds } => Some(format!(
            "{}: layer {seeds} was started without its distances; resume it so \
             (--distances-up-to below {seeds}), or remove the folder {} to build the layer \
             from the start",
            path.display(),
            path.parent().unwrap_or(path).display()
        )),
        _ => None,
    };
    if let Some(e) = cause.downcast_ref::<StoreError>() {
        return started_without(e);
    }
    if let Some(e) = cause.downcast_ref::<BuildError>() {
        return match e {
            BuildError::TooManySeeds(n) => Some(format!(
                "--max-seeds {n} is beyond the {} seeds of the game",
                awari::MAX_SEEDS
            )),
            BuildError::ThreadCount(n) => Some(format!(
                "--threads {n} is out of range (1..={})",
                awari::build::MAX_THREADS
            )),
            BuildError::OverMemory { .. } => {
                Some(format!("{e}; lower --max-seeds or raise --memory-limit"))
            }
            // Transparent: the store error is not a cause of its own in the chain.
            BuildError::Store(s) => started_without(s),
            _ => None,
        };
    }
    #[cfg(feature = "mpi")]
    if let Some(awari::mpi::ClusterError::NoLauncher) = cause.downcast_ref() {
        return Some(
            "--mpi needs to be started by mpirun, e.g.: mpirun -np 4 awari build --mpi --max-seeds 20 --db DIR"
                .into(),
        );
    }
    None
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
