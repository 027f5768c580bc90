//! The lean pass: the same fixpoint as the in-memory pass ([`crate::solve`]), with a peak
//! memory that does not grow with the lower layers, for layers the in-memory pass cannot
//! hold.
//!
//! # What it holds, and where
//!
//! * **In memory:** four bits a position (`nibbles.rs`): the count of in-layer moves not yet
//!   known to lead into `W`, a "settled" mark, and whether the best exit is `≤ −t`; plus
//!   a buffer of a fixed size for frontiers and lookups ([`LeanOptions::buffer_bytes`]).
//! * **On disk, in a scratch folder `DIR/<rules>/lean-NN/`:** the best exits, one file per
//!   threshold `t` of the positions whose best exit is `t` or `−t` (`exits.rs`), the
//!   positions settled in each round as sorted runs (`runs.rs`), and a checkpoint.
//!
//! # The order of the work
//!
//! Positions are numbered here by the index of the board seen from the *other* side
//! (`rank(board.swapped())`), which puts the mover's row in the high-order part. A
//! capture leaves the child's upper row (the mover's row after sowing) depending only on
//! the mover's row and the pit played, so a slice of consecutive positions in this order
//! has its children in few, contiguous ranges of each lower layer. The exits pass gathers
//! a slice's lookups, sorts them, and reads each lower block it needs once for the slice,
//! in order (`lower.rs`).
//!
//! Each threshold `t` then runs as in memory: round 0 reads its threshold's exits file
//! (a best exit of `t` settles `W`; one of `−t` marks the low exit, and settles `L` when
//! no in-layer move is left); each later round reads the previous round's runs, un-sows
//! every entry, and updates the parents' nibbles by compare-and-swap. Newly settled
//! positions are sorted and kept in memory, or spilled as runs when the buffer fills. The
//! runs of a threshold become one run that keeps each entry's round, and at the end the
//! thresholds' runs become the values and distances files, block by block: both merges
//! read their runs once, a range of positions at a time, placing each entry in a table by
//! index. Everything the in-memory pass computes is computed the same way, so the files
//! are the same, byte for byte.
//!
//! # Files, one a phase
//!
//! `exits.rs` (the exits pass), `rounds.rs` (round 0, the later rounds, the spill buffer),
//! `merge.rs` (a threshold's rounds into one run, the thresholds into the tables),
//! `checkpoint.rs` (saving and resuming); beside them the state (`nibbles.rs`), the
//! scratch formats (`chunks.rs`, `runs.rs`), the lower layers' reads (`lower.rs`) and the
//! ranks (`exchange.rs`). This file holds the options, the plan and the driver.
//!
//! # Checkpoints
//!
//! After the exits pass, and after a round or a threshold once
//! [`LeanOptions::checkpoint_every`] has passed, the pass saves the nibbles and a manifest
//! naming every file it needs (written, synced, then renamed into place). A build that
//! stops resumes from the last checkpoint; files the checkpoint does not name are removed.
//!
//! # Ranks
//!
//! The pass can be shared by ranks (`exchange.rs`, and `awari build --mpi`): each owns a
//! contiguous share of the numbering, sends the parent updates that fall in other shares,
//! and at the end compresses its segments of the files from what every rank settled in
//! them (`merge.rs`); rank 0 writes the blocks. A single process is the one-rank case.

mod checkpoint;
mod chunks;
mod exchange;
mod exits;
mod lower;
mod merge;
mod nibbles;
mod plan;
mod rounds;
mod runs;

use self::checkpoint::Checkpoint;
pub(crate) use self::exchange::{Alone, Exchange};
use self::nibbles::Nibbles;
pub(crate) use self::plan::plan_reach;
pub use self::plan::{plan, plan_share, LeanPlan};
use super::{Phase, Settled, SolveObserver, ThresholdCounts};
use crate::board::swap_rows;
use crate::index;
use crate::rules::Rules;
use crate::store::{self, StoreError, TableKind, WriteOptions, WrittenLayer, DISTANCE_SATURATED};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

