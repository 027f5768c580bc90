//! The build driver: solve layers in order, write each one, skip the ones already built;
//! for either kind of table ([`Tables`]): the values (with their distances) or the bounds.

mod bounds;
mod prepare;

pub use bounds::bounds_memory_needed;
pub use prepare::peak_rss;
pub(crate) use prepare::{physical_memory, prepare};

use prepare::check_disk;
#[cfg(feature = "mpi")]
use prepare::prepare_pool;

use crate::index;
use crate::rules::Rules;
use crate::solve::lean::{self, LeanObserver, LeanOptions};
use crate::solve::{self, WORK_BYTES_PER_POSITION};
use crate::store::{
    self, Incomplete, LayerFile, LayerState, LayerSummary, StoreError, TableKind, WriteOptions,
};
use std::path::{Path, PathBuf};
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
}

/// The default of [`BuildOptions::search_budget`].
pub const DEFAULT_SEARCH_BUDGET: u64 = 100_000;

/// The kind of tables a build writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Tables {
    /// The value of every position, with its distance (endless play shares the seeds).
    #[default]
    Values,
    /// The pair of guaranteed bounds of every position, when endless play ends with each
    /// side keeping its own row ([`crate::probe::BoundsDatabase`]).
    Bounds,
    /// The value of every position with an empty history (the opening, or just after a
    /// capture) when a repetition ends the game with each side keeping its own row, or
    /// the interval proved where the search ran out of [`BuildOptions::search_budget`]
    /// ([`crate::solve::own_row`]). Beside the bounds, in the same folder.
    OwnRow(crate::solve::own_row::Repetition),
}

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
    /// Another build holds the rule set's folder.
    #[error("{} is in use by another build ({holder}); wait for it to finish or stop it", dir.display())]
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
    /// The lean pass asked for the bounds or the own-row values, which have one pass, in
    /// memory.
    #[error("the bounds have one pass, in memory; the lean pass builds the values only")]
    LeanBounds,
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

/// Builds every missing layer `0..=max_seeds` in order: for each, the values file and the
/// distances file (see [`TableKind`]), or with [`Tables::Bounds`] the low and high files
/// of the bounds. A layer whose values are on disk but whose distances file is missing or
/// damaged is not complete ([`store::layer_state`]) and is built again. Layers already on
/// disk are checked (header and block checksums) and read back, since the layers above
/// them need their values. Scratch another kind of build left for a layer built here is
/// removed. The rule set's folder is locked for the whole build, and so is the scratch
/// folder when it is elsewhere, so two builds never write into each other.
///
/// # Errors
///
/// Out-of-range options, a layer over the memory limit (refused before any work), a
/// folder another build holds, a damaged layer on disk, or a file that cannot be written.
pub fn build(
    opts: &BuildOptions,
    observer: &dyn BuildObserver,
) -> Result<Vec<LayerReport>, BuildError> {
    if opts.tables != Tables::Values {
        return bounds::build(opts, observer);
    }
    let limit = opts.memory_limit.or_else(physical_memory);
    let need = |n: u32| match pass_for(opts.pass, n, limit) {
        Pass::InMemory => memory_needed(n),
        Pass::Lean => lean_memory_needed(n, &opts.lean),
    };
    let (pool, _lock) = prepare(opts, need, &store::rules_dir(&opts.db, opts.rules))?;
    let _scratch_lock = prepare::lock_scratch(opts)?;
    pool.install(|| build_in_pool(opts, observer, &lean::Alone))
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
    pool.install(|| build_in_pool(&opts, observer, ex))
}

/// Removes what another kind of build left in the scratch folder of layer `n` before this
/// one builds it, so that neither trips on the other's files: a single process's lean pass
/// (`ranks` 1) keeps its checkpoint as files in the folder, and a partitioned build one
/// subfolder `rank-K` per rank, which it never resumes from. The lean pass about to run
/// removes the other kind's entries (subfolders for a single process, files for a
/// partitioned build); the in-memory pass leaves the folder alone until the layer is
/// written, so that a checkpoint survives a build stopped before then.
fn clear_foreign_scratch(
    opts: &BuildOptions,
    pass: Pass,
    n: u32,
    ranks: usize,
) -> Result<(), BuildError> {
    if pass != Pass::Lean {
        return Ok(());
    }
    let dir = opts.lean.scratch_for(&opts.db, opts.rules, n);
    let io_err = |path: &Path, source| {
        BuildError::Store(StoreError::Io {
            path: path.to_path_buf(),
            source,
        })
    };
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_err(&dir, e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| io_err(&dir, e))?;
        let path = entry.path();
        let is_dir = entry.file_type().map_err(|e| io_err(&path, e))?.is_dir();
        let removed = match (is_dir, ranks) {
            (true, 1) => std::fs::remove_dir_all(&path),
            (false, r) if r > 1 => std::fs::remove_file(&path),
            _ => continue,
        };
        // Every rank of a partitioned build clears the same folder when they share it, so
        // a file another rank removed first is no error.
        if let Err(e) = removed {
            if e.kind() != std::io::ErrorKind::NotFound {
                return Err(io_err(&path, e));
            }
        }
    }
    Ok(())
}

