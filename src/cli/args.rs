//! The command line's arguments, as clap parses them: every value that names something
//! (rules, cycle rule, level, side, layers) arrives parsed, so a command never parses text
//! but its boards.

use super::layers::LayerRange;
use awari::game::Side;
use awari::search::Level;
use awari::{Rules, Tables};
use clap::builder::PossibleValue;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

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

/// How endless play is scored, which decides the tables that answer: a kind of tables of
/// the library, named as [`Tables::name`] names it (`share`, `bounds`, `own-row-first`,
/// `own-row-third`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cycles(pub Tables);

/// Every kind, in [`Tables::ALL`]'s order, for clap to list.
static EVERY_KIND: [Cycles; 4] = {
    let t = Tables::ALL;
    [Cycles(t[0]), Cycles(t[1]), Cycles(t[2]), Cycles(t[3])]
};

impl ValueEnum for Cycles {
    fn value_variants<'a>() -> &'a [Self] {
        &EVERY_KIND
    }

    // The values have no help: clap would list them with it and lay out every option of
    // the command on two lines; `--cycles` says what each means.
    fn to_possible_value(&self) -> Option<PossibleValue> {
        let value = PossibleValue::new(self.0.name());
        // `own-row`, the rule's own name, is what this option said before the tables were
        // called bounds: commands written then still work.
        Some(if self.0 == Tables::Bounds {
            value.alias("own-row")
        } else {
            value
        })
    }
}

/// The option a command needs to select tables of kind `tables` (with its leading space),
/// or nothing for the values, the default.
pub fn cycles_option(tables: Tables) -> String {
    if tables == Tables::default() {
        String::new()
    } else {
        format!(" --cycles {tables}")
    }
}

/// Where the tables are and which rule set.
#[derive(Args, Debug, Clone)]
pub struct DbArgs {
    /// Database folder (one subfolder per rules preset).
    #[arg(long, default_value = "data/db")]
    pub db: PathBuf,
    /// Rules preset: awari (grand slam forbidden unless forced), abapa (grand slam captures
    /// nothing), grand-slam-captures.
    #[arg(long, default_value = "awari")]
    pub rules: Rules,
}

/// The tables a command reads or builds: the database, and which kind of table.
#[derive(Args, Debug, Clone)]
pub struct TableArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// How endless play is scored: share (the seeds left are shared equally: the values),
    /// bounds (each side keeps its own row: the tables of guaranteed bounds, low and high,
    /// under DB/own-row/), own-row-first or own-row-third (each side keeps its own row when
    /// a position occurs for the second, or the third, time since the last capture: the
    /// exact values, beside the bounds, and a proof search with the game's history).
    #[arg(long, value_enum, default_value_t = Cycles(Tables::Values))]
    pub cycles: Cycles,
    /// Nodes a proof search of the own-row values may visit: per position in a build, per
    /// position and per move in probe, start, pv, analyze and play. Own-row values only.
    #[arg(long, value_name = "NODES", default_value_t = awari::build::DEFAULT_SEARCH_BUDGET)]
    pub search_budget: u64,
}

impl TableArgs {
    /// The kind of tables `--cycles` selects.
    pub fn kind(&self) -> Tables {
        self.cycles.0
    }
}