/// Best exit of a position without capturing moves (as in the in-memory pass).
const NO_EXIT: i8 = i8::MIN;
/// The most positions in one slice of the exits pass (a lookup packs its slot in 20 bits).
const MAX_SLICE: u64 = 1 << 20;
/// Positions per unit of parallel work within a slice.
const SUB: usize = 1 << 14;
/// Frontier entries read and processed together.
const FRONTIER_BATCH: usize = 1 << 18;
/// Lookups a position can make at most (six moves), for the slice size.
const LOOKUP_BYTES_PER_POSITION: u64 = 6 * 8;
/// Positions per range of the threshold and final merges.
const PART: u64 = 1 << 20;
/// The smallest buffer the pass accepts, whatever the options say.
const MIN_BUFFER: u64 = 1 << 16;
/// Entries a round's buffer holds beyond its budget: what one task adds at once (the
/// parents of 4,096 children).
const SPILL_SLACK: usize = 1 << 16;
/// Bytes a settled entry takes in the frontier buffer.
const ENTRY_BYTES: u64 = 8;

/// The interval between checkpoints when [`LeanOptions::checkpoint_every`] is not given.
pub(crate) const DEFAULT_CHECKPOINT_EVERY: Duration = Duration::from_secs(300);
/// Without a given interval, a checkpoint waits at least this many times the last one's
/// save.
pub(crate) const SAVE_SHARE: u32 = 50;

/// How long after a checkpoint the next is due: `every` if given, else the default
/// interval stretched to [`SAVE_SHARE`] times the last save (`last_save`).
fn checkpoint_wait(every: Option<Duration>, last_save: Duration) -> Duration {
    every.unwrap_or_else(|| DEFAULT_CHECKPOINT_EVERY.max(last_save.saturating_mul(SAVE_SHARE)))
}

/// How the lean pass uses memory, disk and checkpoints. The default: every field None.
#[derive(Clone, Debug, Default)]
pub struct LeanOptions {
    /// Bytes for the frontier buffers and the exits pass's lookups. None: 0.12 bytes per
    /// position of the layer, at least 16 MiB: what is left of the 0.75 bytes a position
    /// the pass aims at, after the nibbles and the rest (README).
    pub buffer_bytes: Option<u64>,
    /// Save a checkpoint after a round or a threshold once this long has passed since the
    /// last one. None: every 5 minutes, and no sooner than 50 times the last save took, so
    /// that saving costs about 2% of the time at most (a big layer's nibbles take tens of
    /// seconds to compress and write). The checkpoint after the exits pass is always
    /// taken, and so is one after a threshold when the files that only the last checkpoint
    /// names (and that the next one frees) take an eighth of a byte a position, and one
    /// after the last threshold.
    pub checkpoint_every: Option<Duration>,
    /// Where the scratch folders go (`<scratch>/<rules>/lean-NN/`). None: under the
    /// database folder. On a cluster, a disk local to each node.
    pub scratch: Option<PathBuf>,
}

impl LeanOptions {
    /// The scratch folder of layer `n`: under [`LeanOptions::scratch`] if set, else
    /// [`scratch_dir`].
    pub fn scratch_for(&self, db: &Path, rules: Rules, n: u32) -> PathBuf {
        match &self.scratch {
            Some(root) => root.join(rules.name()).join(format!("lean-{n:02}")),
            None => scratch_dir(db, rules, n),
        }
    }
}

