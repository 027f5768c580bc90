//! The build driver: solve layers in order, write each one, skip the ones already built;
//! one layer loop for every kind of tables ([`Tables`]): the values (with their
//! distances, `values.rs`), the bounds and the own-row values (a pair a position,
//! `pairs.rs`).

mod pairs;
mod prepare;
mod values;

pub use crate::store::Tables;
pub use pairs::bounds_memory_needed;
pub(crate) use prepare::prepare;
pub use prepare::{lock_tables, peak_rss, physical_memory};

#[cfg(feature = "mpi")]
use prepare::prepare_pool;

use crate::index;
use crate::rules::Rules;
use crate::solve::lean::{self, LeanObserver, LeanOptions};
use crate::solve::{self, WORK_BYTES_PER_POSITION};
use crate::store::{self, Incomplete, LayerState, LayerSummary, StoreError, WriteOptions};
use std::path::PathBuf;
use std::time::Instant;

/// The most worker threads a build accepts: far more than any machine this runs on has
/// cores, far fewer than would exhaust the system's threads.
pub const MAX_THREADS: usize = 1024;

/// The zstd level of the distances files, or the values' level if lower. Measured on
/// layer 20 (docs/measurements.md): level 3 compresses the rounds almost as well as level 9
/// in a fraction of the time, and the distances are read far less often than the values.
const DISTANCES_ZSTD_LEVEL: i32 = 3;

/// What to build.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// The database folder (one subfolder per rule set).
    pub db: PathBuf,
    /// The rule set.
    pub rules: Rules,
    /// Which tables: the values, or the bounds (under [`store::bounds_dir`]).
    pub tables: Tables,
    /// Build layers `0..=max_seeds`.
    pub max_seeds: u32,
    /// Worker threads (None: rayon's default, one per core).
    pub threads: Option<usize>,
    /// Refuse a layer whose working memory would exceed this many bytes.
    pub memory_limit: Option<u64>,
    /// How the files are written.
    pub write: WriteOptions,
    /// Which pass builds the layers of the values. The bounds have one pass, in memory:
    /// [`PassChoice::Lean`] is refused for them.
    pub pass: PassChoice,
    /// How the lean pass uses memory and checkpoints (the values only: no bounds layer is
    /// built by the lean pass).
    pub lean: LeanOptions,
    /// The layers above this one are built without their distances (values only): their
    /// distances file keeps no entries ([`crate::store::LayerFile::keeps_entries`]), which
    /// saves about 0.4 bytes a position on disk and the rounds in the lean pass's scratch
    /// files. A principal variation through such a layer plays best moves and steers
    /// them by a bounded search instead ([`crate::Database::principal_variation`]). None:
    /// every layer keeps its distances. A layer already built is left as it is.
    pub distances_up_to: Option<u32>,
    /// Nodes each proof search of the own-row values may visit ([`Tables::OwnRow`]); a
    /// position whose search runs out keeps the interval it proved.
    pub search_budget: u64,
    /// Own-row values only: the layers of this range already on disk are searched again,
    /// from the intervals they hold, with [`BuildOptions::search_budget`], and written
    /// again if anything narrows (a layer built with a smaller budget, or over lower
    /// layers that were less exact then). None: a layer on disk is read back as it is.
    pub refine: Option<std::ops::RangeInclusive<u32>>,
}

/// The default of [`BuildOptions::search_budget`].
pub const DEFAULT_SEARCH_BUDGET: u64 = 100_000;

/// Which pass builds a layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PassChoice {
    /// The in-memory pass while the layer fits under the memory limit
    /// ([`memory_needed`]), the lean pass above it.
    #[default]
    Auto,
    /// Always the in-memory pass: every lower layer in memory, two bytes a position.
    InMemory,
    /// Always the lean pass ([`crate::solve::lean`]): half a byte a position and a
    /// buffer, the lower layers read from their files.
    Lean,
}

/// The pass a layer is built with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// Every lower layer in memory.
    InMemory,
    /// Lower layers from their files, the state in nibbles.
    Lean,
}

