//! awari: exact endgame databases for Awari / Oware by retrograde analysis.
//!
//! A database holds, for every position with up to N seeds on the board, the seed
//! difference the side to move achieves from there with perfect play (its *value*; endless
//! play shares the seeds left equally). It is built layer by layer, one layer per number of
//! seeds on the board, and stored as compressed files that a probe reads one block at a
//! time. The design is written up in the repository's `docs/` folder (`docs/overview.md`).
//!
//! ```
//! use awari::build::{build, BuildOptions};
//! use awari::{Board, Database, Rules};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! // Layers 0..=8: every position with at most 8 seeds on the board (a fraction of a
//! // second). `Quiet` ignores the progress reports a command line would show.
//! build(&BuildOptions::new(dir.path(), Rules::AWARI, 8), &awari::solve::Quiet)?;
//!
//! let db = Database::open(dir.path(), Rules::AWARI)?;
//! let board: Board = "1 1 1 1 0 0 1 1 1 1 0 0".parse()?; // the mover's six pits first
//! let value = db.value(&board)?;
//! for m in db.best_moves(&board)? {
//!     // A best move is worth the position's value: what it captures, minus the value
//!     // of the child for the other side.
//!     assert_eq!(m.value, value);
//!     println!("pit {} captures {} value {:+}", m.pit + 1, m.captured, m.value);
//! }
//! // With the seeds each side has already captured, the value says who wins.
//! let outcome = db.outcome(&board, 20, 20)?;
//! println!("value {value:+}: {:?}", outcome.verdict);
//! # Ok(())
//! # }
//! ```
//!
//! # The pipeline
//!
//! One module a step:
//!
//! * [`board`]: a position, always seen from the side to move (parse, print, check);
//! * [`rules`]: the three rule presets, legal moves, sowing, captures, feeding, the grand
//!   slam and the end of the game;
//! * [`index`]: the perfect hash of a layer, a board's rank among the placements of its
//!   seeds and back (a program that keeps its own per-position data uses it);
//! * [`solve`]: the passes that give every position of a layer its value and distance
//!   from the layers below (in memory, or the lean pass for layers that do not fit), and
//!   the solvers of the bounds and of the own-row values;
//! * [`store`]: the kinds of tables ([`Tables`]) and their files ([`store::TableKind`]):
//!   header, checksummed zstd blocks, temporary name and rename, and what makes a layer
//!   complete;
//! * [`build`](mod@build): the driver, layer after layer: resume, memory and disk checks, the pass
//!   for each layer, the lock on the folder;
//! * [`probe`]: [`Database`], values, moves, best moves, principal variations, outcomes;
//! * [`search`]: alpha-beta above the built layers, its leaves in the tables, and the
//!   playing levels;
//! * [`verify`](mod@verify): an independent re-check of stored layers;
//! * [`game`]: games in progress: the move-list format and the end-of-game rules of a real
//!   game;
//! * the bounds, beside the values in [`build`](mod@build), [`probe`] and [`verify`](mod@verify): the tables of
//!   the rule "an endless game ends with each side keeping its own row", the pair of
//!   bounds each side can guarantee ([`BoundsDatabase`]);
//! * the own-row values, beside the bounds ([`build::Tables::OwnRow`],
//!   [`BoundsDatabase::own_row`], an [`OwnRowTables`]): under the same rule, the value of a
//!   position with an empty history, exact where a proof search finished, and the value of
//!   a position after its history ([`own_row_history`], [`OwnRowTables::value`]), by the
//!   same search from the tables;
//! * `mpi` (feature `mpi`): the lean pass shared by the ranks of an MPI job.
//!
//! Most programs need only the crate root: [`build()`], [`Database`], [`BoundsDatabase`],
//! [`analyse`], [`verify()`](verify::verify). [`index`], [`solve`] and [`store`] are the
//! floors under them, public and documented for programs that work at that level (a
//! training pipeline that ranks boards itself, a tool that reads a table file, a test that
//! runs a pass against its own reference); what a build, a probe or an observer needs from
//! them is also re-exported at the root ([`LeanOptions`], [`SolveObserver`], [`Quiet`],
//! [`StoreError`], [`Tables`], …).
//!
//! # Errors
//!
//! Every fallible call returns a typed error ([`BoardError`], [`RulesError`],
//! [`ProbeError`], [`StoreError`], [`build::BuildError`], [`verify::VerifyError`],
//! [`game::GameError`]), documented in the function's `# Errors`
//! section. A message says what is wrong (which layer is missing, which file is damaged
//! and how), not what to type: the `awari` command line adds that advice. Nothing in the
//! library panics on user input or on a bad file, prints, or ends the process. A long
//! build can be stopped from another thread through
//! [`solve::SolveObserver::cancelled`].
//!
//! # Features
//!
//! * `cli` (default): the `awari` binary and what only it needs (clap, anyhow, serde_json,
//!   indicatif, ctrlc, httparse). A program that uses the library alone turns it off
//!   (`default-features = false`); the library needs only rayon, memmap2, zstd, thiserror,
//!   xxhash-rust and, on Unix, libc.
//! * `mpi`: `awari build --mpi` and the `mpi` module, through the `mpi` crate (needs Open
//!   MPI and libclang to build).
//!
//! # Platform support
//!
//! Built and tested on Linux (x86-64). The library uses `statvfs` (through libc) for the
//! free disk space a build checks before each layer, and positioned reads (`pread`) for
//! blocks: both are Unix calls. Elsewhere the disk check is skipped (a full disk is then a
//! write error, which removes the layer's temporary files) and Windows reads blocks with
//! `seek_read`; these fallbacks have not been built or tested on those targets. The minimum
//! Rust version is 1.89 (`File::try_lock`, for the lock on a database folder).

#![warn(missing_docs, missing_debug_implementations)]

pub mod board;
pub mod build;
pub mod game;
pub mod index;
mod memory;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod probe;
pub mod rules;
pub mod search;
pub mod solve;
pub mod store;
pub mod verify;

pub use board::{Board, BoardError, MAX_SEEDS, PITS, ROW};
pub use build::{build, BuildError, BuildObserver, BuildOptions, LayerReport, PassChoice};
pub use game::{Game, GameError, Side};
pub use probe::{
    own_row_history, Bounds, BoundsDatabase, Database, MoveBounds, MoveValue, Outcome,
    OwnRowAnswer, OwnRowMove, OwnRowTables, PrincipalVariation, ProbeError, Proof, PvEnd, PvStep,
    Verdict,
};
pub use rules::{GrandSlam, Move, MoveList, Repetition, Rules, RulesError, Turn};
pub use search::{analyse, Analysis, Level, Limits};
pub use solve::lean::{LeanObserver, LeanOptions};
pub use solve::{Phase, Quiet, SolveObserver, ThresholdCounts};
pub use store::StoreError;
pub use store::{Tables, TablesError};
pub use verify::{
    check_own_row, check_own_row_sampled, verify, verify_bounds, verify_bounds_sampled,
    BoundsCheck, LayerCheck, OwnRowLayerCheck, VerifyError,
};