/// What a lean pass solves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Game {
    /// The values: thresholds `t = n ..= 1`, endless play worth 0, captures valued by the
    /// lower layers' values files; writes the layer's values and distances.
    Values,
    /// The reachability game that bounds the own-row values of a layer (see
    /// `crate::solve::bounds`, `lo`): on the doubled graph, each position is a `W` node (its
    /// mover forces an exit worth `≥ d`, endless play lost for it) and an `L` node (its
    /// mover is held to `≤ −d`, endless play won by it), for `d = n ..= −n + 1`, numbered
    /// `t = d + n` (so `2n ..= 1`). A `W` node's exits are `captured − high(child)`, an `L`
    /// node's `captured − low(child)`, from the lower layers' own-row pairs (`high` names
    /// their high table). Writes the layer's pair: low = the `W` node's value (`−n` if it
    /// never enters), high = the `L` node's (`n` if it never enters). The own-row value with
    /// an empty history lies between them: `low` is at most the memoryless low bound and
    /// `high` at least the memoryless high bound.
    Reach {
        /// The high table of the pairs read and written.
        high: TableKind,
    },
}

impl Game {
    /// The number of the first (highest) threshold.
    pub(crate) fn top(self, n: u32) -> u32 {
        match self {
            Game::Values => n,
            Game::Reach { .. } => 2 * n,
        }
    }

    /// Whether the state keeps a `W` bit a position besides the nibbles.
    fn won_bits(self) -> bool {
        matches!(self, Game::Reach { .. })
    }

    /// Threshold `t` as the value it stands for.
    fn label(self, n: u32, t: u32) -> i8 {
        match self {
            Game::Values => t as i8,
            Game::Reach { .. } => (t as i32 - n as i32) as i8,
        }
    }
}

/// Whether `dir`, a layer's scratch folder, holds a checkpoint of a single process.
pub fn has_checkpoint(dir: &Path) -> bool {
    dir.join(checkpoint::CHECKPOINT).is_file()
}

/// The default scratch folder of layer `n`, under the database folder.
pub fn scratch_dir(db: &Path, rules: Rules, n: u32) -> PathBuf {
    store::rules_dir(db, rules).join(format!("lean-{n:02}"))
}

/// What the lean pass reports besides the in-memory pass's phases.
pub trait LeanObserver: SolveObserver {
    /// The memory plan of a layer, before it starts.
    fn lean_plan(&self, _plan: &LeanPlan) {}
    /// A checkpoint was saved: the next threshold to do, the rounds of it done, and the
    /// time its files took to write and sync.
    fn checkpoint(&self, _seeds: u32, _threshold: u32, _rounds: usize, _took: Duration) {}
    /// The layer resumes from a checkpoint.
    fn resumed(&self, _seeds: u32, _threshold: u32, _rounds: usize) {}
    /// Lower-layer blocks decompressed by the exits pass, and how many blocks the lower
    /// layers have in all.
    fn lower_blocks(&self, _seeds: u32, _read: u64, _blocks: u64) {}
    /// The bytes all ranks sent each other for the layer (0 for a single process), and
    /// the most that one rank received.
    fn exchanged(&self, _seeds: u32, _bytes: u64, _most_received: u64) {}
}

impl LeanObserver for super::Quiet {}