/// Removes the lean scratch folder of layer `n`, whose files are whole: nothing in it is of
/// use any more (a big layer's runs take gigabytes). Leaving it costs only disk, so a
/// failure to remove it does not fail the build.
fn remove_scratch_of_whole_layer(opts: &BuildOptions, n: u32) {
    let _ = std::fs::remove_dir_all(opts.lean.scratch_for(&opts.db, opts.rules, n));
    // And the folder of a build given another --scratch, as its note says.
    let note = scratch_note(opts, n);
    if let Ok(root) = std::fs::read_to_string(&note) {
        let _ = std::fs::remove_dir_all(scratch_under(opts, root.trim_end_matches('\n'), n));
        let _ = std::fs::remove_file(&note);
    }
}

/// The note in the rule set's folder that names the `--scratch` folder of layer `n`'s lean
/// pass, when a build was given one: a build given another (or none) finds the checkpoint
/// there through it, instead of starting afresh beside it without a word.
fn scratch_note(opts: &BuildOptions, n: u32) -> PathBuf {
    store::rules_dir(&opts.db, opts.rules).join(format!("lean-{n:02}.scratch"))
}

/// The scratch folder of layer `n` under the `--scratch` folder `root`.
fn scratch_under(opts: &BuildOptions, root: &str, n: u32) -> PathBuf {
    let with = lean::LeanOptions {
        scratch: Some(PathBuf::from(root)),
        ..lean::LeanOptions::default()
    };
    with.scratch_for(&opts.db, opts.rules, n)
}

/// Before a single process's lean pass of layer `n`: refuses when a checkpoint of the
/// layer lies in the scratch folder of a build given another `--scratch` (it would be
/// abandoned without a word), else notes this build's `--scratch` folder, if it has one,
/// for the next build to find.
fn note_scratch(opts: &BuildOptions, n: u32) -> Result<(), BuildError> {
    let note = scratch_note(opts, n);
    let absolute = |p: PathBuf| std::path::absolute(&p).unwrap_or(p);
    let here = absolute(opts.lean.scratch_for(&opts.db, opts.rules, n));
    if let Ok(text) = std::fs::read_to_string(&note) {
        let root = PathBuf::from(text.trim_end_matches('\n'));
        let dir = scratch_under(opts, text.trim_end_matches('\n'), n);
        if absolute(dir.clone()) != here && lean::has_checkpoint(&dir) {
            return Err(BuildError::ScratchElsewhere {
                seeds: n,
                root,
                dir,
            });
        }
    }
    // Noted only when it is not the default folder, which every build looks in.
    let default = absolute(lean::scratch_dir(&opts.db, opts.rules, n));
    let here = opts
        .lean
        .scratch
        .clone()
        .filter(|_| here != default)
        .map(absolute);
    let io_err = |source| {
        BuildError::Store(StoreError::Io {
            path: note.clone(),
            source,
        })
    };
    match here {
        Some(root) => std::fs::write(&note, format!("{}\n", root.display())).map_err(io_err),
        None => match std::fs::remove_file(&note) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_err(e)),
            _ => Ok(()),
        },
    }
}

