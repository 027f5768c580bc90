//! The command line: argument parsing (clap) and one function per subcommand.

mod commands;
mod layers;
mod output;
mod progress;

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

pub use commands::run;
pub use layers::LayerRange;
pub use output::clip_line;

/// Exact endgame databases for Awari / Oware.
///
/// Boards are 12 pit counts seen from the side to move: its six pits first (pits 1..6, in
/// sowing order, from its left), then the opponent's six (again in sowing order), separated
/// by spaces, commas, '/' or '|'. Values are the seed difference the side to move achieves
/// from now on with perfect play (endless play shares the seeds left equally).
#[derive(Parser, Debug)]
#[command(name = "awari", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Args, Debug, Clone)]
pub struct DbArgs {
    /// Database folder (one subfolder per rules preset).
    #[arg(long, default_value = "data/db")]
    pub db: PathBuf,
    /// Rules preset: awari (grand slam forbidden unless forced), abapa (grand slam captures
    /// nothing), grand-slam-captures.
    #[arg(long, default_value = "awari")]
    pub rules: String,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Build every missing layer up to --max-seeds (resumes an interrupted build).
    Build {
        #[command(flatten)]
        db: DbArgs,
        /// Build layers 0..=N (N seeds on the board).
        #[arg(long, default_value_t = 12)]
        max_seeds: u32,
        /// Worker threads (default: one per core).
        #[arg(long, value_parser = clap::value_parser!(u16).range(1..=awari::build::MAX_THREADS as i64))]
        threads: Option<u16>,
        /// Refuse to start if the largest layer would need more memory than this (GiB).
        /// Default: the machine's physical memory.
        #[arg(long, allow_hyphen_values = true)]
        memory_limit: Option<f64>,
        /// Positions per compressed block.
        #[arg(long, default_value_t = awari::store::DEFAULT_BLOCK)]
        block_size: u32,
        /// zstd compression level of the blocks (1..=22).
        #[arg(long, default_value_t = 9, value_parser = clap::value_parser!(i32).range(1..=22))]
        zstd_level: i32,
        /// No progress bars.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Value, verdict and every legal move with its value. Pits are named 1..6 from the
    /// mover's left, in sowing order.
    Probe {
        #[command(flatten)]
        db: DbArgs,
        /// The board (omit with --batch).
        #[arg(allow_hyphen_values = true)]
        board: Option<String>,
        /// Seeds already captured by the side to move and by the opponent, e.g. 20,12:
        /// turns the value into the game's outcome.
        #[arg(long, value_name = "MOVER,OPPONENT")]
        captured: Option<String>,
        /// One JSON object (one per line with --batch).
        #[arg(long)]
        json: bool,
        /// Read one board per line from stdin; print one line per board: the value, then
        /// the best pits ("3 best 1,4"; "-5 game-over" when the game is over). A bad line
        /// prints "error: line N: ..." and the run goes on; the exit code is then non-zero.
        /// A blank line gets a blank line, so output lines stay aligned with input lines.
        #[arg(long, conflicts_with = "board")]
        batch: bool,
    },
    /// The principal variation from a board: best moves until the game ends or a position
    /// repeats. Among equal moves the winner takes the fastest way to its capture and the
    /// loser the slowest (by the stored distances), then the lowest pit.
    Pv {
        #[command(flatten)]
        db: DbArgs,
        #[arg(allow_hyphen_values = true)]
        board: String,
        /// Stop after this many moves.
        #[arg(long, default_value_t = 200)]
        max_plies: usize,
    },
    /// Per layer: positions, wins / draws / losses for the side to move, bytes on disk.
    Stats {
        #[command(flatten)]
        db: DbArgs,
        /// Layers to report, e.g. 0..24 (inclusive) or 12; default: every layer present.
        #[arg(long)]
        layers: Option<LayerRange>,
        /// Also the number of positions at every value.
        #[arg(long)]
        histogram: bool,
        /// One JSON document (an array, one object per layer).
        #[arg(long)]
        json: bool,
    },
    /// Check every block's checksum, then that every stored value equals the best over its
    /// legal moves, computed from the stored values.
    Verify {
        #[command(flatten)]
        db: DbArgs,
        /// Layers to check, e.g. 0..24 (inclusive); default: every layer present.
        #[arg(long)]
        layers: Option<LayerRange>,
    },
    /// Value and best first moves of the standard opening with K seeds in every pit.
    Start {
        #[command(flatten)]
        db: DbArgs,
        #[arg(long, default_value_t = 1)]
        seeds_per_pit: u8,
    },
    /// The legal moves of a board, what each captures and the board it leaves (no database).
    Moves {
        #[arg(long, default_value = "awari")]
        rules: String,
        #[arg(allow_hyphen_values = true)]
        board: String,
    },
}