/// What `build` builds and how it writes, for either kind of table.
#[derive(Args, Debug, Clone)]
pub struct BuildArgs {
    /// Build layers 0..=N (N seeds on the board).
    #[arg(long, default_value_t = 12)]
    pub max_seeds: u32,
    /// Worker threads (default: one per core).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=awari::build::MAX_THREADS as i64))]
    pub threads: Option<u16>,
    /// Refuse to start if the largest layer would need more memory than this (GiB).
    /// Default: the machine's physical memory.
    #[arg(long, allow_hyphen_values = true)]
    pub memory_limit: Option<f64>,
    /// Positions per compressed block [default: 16384 for zstd and ranks, 4096 for
    /// --codec context, whose blocks take longer to decode]
    #[arg(long)]
    pub block_size: Option<u32>,
    /// zstd compression level of the blocks (1..=22).
    #[arg(long, default_value_t = 9, value_parser = clap::value_parser!(i32).range(1..=22))]
    pub zstd_level: i32,
    /// How the blocks are coded: `zstd` (format version 1); `context`, the values only, a
    /// context model of the layer with an ANS coder (format version 2, about 11% smaller);
    /// `ranks`, the values or the pairs (bounds, own-row values), each value's rank under
    /// such a model in zstd blocks (format version 2, about 10% smaller, decoded about as
    /// fast as zstd). A layer the lean pass builds is written with zstd, then coded again
    /// (read twice, written aside, renamed); both refuse --mpi. (`dont-cares` is written
    /// by `awari recode` alone.)
    #[arg(long, value_enum, default_value_t = CodecArg::Zstd)]
    pub codec: CodecArg,
    /// No progress bars.
    #[arg(long, short)]
    pub quiet: bool,
    /// Search again the positions left open in these layers (a..b, a..=b or n) already
    /// built, from the intervals they hold, with --search-budget, and write a layer again
    /// if it narrows: a budget raised where it is needed, without building the layers
    /// anew. Own-row values only.
    #[arg(long, value_name = "LAYERS")]
    pub refine: Option<LayerRange>,
}

/// Which pass builds the values, and the lean pass's settings: for the values only (the
/// bounds have one pass, in memory, and refuse these rather than ignore them).
#[derive(Args, Debug, Clone)]
pub struct LeanArgs {
    /// Build every layer with the lean pass: half a byte a position in memory, the lower
    /// layers read from their files, checkpoints on disk. Default: the in-memory pass
    /// while a layer fits under --memory-limit, the lean pass above it. Values only.
    #[arg(long, conflicts_with = "in_memory")]
    pub lean: bool,
    /// Build every layer with the in-memory pass. Values only.
    #[arg(long)]
    pub in_memory: bool,
    /// The lean pass's buffer for frontiers and lookups, in MiB (default: 0.12 bytes a
    /// position, at least 16); it spills to disk when full. Values only.
    #[arg(long)]
    pub lean_buffer_mib: Option<f64>,
    /// Minutes between the lean pass's checkpoints: one is saved after the exits pass, then
    /// after a round or a threshold once this long has passed since the last; 0 saves after
    /// every round. Default: 5, stretched to 50 times the last save when that is longer
    /// (a big layer's checkpoint takes tens of seconds), so saving costs about 2% of the
    /// time at most. One is also saved after a threshold when the files only the last one
    /// names take an eighth of a byte a position, and after the last threshold. Values
    /// only.
    #[arg(long)]
    pub checkpoint_minutes: Option<f64>,
    /// One rank of an MPI job: run as `mpirun -np P awari build --mpi …`; the ranks share
    /// every layer (the lean pass) and rank 0 writes the files. Needs a build with
    /// `--features mpi`. Values only.
    #[arg(long, conflicts_with = "in_memory")]
    pub mpi: bool,
    /// Where the lean pass keeps its scratch files (default: under the database folder);
    /// with --mpi on a cluster, a disk local to each node. Values only.
    #[arg(long)]
    pub scratch: Option<std::path::PathBuf>,
    /// Build the distances of layers 0..=N only: the layers above keep their values alone
    /// (about 0.4 bytes a position less on disk, and less scratch), and a principal
    /// variation through them steers best moves by a bounded search. Layers already built
    /// are left as they are. Values only.
    #[arg(long, value_name = "N")]
    pub distances_up_to: Option<u32>,
}

