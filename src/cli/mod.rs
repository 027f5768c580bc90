//! The command line: its arguments (clap, in `args`) and one module per command, each a
//! thin shell over the library that says the answer. A command that answers from more than
//! one kind of tables (`--cycles`) has one `run` that matches the kind once and hands it to
//! that kind's function (or, for `probe` and `analyze`, its module); the modules they share
//! say one thing each (the JSON shapes, the own-row answers in text, the Oracle, the batch
//! loop, input and output) and import no command.

mod analyze;
mod api;
mod args;
mod batch;
mod build;
mod input;
mod json;
mod layers;
mod moves;
mod oracle;
mod output;
mod own_row_text;
mod play;
mod probe;
mod progress;
mod pv;
mod recode;
mod serve;
mod start;
mod stats;
mod text;
mod verify;

pub use args::Cli;
pub use output::{clip_line, error_line, show_raw, tell_line, tell_raw};

use anyhow::Result;
use args::Command;

/// Runs the command; `Ok(false)` means it ran but found problems (exit code 1). Each error
/// is one line: `main` prints it and exits non-zero.
pub fn run(cli: Cli) -> Result<bool> {
    match cli.command {
        Command::Build {
            tables,
            build,
            lean,
        } => build::run(&tables, &build, &lean),
        Command::Probe {
            tables,
            board,
            captured,
            json,
            batch,
            moves,
        } => probe::run(
            &tables,
            probe::ProbeRequest {
                board,
                captured,
                json,
                batch,
                moves,
            },
        ),
        Command::Pv {
            tables,
            board,
            moves,
            max_plies,
        } => pv::run(&tables, &board, moves.as_deref(), max_plies),
        Command::Recode {
            db,
            cycles,
            layers,
            codec,
            block_size,
            zstd_level,
        } => recode::run(&db, cycles.0, layers, codec, block_size, zstd_level),
        Command::Stats {
            tables,
            layers,
            histogram,
            json,
        } => stats::run(&tables, layers, histogram, json),
        Command::Verify {
            tables,
            layers,
            sample,
        } => verify::run(&tables, layers, sample),
        Command::Start {
            tables,
            seeds_per_pit,
        } => start::run(&tables, seeds_per_pit),
        Command::Moves { rules, board } => moves::run(rules, &board),
        Command::Serve {
            db,
            port,
            bind,
            think_ms,
        } => serve::run(&db, &bind, port, think_ms),
        Command::Play {
            tables,
            level,
            computer,
            start,
            first,
            think_ms,
            seed,
        } => play::run(
            &tables,
            level,
            computer.0,
            start.as_deref(),
            first,
            think_ms,
            seed,
        ),
        Command::Analyze {
            tables,
            file,
            think_ms,
            json,
        } => analyze::run(&tables, file.as_deref(), think_ms, json),
    }
}