fn build_in_pool(
    opts: &BuildOptions,
    observer: &dyn BuildObserver,
    ex: &dyn lean::Exchange,
) -> Result<Vec<LayerReport>, BuildError> {
    let limit = opts.memory_limit.or_else(physical_memory);
    // Each layer's state, decided once and in one place ([`store::layer_state`]): a layer
    // with its values but a missing or damaged distances file is built again, since a
    // principal variation without its distances would have to search.
    let states = (0..=opts.max_seeds)
        .map(|n| store::layer_state(&opts.db, opts.rules, n))
        .collect::<Result<Vec<_>, _>>()
        .map_err(existing_layer_error)?;
    let complete = |m: u32| matches!(states[m as usize], LayerState::Complete);
    let missing = |m: u32| !complete(m);
    let in_memory = |m: u32| pass_for(opts.pass, m, limit) == Pass::InMemory;
    // Lower layers in memory, for the in-memory pass; empty for the others.
    let mut layers: Vec<Vec<i8>> = Vec::new();
    let mut reports = Vec::new();
    for n in 0..=opts.max_seeds {
        let started = Instant::now();
        if observer.cancelled() {
            return Err(BuildError::Cancelled { seeds: n });
        }
        let report = if complete(n) {
            // A build stopped after the layer's files were renamed into place, but before
            // its scratch folder was removed, left that folder behind.
            remove_scratch_of_whole_layer(opts, n);
            // A layer is read into memory only if the in-memory pass will build a layer
            // above it.
            let needed = (n + 1..=opts.max_seeds).any(|m| missing(m) && in_memory(m));
            layer_on_disk(opts, n, needed, &mut layers)?
        } else {
            if let LayerState::Incomplete(why) = &states[n as usize] {
                observer.layer_incomplete(n, why);
            }
            build_layer(opts, n, limit, &mut layers, observer, ex)?
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

/// A complete layer on disk: checked, and read into `layers` if `needed` (reading it back
/// checks every block's checksum on the way).
fn layer_on_disk(
    opts: &BuildOptions,
    n: u32,
    needed: bool,
    layers: &mut Vec<Vec<i8>>,
) -> Result<LayerReport, BuildError> {
    let path = store::layer_path(&opts.db, opts.rules, n);
    let file = LayerFile::open(&path, opts.rules, n).map_err(existing_layer_error)?;
    if needed {
        layers.push(file.read_all().map_err(existing_layer_error)?);
    } else {
        file.check_blocks().map_err(existing_layer_error)?;
        layers.push(Vec::new());
    }
    Ok(LayerReport {
        seeds: n,
        positions: file.positions(),
        built: false,
        seconds: 0.0,
        bytes: file.bytes(),
        summary: file.summary().clone(),
        exact: None,
        searched: None,
    })
}

/// The write options of the distances files.
fn distances_write(opts: &BuildOptions) -> WriteOptions {
    WriteOptions {
        zstd_level: opts.write.zstd_level.min(DISTANCES_ZSTD_LEVEL),
        ..opts.write
    }
}

/// Builds layer `n` with the pass the options and the memory `limit` choose.
fn build_layer(
    opts: &BuildOptions,
    n: u32,
    limit: Option<u64>,
    layers: &mut Vec<Vec<i8>>,
    observer: &dyn BuildObserver,
    ex: &dyn lean::Exchange,
) -> Result<LayerReport, BuildError> {
    let pass = pass_for(opts.pass, n, limit);
    if pass == Pass::Lean && ex.ranks() == 1 {
        note_scratch(opts, n)?;
    }
    clear_foreign_scratch(opts, pass, n, ex.ranks())?;
    check_disk(opts, pass, n)?;
    if opts.pass == PassChoice::Auto {
        observer.pass_chosen(n, pass, memory_needed(n), limit);
    }
    observer.layer_started(n, index::size(n));
    let written = match pass {
        Pass::InMemory => build_in_memory(opts, n, layers, observer)?,
        Pass::Lean => build_lean(opts, n, layers, observer, ex)?,
    };
    Ok(LayerReport {
        seeds: n,
        positions: index::size(n),
        built: true,
        seconds: 0.0,
        bytes: written.bytes,
        summary: written.summary,
        exact: None,
        searched: None,
    })
}

/// Layer `n` by the in-memory pass, from the lower layers in `layers` (it joins them).
fn build_in_memory(
    opts: &BuildOptions,
    n: u32,
    layers: &mut Vec<Vec<i8>>,
    observer: &dyn BuildObserver,
) -> Result<store::WrittenLayer, BuildError> {
    let solved = solve::solve_layer(opts.rules, n, &*layers, observer);
    // A cancelled pass returns garbage: it must never reach the disk.
    if observer.cancelled() {
        return Err(BuildError::Cancelled { seeds: n });
    }
    // Distances first: a values file on disk marks a finished layer, so the layer is never
    // taken as done without its distances.
    let summary = LayerSummary::from_values(n, &solved.values);
    if opts.keeps_distances(n) {
        store::write_table(
            &opts.db,
            opts.rules,
            TableKind::Distances,
            &solved.distances,
            summary,
            distances_write(opts),
        )?;
    } else {
        store::write_without_entries(
            &opts.db,
            opts.rules,
            TableKind::Distances,
            summary,
            distances_write(opts),
        )?;
    }
    drop(solved.distances);
    let written = store::write_layer(&opts.db, opts.rules, n, &solved.values, opts.write)?;
    layers.push(solved.values);
    // A lean checkpoint of this layer (a build stopped with the other pass).
    remove_scratch_of_whole_layer(opts, n);
    Ok(written)
}

/// Layer `n` by the lean pass, which reads the lower layers from their files.
fn build_lean(
    opts: &BuildOptions,
    n: u32,
    layers: &mut Vec<Vec<i8>>,
    observer: &dyn BuildObserver,
    ex: &dyn lean::Exchange,
) -> Result<store::WrittenLayer, BuildError> {
    // The lean pass reads the lower layers from their files: free them.
    layers.iter_mut().for_each(|l| *l = Vec::new());
    let written = lean::build_layer(
        &opts.db,
        opts.rules,
        n,
        &opts.lean,
        opts.write,
        opts.keeps_distances(n)
            .then_some(distances_write(opts).zstd_level),
        observer,
        ex,
    )
    .map_err(existing_layer_error)?;
    if ex.ranks() == 1 {
        // The pass removed its scratch folder, the one the note names.
        let _ = std::fs::remove_file(scratch_note(opts, n));
    }
    layers.push(Vec::new());
    Ok(match written {
        Some(w) => w,
        // Another rank wrote it; it is there (the pass waits for that).
        None => {
            let path = store::layer_path(&opts.db, opts.rules, n);
            let file = LayerFile::open(&path, opts.rules, n).map_err(existing_layer_error)?;
            store::WrittenLayer {
                path,
                bytes: file.bytes(),
                summary: file.summary().clone(),
            }
        }
    })
}