impl LeanArgs {
    /// The first of these options that was given, for the bounds' build to refuse.
    pub fn first_given(&self) -> Option<&'static str> {
        [
            (self.lean, "--lean"),
            (self.in_memory, "--in-memory"),
            (self.mpi, "--mpi"),
            (self.lean_buffer_mib.is_some(), "--lean-buffer-mib"),
            (self.scratch.is_some(), "--scratch"),
            (self.distances_up_to.is_some(), "--distances-up-to"),
            (self.checkpoint_minutes.is_some(), "--checkpoint-minutes"),
        ]
        .into_iter()
        .find(|&(given, _)| given)
        .map(|(_, flag)| flag)
    }
}

/// `--computer`: a side, or nobody (two people at one keyboard).
#[derive(Clone, Copy, Debug)]
pub struct Computer(pub Option<Side>);

/// Parses `--computer`: a side as [`Side`] reads it, or `none` (also `nobody`); the error
/// offers only what the flag accepts.
fn parse_computer(text: &str) -> Result<Computer, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "none" | "nobody" => Ok(Computer(None)),
        _ => text
            .parse::<Side>()
            .map(|side| Computer(Some(side)))
            .map_err(|_| "expected south, north or none".to_string()),
    }
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Build every missing layer up to --max-seeds (resumes an interrupted build), of the
    /// values or, with --cycles bounds, of the bounds.
    Build {
        #[command(flatten)]
        tables: TableArgs,
        #[command(flatten)]
        build: BuildArgs,
        #[command(flatten)]
        lean: LeanArgs,
    },
    /// Value, verdict and every legal move with its value (with --cycles bounds: low, high
    /// and every move's pair). Pits are named 1..6 from the mover's left, in sowing order.
    Probe {
        #[command(flatten)]
        tables: TableArgs,
        /// The board (omit with --batch).
        #[arg(allow_hyphen_values = true)]
        board: Option<String>,
        /// Seeds already captured by the side to move and by the opponent, e.g. 20,12:
        /// turns the value into the game's outcome. Values only.
        #[arg(long, value_name = "MOVER,OPPONENT")]
        captured: Option<String>,
        /// One JSON object (one per line with --batch).
        #[arg(long)]
        json: bool,
        /// Own-row values: the moves played from the board before the position to probe
        /// (pits 1..6, e.g. "3 1 6 2"): the position they reach is probed, with the
        /// positions since their last capture as its history.
        #[arg(long, value_name = "PITS", conflicts_with = "batch")]
        moves: Option<String>,
        /// Read one board per line from stdin; print one line per board: the value, then
        /// the best pits ("3 best 1,4"; "-5 game-over" when the game is over; with
        /// --cycles bounds, low and high first: "-1 2 best 3"). With --cycles own-row-...:
        /// each board with an empty history, from the tables alone (no search), low and
        /// high first: "0 0 best 1,6" (the moves proved to keep an exact value), "-2 4
        /// best 3" (an interval: the largest proved low), "0 0 unproved" (exact, but no
        /// move is proved to keep it without a search: probe the board alone; see
        /// docs/method.md, "Own-row values"). A bad line (or one over
        /// 1 KiB) prints "error: line N: ..." (with --json, {"line": N, "error": "..."})
        /// and the run goes on; the exit code is then non-zero. A blank line gets a blank
        /// line, so output lines stay aligned with input lines.
        #[arg(long, conflicts_with = "board")]
        batch: bool,
    },
    /// The principal variation from a board: best moves until the game ends or a position
    /// repeats (own-row values: the first best move proved with the line's history, until
    /// the value is not proved). Among equal moves the winner takes the fastest way to its
    /// capture and the loser the slowest (by the stored distances), then the lowest pit (of
    /// the bounds: the largest low, then the largest high, then the lowest pit).
    Pv {
        #[command(flatten)]
        tables: TableArgs,
        #[arg(allow_hyphen_values = true)]
        board: String,
        /// Own-row values: the moves played from the board before the line starts (pits
        /// 1..6, e.g. "3 1 6 2"), which give its history, as probe's --moves.
        #[arg(long, value_name = "PITS")]
        moves: Option<String>,
        /// Stop after this many moves.
        #[arg(long, default_value_t = 200)]
        max_plies: usize,
    },
    /// Re-write the values of built layers with another codec or block size: the same
    /// values, each file written aside and renamed over the old one. `--codec context`
    /// gives version 2 files about 11% smaller; `--codec ranks` about 10% smaller, and
    /// decoded as fast as zstd; `--codec dont-cares` about a third smaller (the layers a
    /// capture reaches are held in memory, one byte a position); `--codec zstd` gives
    /// back the version 1 files, byte for byte. The distances are left as they are. With
    /// --cycles bounds, own-row-first or own-row-third, the pairs of those tables, with
    /// `--codec ranks` or `zstd`: a pair on disk stays whole whenever the run stops, and
    /// a layer already in ranks is left as it is.
    Recode {
        #[command(flatten)]
        db: DbArgs,
        /// The kind of tables to re-write (as --cycles of the other commands).
        #[arg(long, value_enum, default_value_t = Cycles(Tables::Values))]
        cycles: Cycles,
        /// Layers to re-write, e.g. 20..24 (inclusive); default: every layer present.
        #[arg(long)]
        layers: Option<LayerRange>,
        /// How the values' blocks are coded.
        #[arg(long, value_enum)]
        codec: CodecArg,
        /// Positions per block [default: 16384 for zstd, ranks and dont-cares, 4096 for
        /// context]
        #[arg(long)]
        block_size: Option<u32>,
        /// zstd compression level of the blocks (1..=22), for --codec zstd.
        #[arg(long, default_value_t = 9, value_parser = clap::value_parser!(i32).range(1..=22))]
        zstd_level: i32,
    },
    /// Per layer: positions, wins / draws / losses for the side to move, bytes on disk
    /// (of the bounds: positions, exact positions, bytes).
    Stats {
        #[command(flatten)]
        tables: TableArgs,
        /// Layers to report, e.g. 0..24 (inclusive) or 12; default: every layer present.
        #[arg(long)]
        layers: Option<LayerRange>,
        /// Also the number of positions at every value. Values only.
        #[arg(long)]
        histogram: bool,
        /// One JSON document (an array, one object per layer).
        #[arg(long)]
        json: bool,
    },
    /// Check every block's checksum, then that every stored value equals the best over its
    /// legal moves, computed from the stored values (of the bounds: the same of each bound,
    /// and low ≤ high).
    Verify {
        #[command(flatten)]
        tables: TableArgs,
        /// Layers to check, e.g. 0..24 (inclusive); default: every layer present.
        #[arg(long)]
        layers: Option<LayerRange>,
        /// Check N positions of each layer, in runs drawn at random (seeded by the layer),
        /// in batches under 100 MB, instead of every position with every layer in memory:
        /// for layers too large to hold (a layer of at most N positions is checked whole).
        /// Every kind of table.
        #[arg(long)]
        sample: Option<u64>,
    },
    /// Value and best first moves of the standard opening with K seeds in every pit.
    Start {
        #[command(flatten)]
        tables: TableArgs,
        #[arg(long, default_value_t = 1)]
        seeds_per_pit: u8,
    },
    /// The legal moves of a board, what each captures and the board it leaves (no database).
    Moves {
        #[arg(long, default_value = "awari")]
        rules: Rules,
        #[arg(allow_hyphen_values = true)]
        board: String,
    },
    /// The Awari Oracle in a local web page: play against the computer at five levels, see
    /// the value of every move, edit positions. Also a JSON API (see the README). It
    /// answers from the values, and /api/position and the page also under the own-row rule
    /// (cycles=own-row-first or own-row-third, with the moves played since the start).
    Serve {
        /// Database folder (one subfolder per rules preset).
        #[arg(long, default_value = "data/db")]
        db: PathBuf,
        /// Port to listen on (0: any free port, printed at start).
        #[arg(long, default_value_t = 8080)]
        port: u16,
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1")]
        bind: String,
        /// Time the search may take for a position above the built layers (milliseconds, 1 to
        /// 3600000).
        #[arg(long, default_value_t = 2000)]
        think_ms: u64,
    },
    /// Play against the computer in the terminal: type a pit 1..6 (from your left) and Enter;
    /// u undoes, h shows every move's value, q quits. Prints the game's move list at the end.
    /// It plays from the values; with --cycles own-row-first or own-row-third, the best move
    /// proved with the game's history, and a repetition ends the game by that rule.
    Play {
        #[command(flatten)]
        tables: TableArgs,
        /// fair (often random), good, strong, expert or perfect (or 1..5); default strong.
        /// Under the own-row rule the computer plays perfectly as far as proved: perfect only.
        #[arg(long)]
        level: Option<Level>,
        /// The side the computer plays: north (the top row), south or none.
        #[arg(long, default_value = "north", value_parser = parse_computer)]
        computer: Computer,
        /// Start position, from the first mover's side (default: 4 seeds in every pit).
        #[arg(long, allow_hyphen_values = true)]
        start: Option<String>,
        /// Who moves first: south (the bottom row, you by default) or north.
        #[arg(long, default_value = "south")]
        first: Side,
        /// The computer's think time above the built layers (milliseconds, 1 to 3600000).
        #[arg(long, default_value_t = 2000)]
        think_ms: u64,
        /// Seed of the random choices (default: the clock).
        #[arg(long)]
        seed: Option<u64>,
    },
    /// Judge every move of a game: the value before it, the value of the move played, the
    /// best moves and the seeds it gave away. Reads the move-list format of the web page and
    /// of `awari play` (see the README) from FILE, or stdin when FILE is - or missing. It
    /// judges by the values, or with --cycles own-row-first or own-row-third by the own-row
    /// rule, each position with its history (the analysis ends at a repetition that ends the
    /// game).
    Analyze {
        #[command(flatten)]
        tables: TableArgs,
        /// The game's move list.
        file: Option<PathBuf>,
        /// Search time per position above the built layers (milliseconds, 1 to 3600000).
        #[arg(long, default_value_t = 1000)]
        think_ms: u64,
        /// One JSON document.
        #[arg(long)]
        json: bool,
    },
}