/// Solves layer `n` of `rules` with the lean pass, as rank `ex.rank()` of `ex`, and writes
/// its distances and values files under `db`. Layers `n − 18 ..= n − 2` must be on disk
/// (the lower layers a capture can reach). This rank owns its share of the layer (see
/// `exchange.rs`) and compresses its segments of the files; rank 0 writes them (it returns
/// them; the others None). A single
/// process ([`Alone`]) resumes from a checkpoint in the scratch folder if there is one; a
/// partitioned build starts each layer afresh. The scratch folder is removed when the layer
/// is written. Library callers build through [`crate::build::build`].
///
/// # Errors
///
/// A lower layer missing or damaged, a scratch file damaged, or a file that cannot be
/// read or written. The scratch folder then holds the last checkpoint.
#[allow(clippy::too_many_arguments)]
pub(crate) fn build_layer(
    db: &Path,
    rules: Rules,
    n: u32,
    opts: &LeanOptions,
    write: WriteOptions,
    distances_level: Option<i32>,
    observer: &dyn LeanObserver,
    ex: &dyn Exchange,
) -> Result<Option<WrittenLayer>, StoreError> {
    let (sent_before, received_before) = (ex.bytes_sent(), ex.bytes_received());
    let bounds = exchange::shares(index::size(n), ex.ranks());
    let (lo, hi) = (bounds[ex.rank()], bounds[ex.rank() + 1]);
    let plan = plan_share(n, hi - lo, opts, distances_level.is_some());
    observer.lean_plan(&plan);
    let alone = ex.ranks() == 1;
    let dir = if alone {
        opts.scratch_for(db, rules, n)
    } else {
        opts.scratch_for(db, rules, n)
            .join(format!("rank-{}", ex.rank()))
    };
    let pass = Pass {
        rules,
        n,
        game: Game::Values,
        db: db.to_path_buf(),
        dir,
        plan,
        observer,
        lo,
        hi,
        bounds,
        distances_level,
    };
    std::fs::create_dir_all(&pass.dir).map_err(|e| chunks::io_err(&pass.dir, e))?;
    let written = pass
        .run(alone, opts.checkpoint_every, write, ex)
        .map_err(|e| scratch_advice(e, &pass.dir))?;
    // This layer's bytes (the counts run over the whole job).
    let sent = ex.sum(ex.bytes_sent() - sent_before);
    let most_received = ex.max(ex.bytes_received() - received_before);
    observer.exchanged(n, sent, most_received);
    let _ = std::fs::remove_dir_all(&pass.dir);
    if !alone {
        // The layer's folder, once empty (ranks on other nodes have their own).
        let _ = std::fs::remove_dir(opts.scratch_for(db, rules, n));
    }
    // Every rank reads this layer's file from the next layers on: wait until it is there.
    ex.sum(0);
    Ok(written)
}

/// Solves layer `n` of `rules` for the own-row values' reachability game ([`Game::Reach`],
/// `high` the high table of the pair) with the lean pass, in a single process, and writes
/// the layer's pair under `root` (the own-row folder, which holds the lower layers' pairs:
/// layers `n − 18 ..= n − 2` must be there). Returns the two files written and the
/// positions whose low equals their high (exact). Resumes from a checkpoint in the scratch
/// folder `scratch` if there is one; removes the folder once the pair is written.
///
/// # Errors
///
/// As [`build_layer`].
#[allow(clippy::too_many_arguments)]
pub(crate) fn build_reach_layer(
    root: &Path,
    scratch: &Path,
    rules: Rules,
    n: u32,
    high: TableKind,
    opts: &LeanOptions,
    write: WriteOptions,
    observer: &dyn LeanObserver,
) -> Result<(WrittenLayer, WrittenLayer, u64), StoreError> {
    let plan = plan_reach(n, opts);
    observer.lean_plan(&plan);
    let size = index::size(n);
    let pass = Pass {
        rules,
        n,
        game: Game::Reach { high },
        db: root.to_path_buf(),
        dir: scratch.to_path_buf(),
        plan,
        observer,
        lo: 0,
        hi: size,
        bounds: vec![0, size],
        distances_level: None,
    };
    std::fs::create_dir_all(&pass.dir).map_err(|e| chunks::io_err(&pass.dir, e))?;
    let ex = Alone;
    let run = || -> Result<(WrittenLayer, WrittenLayer, u64), StoreError> {
        let mut work = pass.start_or_resume(true)?;
        work.checkpoint_every = opts.checkpoint_every;
        while work.progress.next_threshold > 0 {
            pass.threshold(&mut work, &ex)?;
        }
        let Work {
            nibbles, progress, ..
        } = work;
        drop(nibbles);
        pass.write_pair_tables(&progress, write)
    };
    let written = run().map_err(|e| scratch_advice(e, &pass.dir))?;
    let _ = std::fs::remove_dir_all(&pass.dir);
    Ok(written)
}