/// What happened to one layer.
#[derive(Clone, Debug)]
pub struct LayerReport {
    /// The layer: seeds on the board.
    pub seeds: u32,
    /// Positions in the layer.
    pub positions: u64,
    /// False when the layer was already on disk.
    pub built: bool,
    /// Wall time spent on the layer (solving and writing, or checking).
    pub seconds: f64,
    /// Bytes of its values file (of a bounds layer: of its two files).
    pub bytes: u64,
    /// Its value histogram (of a bounds layer: the histogram of its low bounds).
    pub summary: LayerSummary,
    /// Of a bounds layer, the positions whose low equals their high; `None` for values.
    pub exact: Option<u64>,
    /// Of an own-row layer built here, what its searches took and gave.
    pub searched: Option<crate::solve::own_row::OwnRowCounts>,
}

impl BuildOptions {
    /// Layers `0..=max_seeds` of `rules` into `db`, with one thread per core, the
    /// machine's memory as the limit, and the default file layout.
    pub fn new(db: impl Into<PathBuf>, rules: Rules, max_seeds: u32) -> BuildOptions {
        BuildOptions {
            db: db.into(),
            rules,
            tables: Tables::Values,
            max_seeds,
            threads: None,
            memory_limit: None,
            write: WriteOptions::default(),
            pass: PassChoice::Auto,
            lean: LeanOptions::default(),
            distances_up_to: None,
            search_budget: DEFAULT_SEARCH_BUDGET,
            refine: None,
        }
    }

    /// Whether layer `n` is built with its distances ([`BuildOptions::distances_up_to`]).
    pub fn keeps_distances(&self, n: u32) -> bool {
        self.distances_up_to.is_none_or(|top| n <= top)
    }
}

/// What a build reports while it runs; every method has an empty default. The calls of
/// [`crate::solve::SolveObserver`] come from worker threads.
pub trait BuildObserver: LeanObserver {
    /// Layer `seeds` is about to be built (it was missing).
    fn layer_started(&self, _seeds: u32, _positions: u64) {}
    /// The pass chosen for layer `seeds`, and the memory the in-memory pass would need
    /// for it against the limit (bytes), when the choice was automatic.
    fn pass_chosen(&self, _seeds: u32, _pass: Pass, _in_memory_need: u64, _limit: Option<u64>) {}
    /// Layer `seeds` has its values on disk but is not complete (`why`): it is built again.
    fn layer_incomplete(&self, _seeds: u32, _why: &Incomplete) {}
    /// The own-row values' lean pass left `open` positions of layer `seeds` open, and the
    /// in-memory pass, which fits, builds the layer again to search them.
    fn lean_left_open(&self, _seeds: u32, _open: u64) {}
    /// Layer `seeds` is done: built, or found on disk and checked.
    fn layer_done(&self, _report: &LayerReport) {}
}

impl BuildObserver for solve::Quiet {}