/// `--codec`: how the values' blocks are coded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum CodecArg {
    /// zstd blocks (format version 1).
    Zstd,
    /// A context model and an ANS coder (format version 2).
    Context,
    /// Values with don't-cares (format version 2): where a capture gives a position's
    /// value, the file keeps what codes cheapest, and a probe restores it from the layers
    /// below; each value stored as its rank under a context model, in zstd blocks. Only
    /// `awari recode` writes it.
    DontCares,
    /// Each value stored as its rank under a context model, in zstd blocks (format version
    /// 2): for values and for the pairs of bounds and own-row values, about 10% smaller
    /// than zstd, and read alone.
    Ranks,
}

impl CodecArg {
    /// The block size given, or this codec's default.
    pub(crate) fn block_size(self, given: Option<u32>) -> anyhow::Result<u32> {
        let size = given.unwrap_or(match self {
            CodecArg::Zstd | CodecArg::DontCares | CodecArg::Ranks => awari::store::DEFAULT_BLOCK,
            CodecArg::Context => awari::store::CONTEXT_BLOCK,
        });
        if size == 0 {
            anyhow::bail!("--block-size must be at least 1");
        }
        Ok(size)
    }
}

impl From<CodecArg> for awari::store::Codec {
    fn from(c: CodecArg) -> Self {
        match c {
            CodecArg::Zstd => awari::store::Codec::Zstd,
            CodecArg::Context => awari::store::Codec::Context,
            CodecArg::DontCares => awari::store::Codec::DontCares,
            CodecArg::Ranks => awari::store::Codec::Ranks,
        }
    }
}