/// A damaged scratch file's error with the remedy that works: the folder removed, the
/// layer starts afresh. (Removing only the damaged file leaves a checkpoint that names it,
/// which the next build refuses in turn.) Errors that name a remedy of their own, and
/// errors of files outside the scratch folder (a lower layer), are kept as they are.
fn scratch_advice(e: StoreError, dir: &Path) -> StoreError {
    match e {
        StoreError::Corrupted { path, what }
            if path.starts_with(dir) && !what.contains("; remove ") =>
        {
            StoreError::Corrupted {
                path,
                what: format!("{what}; {}", remove_folder_advice(dir)),
            }
        }
        e => e,
    }
}

/// The remedy for a damaged scratch folder, naming it.
pub(super) fn remove_folder_advice(dir: &Path) -> String {
    format!(
        "remove the folder {} to build the layer from the start",
        dir.display()
    )
}

/// What a layer's pass carries from threshold to threshold: the nibbles, where it stands
/// (saved in each checkpoint), the current threshold's rounds, and when it last saved.
struct Work {
    nibbles: Nibbles,
    progress: Checkpoint,
    /// The rounds of the current threshold: the checkpoint's files, then what this
    /// process adds, in memory while the buffer holds it.
    rounds: Vec<Vec<Run>>,
    last_checkpoint: Instant,
    /// How long the last checkpoint took to save (zero before the first).
    last_save: Duration,
    checkpoint_every: Option<Duration>,
}

impl Work {
    /// Whether a checkpoint is due.
    fn due(&self) -> bool {
        self.last_checkpoint.elapsed() >= checkpoint_wait(self.checkpoint_every, self.last_save)
    }

    /// Whether this process saves checkpoints at all (a partitioned build does not).
    fn saves(&self) -> bool {
        self.checkpoint_every != Some(Duration::MAX)
    }
}