/// Why a build stopped.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// More seeds than the game has.
    #[error("a build up to {0} seeds is beyond the 48 seeds of the game")]
    TooManySeeds(u32),
    /// A layer larger than the solver handles.
    #[error("layer {seeds} is beyond what this solver builds (at most {limit} seeds)")]
    TooLarge {
        /// The layer asked for.
        seeds: u32,
        /// The largest layer the solver builds.
        limit: u32,
    },
    /// The largest layer would need more memory than allowed (refused before any work).
    #[error("layer {seeds} needs about {} of memory to build, over the limit of {}", size_text(*need_gib), size_text(*limit_gib))]
    OverMemory {
        /// The layer.
        seeds: u32,
        /// Its estimated need ([`memory_needed`]).
        need_gib: f64,
        /// The limit.
        limit_gib: f64,
    },
    /// A layer file on disk is damaged: it must be removed and rebuilt. The message names
    /// the file, says what is wrong with it (the system's reason included) and one remedy;
    /// [`std::error::Error::source`] is the store's error.
    #[error("{}", damaged_text(.0))]
    Damaged(#[source] StoreError),
    /// A file could not be read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The thread pool could not start.
    #[error("cannot start {0} worker threads: {1}")]
    Threads(usize, String),
    /// A thread count out of range.
    #[error("{0} worker threads is out of range (1..={MAX_THREADS})")]
    ThreadCount(usize),
    /// Not enough free disk space for a layer (refused before it starts).
    #[error("layer {seeds} needs about {} of free disk space in {}, {} are free; free some space or build elsewhere", size_text(*need_gib), dir.display(), size_text(*free_gib))]
    DiskFull {
        /// The layer.
        seeds: u32,
        /// The folder.
        dir: PathBuf,
        /// Estimated need.
        need_gib: f64,
        /// Free space.
        free_gib: f64,
    },
    /// Another build, or a recode, holds the rule set's folder.
    #[error("{} is in use by another build or recode ({holder}); wait for it to finish or stop it", dir.display())]
    Locked {
        /// The folder.
        dir: PathBuf,
        /// Who holds it, as the lock file says.
        holder: String,
    },
    /// The observer asked the build to stop ([`crate::solve::SolveObserver::cancelled`]).
    #[error("the build was stopped while building layer {seeds}; layers below it are whole on disk, and the same build resumes at layer {seeds}")]
    Cancelled {
        /// The layer that was being built (nothing of it was written).
        seeds: u32,
    },
    /// A checkpoint of the layer lies in the scratch folder of a build given another
    /// `--scratch` (as the note in the rule set's folder says): built here, it would be
    /// abandoned, and its folder left behind.
    #[error("layer {seeds} has a checkpoint in {} (a build given --scratch {}); build with --scratch {} to resume from it, or remove the folder {} to build the layer from the start", dir.display(), root.display(), root.display(), dir.display())]
    ScratchElsewhere {
        /// The layer.
        seeds: u32,
        /// The `--scratch` folder of the build that saved the checkpoint.
        root: PathBuf,
        /// The layer's scratch folder under it, which holds the checkpoint.
        dir: PathBuf,
    },
    /// The lean pass asked for the bounds, which have one pass, in memory (or an MPI build
    /// of a pair table).
    #[error("the bounds have one pass, in memory; the lean pass builds the values and the own-row values (in one process)")]
    LeanBounds,
    /// [`BuildOptions::refine`] asked for tables other than the own-row values (the others
    /// are exact, or bounds that no budget narrows).
    #[error("only the own-row values are searched again")]
    RefineNotOwnRow,
    /// [`BuildOptions::refine`] asked for a layer that the in-memory pass, which runs the
    /// searches, cannot hold under the memory limit (or above its 25 seeds).
    #[error("layer {seeds} would be searched again in memory, which does not fit (the in-memory own-row pass holds layers up to 25 seeds, under --memory-limit)")]
    RefineOverMemory {
        /// The layer.
        seeds: u32,
    },
    /// The lock file could not be created or locked.
    #[error("cannot lock {}", path.display())]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// A size given in GiB, in the unit that shows it best: "3.0 MiB", not "0.00 GiB".
fn size_text(gib: f64) -> String {
    let bytes = gib * (1u64 << 30) as f64;
    match bytes {
        b if b >= (1u64 << 30) as f64 => format!("{gib:.2} GiB"),
        b if b >= (1u64 << 20) as f64 => format!("{:.1} MiB", b / (1u64 << 20) as f64),
        b if b >= 1024.0 => format!("{:.1} KiB", b / 1024.0),
        b => format!("{b:.0} bytes"),
    }
}

/// The message of [`BuildError::Damaged`]: the store's error with its system reason, then
/// the remedy, unless the error names one of its own (a checkpoint says to remove its
/// folder): one remedy a line.
fn damaged_text(e: &StoreError) -> String {
    let mut text = e.to_string();
    if let Some(reason) = std::error::Error::source(e) {
        text = format!("{text}: {reason}");
    }
    if text.contains("; remove ") {
        text
    } else {
        format!("{text}; remove the damaged file and build again")
    }
}

/// A store error met while reading back a layer already on disk: damage (the file must be
/// rebuilt) or the system refusing (the file may be fine).
pub(crate) fn existing_layer_error(e: StoreError) -> BuildError {
    if e.is_damage() {
        BuildError::Damaged(e)
    } else {
        BuildError::Store(e)
    }
}

/// Estimated peak memory to build layer `n`: every lower layer uncompressed (one byte a
/// position), the working state, and room for the frontier (8 bytes an entry, held twice
/// while a round's pieces are joined) and the compressed blocks being written. The
/// allowance of 2 bytes a position covers the peaks measured up to layer 24
/// (docs/measurements.md).
pub fn memory_needed(n: u32) -> u64 {
    let lower = if n == 0 { 0 } else { index::size_up_to(n - 1) };
    let size = index::size(n);
    lower + size * (WORK_BYTES_PER_POSITION + 2)
}

/// Peak memory of the lean pass for layer `n` ([`lean::LeanPlan::total_bytes`]).
pub(crate) fn lean_memory_needed(n: u32, opts: &LeanOptions) -> u64 {
    lean::plan(n, opts, true).total_bytes()
}

/// The pass for layer `n` under `choice` and the memory limit.
pub(crate) fn pass_for(choice: PassChoice, n: u32, limit: Option<u64>) -> Pass {
    match choice {
        PassChoice::InMemory => Pass::InMemory,
        PassChoice::Lean => Pass::Lean,
        PassChoice::Auto => match limit {
            Some(limit) if memory_needed(n) > limit => Pass::Lean,
            _ => Pass::InMemory,
        },
    }
}

/// Builds every missing layer `0..=max_seeds` of the tables of kind
/// [`BuildOptions::tables`] in order, through one layer loop for every kind: for each
/// layer its files, the marker last ([`Tables::marker`]: the values file after the
/// distances file, the high file of a pair after its low file). A layer whose marker is on
/// disk but whose companion is missing (or, for the values, damaged) is not complete
/// ([`store::layer_state`]) and is built again. Layers already on disk are checked (header
/// and block checksums) and read back when a layer above them is built from memory.
/// Scratch another kind of build left for a layer built here is removed. The kind's
/// rule-set folder is locked for the whole build, and so is the scratch folder when it is
/// elsewhere, so two builds never write into each other. A cancel
/// ([`crate::SolveObserver::cancelled`]) is honoured between layers and inside the
/// passes, and nothing of the layer it stopped is written.
///
/// # Errors
///
/// Out-of-range options, a layer over the memory limit (refused before any work), a
/// folder another build holds, a damaged layer on disk, or a file that cannot be written.
pub fn build(
    opts: &BuildOptions,
    observer: &dyn BuildObserver,
) -> Result<Vec<LayerReport>, BuildError> {
    if opts.refine.is_some() && !matches!(opts.tables, Tables::OwnRow(_)) {
        return Err(BuildError::RefineNotOwnRow);
    }
    if opts.tables.is_pair() {
        return pairs::build(opts, observer);
    }
    let limit = opts.memory_limit.or_else(physical_memory);
    let need = |n: u32| match pass_for(opts.pass, n, limit) {
        Pass::InMemory => memory_needed(n),
        Pass::Lean => lean_memory_needed(n, &opts.lean),
    };
    let (pool, _lock) = prepare(opts, need, &store::rules_dir(&opts.db, opts.rules))?;
    let _scratch_lock = prepare::lock_scratch(opts)?;
    let mut values = values::Values::new(opts, &lean::Alone);
    pool.install(|| build_layers(opts, observer, &mut values))
}

#[cfg(feature = "mpi")]
/// [`build`] as one rank of a partitioned build (every layer with the lean pass): every
/// rank calls this with the same options; rank 0 holds the lock and writes the files.
pub(crate) fn build_partitioned(
    opts: &BuildOptions,
    observer: &dyn BuildObserver,
    ex: &dyn lean::Exchange,
) -> Result<Vec<LayerReport>, BuildError> {
    if opts.tables != Tables::Values {
        return Err(BuildError::LeanBounds);
    }
    let opts = BuildOptions {
        pass: PassChoice::Lean,
        ..opts.clone()
    };
    // Each rank holds its share of a layer.
    let ranks = ex.ranks() as u64;
    let need = |n: u32| {
        lean::plan_share(n, index::size(n).div_ceil(ranks), &opts.lean, true).total_bytes()
    };
    let folder = store::rules_dir(&opts.db, opts.rules);
    let (pool, _lock) = if ex.rank() == 0 {
        let (pool, lock) = prepare(&opts, need, &folder)?;
        (pool, Some((lock, prepare::lock_scratch(&opts)?)))
    } else {
        (prepare_pool(&opts, need)?, None)
    };
    // A barrier: every rank has passed its checks before any starts work. (A rank that
    // refused has returned above; its caller aborts the job.)
    ex.sum(0);
    let mut values = values::Values::new(&opts, ex);
    pool.install(|| build_layers(&opts, observer, &mut values))
}

/// What the layer loop ([`build_layers`]) needs from one kind of tables: the one thing
/// that differs between kinds is how a layer is read back and how it is built.
trait LayerKind {
    /// Whether building layer `m` reads the layers below it from memory: a layer on disk is
    /// then read back whole for it.
    fn reads_lower(&self, m: u32) -> bool;
    /// Layer `n`, complete on disk: checked, and kept in memory if `needed` (a layer above
    /// it that is built reads it there).
    fn read_back(&mut self, n: u32, needed: bool) -> Result<LayerReport, BuildError>;
    /// Layer `n`, built and written (its marker file last). Nothing of a cancelled layer
    /// reaches the disk.
    fn build(&mut self, n: u32, observer: &dyn BuildObserver) -> Result<LayerReport, BuildError>;
    /// Whether layer `m`, complete on disk, is to be worked on again
    /// ([`BuildOptions::refine`]) rather than read back.
    fn refines(&self, _m: u32) -> bool {
        false
    }
    /// Layer `n`, complete on disk, worked on again: read back, improved, and written
    /// again if anything changed. Only for a layer [`LayerKind::refines`].
    fn refine(&mut self, n: u32, _observer: &dyn BuildObserver) -> Result<LayerReport, BuildError> {
        self.read_back(n, true)
    }
}

/// The layer loop every kind of tables shares: each layer's state decided once, up front
/// ([`store::layer_state`]); layers on disk read back, the others built in order; a
/// cancel honoured between layers (and inside a layer by the kinds that poll it).
fn build_layers(
    opts: &BuildOptions,
    observer: &dyn BuildObserver,
    kind: &mut dyn LayerKind,
) -> Result<Vec<LayerReport>, BuildError> {
    let states = (0..=opts.max_seeds)
        .map(|n| store::layer_state(&opts.db, opts.rules, opts.tables, n))
        .collect::<Result<Vec<_>, _>>()
        .map_err(existing_layer_error)?;
    let missing = |m: u32| !matches!(states[m as usize], LayerState::Complete);
    let mut reports = Vec::new();
    for n in 0..=opts.max_seeds {
        let started = Instant::now();
        if observer.cancelled() {
            return Err(BuildError::Cancelled { seeds: n });
        }
        let report = match &states[n as usize] {
            LayerState::Complete if kind.refines(n) => kind.refine(n, observer)?,
            LayerState::Complete => {
                let needed = (n + 1..=opts.max_seeds)
                    .any(|m| (missing(m) || kind.refines(m)) && kind.reads_lower(m));
                kind.read_back(n, needed)?
            }
            state => {
                if let LayerState::Incomplete(why) = state {
                    observer.layer_incomplete(n, why);
                }
                kind.build(n, observer)?
            }
        };
        let report = LayerReport {
            seconds: started.elapsed().as_secs_f64(),
            ..report
        };
        observer.layer_done(&report);
        reports.push(report);
    }
    Ok(reports)
}
