//! The `awari` command line.

mod cli;

use clap::error::ErrorKind;
use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = match cli::Cli::try_parse() {
        Ok(args) => args,
        Err(e) => {
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            // Every error is one line: clap's first line, which names the problem (its
            // usage and tip lines follow on later lines, and `--help` has them all).
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("bad arguments");
            let first = first.strip_prefix("error: ").unwrap_or(first);
            eprintln!("error: {first} (see awari --help)");
            return ExitCode::from(2);
        }
    };
    match cli::run(args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            // One line, the whole cause chain.
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