impl Pass<'_> {
    /// The pass from its start or its checkpoint to the layer's files.
    fn run(
        &self,
        alone: bool,
        checkpoint_every: Option<Duration>,
        write: WriteOptions,
        ex: &dyn Exchange,
    ) -> Result<Option<WrittenLayer>, StoreError> {
        let mut work = self.start_or_resume(alone)?;
        // A partitioned build never checkpoints (see above).
        work.checkpoint_every = if alone {
            checkpoint_every
        } else {
            Some(Duration::MAX)
        };
        while work.progress.next_threshold > 0 {
            self.threshold(&mut work, ex)?;
        }
        let Work {
            nibbles, progress, ..
        } = work;
        drop(nibbles);
        self.write_tables(&progress, write, ex)
    }

    /// The pass's state: from the checkpoint in the scratch folder if a single process
    /// has one, else from a fresh exits pass (then checkpointed).
    fn start_or_resume(&self, alone: bool) -> Result<Work, StoreError> {
        let (rules, n) = (self.rules, self.n);
        let checkpoint = if alone {
            Checkpoint::load(&self.dir, rules, n, self.game.top(n))?
        } else {
            None
        };
        let mut last_save = Duration::ZERO;
        let (nibbles, mut progress) = match checkpoint {
            Some(cp) if cp.rounds_dropped && self.keeps_rounds() => {
                return Err(StoreError::StartedWithoutDistances {
                    path: self.dir.join(checkpoint::CHECKPOINT),
                    seeds: n,
                });
            }
            Some(cp) => {
                // Saved after the last threshold, it holds no nibbles (they are not needed).
                let positions = if cp.next_threshold == 0 {
                    0
                } else {
                    self.hi - self.lo
                };
                let nib = cp.load_nibbles(&self.dir, positions, self.game.won_bits())?;
                self.observer.resumed(n, cp.next_threshold, cp.rounds.len());
                (nib, cp)
            }
            None => {
                clear_dir(&self.dir, &[])?;
                let mut nib = Nibbles::new(self.hi - self.lo, self.game.won_bits());
                self.observer.phase(n, Phase::Exits);
                match self.game {
                    Game::Values => self.exits_pass(&mut nib)?,
                    Game::Reach { high } => self.reach_exits_pass(&mut nib, high)?,
                }
                let mut cp = Checkpoint::start(rules, n, self.game.top(n));
                if alone {
                    let started = Instant::now();
                    cp.save(&self.dir, &mut nib)?;
                    last_save = started.elapsed();
                    self.observer.checkpoint(n, n, 0, last_save);
                }
                (nib, cp)
            }
        };
        // From here on, the thresholds' runs of a layer without distances drop the rounds.
        progress.rounds_dropped |= !self.keeps_rounds();
        let rounds = std::mem::take(&mut progress.rounds)
            .into_iter()
            .map(|files| files.into_iter().map(Run::File).collect())
            .collect();
        Ok(Work {
            nibbles,
            progress,
            rounds,
            last_checkpoint: Instant::now(),
            last_save,
            checkpoint_every: Some(Duration::MAX),
        })
    }

    /// Threshold `work.progress.next_threshold`: its rounds until none settles anything
    /// (checkpointed when due), then one run for the threshold.
    fn threshold(&self, work: &mut Work, ex: &dyn Exchange) -> Result<(), StoreError> {
        let (n, t) = (self.n, work.progress.next_threshold);
        let label = self.game.label(n, t);
        self.observer.phase(n, Phase::Threshold(label));
        let started = Instant::now();
        let mut counts = ThresholdCounts::default();
        let held = AtomicU64::new(0);
        loop {
            // A single process stops between rounds when asked; its last checkpoint stays.
            // (The ranks of an MPI job stop together, as a job, when one of them fails.)
            if ex.ranks() == 1 && self.observer.cancelled() {
                return Err(StoreError::Stopped {
                    path: self.dir.clone(),
                });
            }
            let round = work.rounds.len() as u32;
            let found = if round == 0 {
                self.round_zero(t, &work.nibbles, &held)?
            } else {
                let frontier = work.rounds.last().expect("a round before this one");
                let entries: u64 = frontier.iter().map(Run::entries).sum();
                // Every rank takes part in as many exchanges as the rank with the most
                // batches; none left anywhere ends the threshold.
                let batches = ex.max(entries.div_ceil(FRONTIER_BATCH as u64));
                if batches == 0 {
                    break;
                }
                self.propagate(t, round, frontier, batches, &work.nibbles, &held, ex)?
            };
            let settled: u64 = found.iter().map(Run::entries).sum();
            if round == 0 {
                counts.by_exits = settled;
            } else {
                counts.rounds = round;
                counts.propagated += settled;
            }
            work.rounds.push(found);
            if work.due() {
                let started = Instant::now();
                work.progress.rounds = self.to_files(t, &mut work.rounds, &held)?;
                self.save_checkpoint(work, started)?;
            }
        }
        self.finish_threshold(t, work)?;
        counts.elapsed = started.elapsed();
        self.observer.threshold_done(n, label, counts);
        Ok(())
    }

    /// Threshold `t`'s rounds become one run, each entry with its round; the next
    /// threshold is due (checkpointed when due), and the rounds' files and the threshold's
    /// exits file are discarded.
    fn finish_threshold(&self, t: u32, work: &mut Work) -> Result<(), StoreError> {
        let dir = &self.dir;
        let sources: Vec<runs::Source> = work
            .rounds
            .iter()
            .enumerate()
            .flat_map(|(r, runs)| {
                let round = r.min(usize::from(DISTANCE_SATURATED)) as u8;
                runs.iter().map(move |run| match run {
                    Run::File(f) => runs::Source::File(dir.join(&f.file)),
                    Run::Memory(entries) => runs::Source::Memory(entries, round),
                })
            })
            .collect();
        let name = format!("threshold-{t:02}.run");
        self.merge_threshold(&sources, &self.dir.join(&name))?;
        drop(sources);
        let progress = &mut work.progress;
        progress.thresholds.push((t, name));
        progress.next_threshold = t - 1;
        progress.rounds.clear();
        let done = std::mem::take(&mut work.rounds);
        for run in done.iter().flatten() {
            if let Run::File(f) = run {
                work.progress.discard(&self.dir, &f.file);
            }
        }
        work.progress.discard(&self.dir, &exits::exits_file(t));
        // A file the checkpoint on disk names is freed only by the next one. So one is
        // saved as soon as such files hold an eighth of a byte a position (the exits of
        // the low thresholds, a third of the scratch at its peak otherwise), and after the
        // last threshold, where it names only the thresholds' runs: the final merge starts
        // with nothing else on disk, and a stop during it resumes there.
        let saves = work.saves();
        let crowded = work.progress.stale_bytes(&self.dir) > (self.hi - self.lo) / 8;
        if work.due() || (saves && (crowded || t == 1)) {
            self.save_checkpoint(work, Instant::now())?;
        }
        Ok(())
    }

    /// Saves `work`'s checkpoint (begun at `started`, its rounds' files already named),
    /// tells the observer where it stands and how long the save took, and restarts the
    /// interval.
    fn save_checkpoint(&self, work: &mut Work, started: Instant) -> Result<(), StoreError> {
        work.progress.save(&self.dir, &mut work.nibbles)?;
        let took = started.elapsed();
        let progress = &work.progress;
        self.observer
            .checkpoint(self.n, progress.next_threshold, progress.rounds.len(), took);
        work.last_checkpoint = Instant::now();
        work.last_save = took;
        Ok(())
    }
}

