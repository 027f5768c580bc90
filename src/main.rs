//! The `awari` command line.

// Every line goes through `cli::output`, which never panics on a closed or full stream.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod cli;

use clap::error::ErrorKind;
use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = match cli::Cli::try_parse() {
        Ok(args) => args,
        Err(e) => {
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                // On a terminal clap prints it in colour. Elsewhere it is written here:
                // clap drops a failed write, and `--help > /dev/full` exited 0 with nothing
                // written.
                if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
                    let _ = e.print();
                } else {
                    cli::show_raw(&e.render().to_string());
                }
                return ExitCode::SUCCESS;
            }
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                // `awari` alone: the help, on stderr, and a usage error's exit code.
                cli::tell_raw(&e.render().to_string());
                return ExitCode::from(2);
            }
            // Every error is one line: clap's first line, which names the problem (its
            // usage and tip lines follow on later lines, and `--help` has them all), cut
            // short if the value it quotes is huge.
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("bad arguments");
            let first = first.strip_prefix("error: ").unwrap_or(first);
            cli::tell_line(&format!(
                "error: {} (see awari --help)",
                cli::clip_line(first)
            ));
            return ExitCode::from(2);
        }
    };
    match cli::run(args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            // One line, the whole cause chain.
            cli::tell_line(&format!("error: {}", cli::error_line(&e)));
            ExitCode::FAILURE
        }
    }
}