/// Removes every file of `dir` but those named in `keep`.
fn clear_dir(dir: &Path, keep: &[String]) -> Result<(), StoreError> {
    let entries = std::fs::read_dir(dir).map_err(|e| chunks::io_err(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| chunks::io_err(dir, e))?;
        let name = entry.file_name();
        if keep
            .iter()
            .any(|k| name == std::ffi::OsStr::new(k.as_str()))
        {
            continue;
        }
        let path = entry.path();
        std::fs::remove_file(&path).map_err(|e| chunks::io_err(&path, e))?;
    }
    Ok(())
}

/// A run file of a round, and how many entries it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
struct RunFile {
    file: String,
    entries: u64,
}

/// A round's settled positions, sorted: in memory while the buffer holds them, or in a
/// file.
enum Run {
    Memory(Vec<Settled>),
    File(RunFile),
}

impl Run {
    fn entries(&self) -> u64 {
        match self {
            Run::Memory(e) => e.len() as u64,
            Run::File(f) => f.entries,
        }
    }
}

struct Pass<'a> {
    rules: Rules,
    n: u32,
    /// What is solved.
    game: Game,
    /// The database folder whose lower layers the captures read, and where the layer's
    /// tables go (the own-row folder for [`Game::Reach`]).
    db: PathBuf,
    dir: PathBuf,
    plan: LeanPlan,
    observer: &'a dyn LeanObserver,
    /// This rank's share of the layer, in the pass's numbering: `lo..hi`.
    lo: u64,
    hi: u64,
    /// Every rank's share ([`exchange::shares`]).
    bounds: Vec<u64>,
    /// The zstd level of the distances file, or None for a layer built without its
    /// distances.
    distances_level: Option<i32>,
}

impl Pass<'_> {
    /// Whether the thresholds' runs keep each entry's round: only for a layer that keeps
    /// its distances (otherwise they store round 0, which compresses to almost nothing).
    fn keeps_rounds(&self) -> bool {
        self.distances_level.is_some()
    }
}

/// The pass's number of the packed board `bits`.
#[inline]
fn number_of_bits(bits: u128) -> u64 {
    index::rank_bits(swap_rows(bits))
}

/// Whether `key` is the key of a board of layer `n` (twelve bars, the last at `n + 11`):
/// checked before a key from a file is decoded.
#[inline]
fn valid_key(n: u32, key: u64) -> bool {
    key.count_ones() == 12 && 63 - key.leading_zeros() == n + 11
}

fn damaged_run(path: &Path) -> StoreError {
    StoreError::Corrupted {
        path: path.to_path_buf(),
        what: "a run entry is out of place".into(),
    }
}

#[cfg(test)]
mod tests;
