//! The lean pass: the same fixpoint as the in-memory pass ([`crate::solve`]), with a peak
//! memory that does not grow with the lower layers, for layers the in-memory pass cannot
//! hold.
//!
//! # What it holds, and where
//!
//! * **In memory:** four bits a position (`nibbles.rs`): the count of in-layer moves not yet
//!   known to lead into `W`, a "settled" mark, and whether the best exit is `≤ −t`; plus
//!   a buffer of a fixed size for frontiers and lookups ([`LeanOptions::buffer_bytes`]).
//! * **On disk, in a scratch folder `DIR/<rules>/lean-NN/`:** each position's best exit
//!   (one byte, compressed, in the order below), the positions settled in each round as
//!   sorted runs (`runs.rs`), and a checkpoint.
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
//! Each threshold `t` then runs as in memory: round 0 reads the exits back in one pass
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
//! and rank 0 writes the files. A single process is the one-rank case.

mod chunks;
mod exchange;
mod lower;
mod nibbles;
mod runs;

use self::chunks::{ChunkReader, ChunkWriter};
pub(crate) use self::exchange::{Alone, Exchange};
use self::nibbles::{Nibbles, Update};
use self::runs::{Entry, RunReader, RunWriter};
use super::settled;
use super::{
    moves_of, unsow, Moves, Phase, Settled, SolveObserver, ThresholdCounts, PREFETCH_BATCH,
};
use crate::board::Board;
use crate::index;
use crate::rules::Rules;
use crate::store::{
    self, LayerSummary, StoreError, TableKind, TableWriter, WriteOptions, WrittenLayer,
    DISTANCE_SATURATED, HISTOGRAM_LEN,
};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI8, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Best exit of a position without capturing moves (as in the in-memory pass).
const NO_EXIT: i8 = i8::MIN;
/// Positions per chunk of the exits file.
const EXIT_CHUNK: usize = 1 << 16;
/// Exits chunks read and scanned together.
const EXIT_GROUP: usize = 16;
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

/// How the lean pass uses memory, disk and checkpoints.
#[derive(Clone, Debug)]
pub struct LeanOptions {
    /// Bytes for the frontier buffers and the exits pass's lookups. None: 0.12 bytes per
    /// position of the layer, at least 16 MiB: what is left of the 0.75 bytes a position
    /// the pass aims at, after the nibbles and the rest (README).
    pub buffer_bytes: Option<u64>,
    /// Save a checkpoint after a round once this long has passed since the last one.
    /// Checkpoints after the exits pass and after every threshold are always taken.
    pub checkpoint_every: Duration,
    /// Where the scratch folders go (`<scratch>/<rules>/lean-NN/`). None: under the
    /// database folder. On a cluster, a disk local to each node.
    pub scratch: Option<PathBuf>,
}

impl Default for LeanOptions {
    fn default() -> LeanOptions {
        LeanOptions {
            buffer_bytes: None,
            checkpoint_every: Duration::from_secs(300),
            scratch: None,
        }
    }
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

/// What the lean pass will hold in memory for a layer (bytes), printed before it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeanPlan {
    /// The layer.
    pub seeds: u32,
    /// The positions this process holds: the layer, or a rank's share of it.
    pub positions: u64,
    /// The nibbles: half a byte a position.
    pub state_bytes: u64,
    /// Frontier buffers and exits-pass lookups.
    pub buffer_bytes: u64,
    /// Positions per slice of the exits pass.
    pub slice_positions: u64,
    /// Decompressed blocks, chunk buffers and output batches, an allowance.
    pub other_bytes: u64,
    /// Free disk space the layer needs: its scratch files and its two table files.
    pub disk_bytes: u64,
}

impl LeanPlan {
    /// The peak memory the plan adds up to.
    pub fn total_bytes(&self) -> u64 {
        self.state_bytes + self.buffer_bytes + self.other_bytes
    }
}

/// Disk bytes a position of the layer needs at most while it is built: the exits file,
/// the runs, two nibble snapshots while one replaces the other, and the two tables. The
/// scratch folder peaked at 2.06 bytes a position on layer 21 and the tables take 0.9
/// (README); the rest is room to spare.
const DISK_BYTES_PER_POSITION: f64 = 3.5;

/// The plan for layer `n`.
pub fn plan(n: u32, opts: &LeanOptions) -> LeanPlan {
    plan_share(n, index::size(n), opts)
}

/// The plan of one rank holding `positions` of layer `n` (all of them for a single
/// process): the nibbles, the default buffer and the disk scale with the share.
pub fn plan_share(n: u32, positions: u64, opts: &LeanOptions) -> LeanPlan {
    let buffer_bytes = opts
        .buffer_bytes
        .unwrap_or((positions * 3 / 25).max(16 << 20))
        .max(MIN_BUFFER);
    let slice_positions =
        (buffer_bytes / (LOOKUP_BYTES_PER_POSITION + 1)).clamp(SUB as u64, MAX_SLICE) / SUB as u64
            * SUB as u64;
    let threads = rayon::current_num_threads() as u64;
    // Per thread: a decompressed lower block and an exits group's chunks; the output
    // batch of the final merge (two bytes a position, compressed copies beside it); the
    // merge's chunk buffers (64 KiB a run, at most 64 runs); and what any run of the
    // program holds besides (code, thread stacks, allocator slack: 28 MiB measured at
    // layer 24 beyond the rest of the plan).
    let other_bytes =
        threads * (EXIT_CHUNK as u64 * 2 + (1 << 16)) + 4 * PART + (64 << 17) + (28 << 20);
    LeanPlan {
        seeds: n,
        positions,
        state_bytes: Nibbles::bytes_for(positions),
        buffer_bytes,
        slice_positions,
        other_bytes,
        disk_bytes: (positions as f64 * DISK_BYTES_PER_POSITION) as u64 + (1 << 20),
    }
}

/// The default scratch folder of layer `n`, under the database folder.
pub fn scratch_dir(db: &Path, rules: Rules, n: u32) -> PathBuf {
    store::rules_dir(db, rules).join(format!("lean-{n:02}"))
}

/// What the lean pass reports besides the in-memory pass's phases.
pub trait LeanObserver: SolveObserver {
    /// The memory plan of a layer, before it starts.
    fn lean_plan(&self, _plan: &LeanPlan) {}
    /// A checkpoint was saved: the next threshold to do and the rounds of it done.
    fn checkpoint(&self, _seeds: u32, _threshold: u32, _rounds: usize) {}
    /// The layer resumes from a checkpoint.
    fn resumed(&self, _seeds: u32, _threshold: u32, _rounds: usize) {}
    /// Lower-layer blocks decompressed by the exits pass, and how many blocks the lower
    /// layers have in all.
    fn lower_blocks(&self, _seeds: u32, _read: u64, _blocks: u64) {}
    /// The bytes all ranks sent each other for the layer (0 for a single process).
    fn exchanged(&self, _seeds: u32, _bytes: u64) {}
}

impl LeanObserver for super::Quiet {}

/// Solves layer `n` of `rules` with the lean pass, as rank `ex.rank()` of `ex`, and writes
/// its distances and values files under `db`. Layers `n − 18 ..= n − 2` must be on disk
/// (the lower layers a capture can reach). This rank owns its share of the layer (see
/// `exchange.rs`), and rank 0 writes the files (it returns them; the others None). A single
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
    distances_level: i32,
    observer: &dyn LeanObserver,
    ex: &dyn Exchange,
) -> Result<Option<WrittenLayer>, StoreError> {
    let bounds = exchange::shares(index::size(n), ex.ranks());
    let (lo, hi) = (bounds[ex.rank()], bounds[ex.rank() + 1]);
    let plan = plan_share(n, hi - lo, opts);
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
        db: db.to_path_buf(),
        dir,
        plan,
        observer,
        lo,
        hi,
        bounds,
    };
    std::fs::create_dir_all(&pass.dir).map_err(|e| chunks::io_err(&pass.dir, e))?;
    let checkpoint = if alone {
        Checkpoint::load(&pass.dir, rules, n)?
    } else {
        None
    };
    let (mut nibbles, mut progress) = match checkpoint {
        Some(cp) => {
            let nib = cp.load_nibbles(&pass.dir, hi - lo)?;
            observer.resumed(n, cp.next_threshold, cp.rounds.len());
            (nib, cp)
        }
        None => {
            clear_dir(&pass.dir, &[])?;
            let mut nib = Nibbles::new(hi - lo);
            observer.phase(n, Phase::Exits);
            pass.exits_pass(&mut nib)?;
            let mut cp = Checkpoint::start(rules, n);
            if alone {
                cp.save(&pass.dir, &mut nib)?;
            }
            (nib, cp)
        }
    };
    // A partitioned build never checkpoints (see above).
    let checkpoint_every = if alone {
        opts.checkpoint_every
    } else {
        Duration::MAX
    };
    let mut last_checkpoint = Instant::now();
    // The rounds of the current threshold: the checkpoint's files, then what this process
    // adds, in memory while the buffer holds it.
    let mut rounds: Vec<Vec<Run>> = std::mem::take(&mut progress.rounds)
        .into_iter()
        .map(|files| files.into_iter().map(Run::File).collect())
        .collect();
    while progress.next_threshold > 0 {
        let t = progress.next_threshold;
        observer.phase(n, Phase::Threshold(t as i8));
        let started = Instant::now();
        let mut counts = ThresholdCounts::default();
        let held = AtomicU64::new(0);
        loop {
            let round = rounds.len() as u32;
            let found = if round == 0 {
                pass.round_zero(t, &nibbles, &held)?
            } else {
                let frontier = rounds.last().expect("a round before this one");
                let entries: u64 = frontier.iter().map(Run::entries).sum();
                // Every rank takes part in as many exchanges as the rank with the most
                // batches; none left anywhere ends the threshold.
                let batches = ex.max(entries.div_ceil(FRONTIER_BATCH as u64));
                if batches == 0 {
                    break;
                }
                pass.propagate(t, round, frontier, batches, &nibbles, &held, ex)?
            };
            let settled: u64 = found.iter().map(Run::entries).sum();
            if round == 0 {
                counts.by_exits = settled;
            } else {
                counts.rounds = round;
                counts.propagated += settled;
            }
            rounds.push(found);
            if last_checkpoint.elapsed() >= checkpoint_every {
                progress.rounds = pass.to_files(t, &mut rounds, &held)?;
                progress.save(&pass.dir, &mut nibbles)?;
                observer.checkpoint(n, t, rounds.len());
                last_checkpoint = Instant::now();
            }
        }
        // One run for the threshold, each entry with its round.
        let dir = &pass.dir;
        let sources: Vec<runs::Source> = rounds
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
        pass.merge_threshold(&sources, &pass.dir.join(&name))?;
        drop(sources);
        progress.thresholds.push((t, name));
        progress.next_threshold = t - 1;
        progress.rounds.clear();
        let done = std::mem::take(&mut rounds);
        if last_checkpoint.elapsed() >= checkpoint_every {
            progress.save(&pass.dir, &mut nibbles)?;
            observer.checkpoint(n, t - 1, 0);
            last_checkpoint = Instant::now();
        }
        for run in done.iter().flatten() {
            if let Run::File(f) = run {
                progress.discard(&pass.dir, &f.file);
            }
        }
        counts.elapsed = started.elapsed();
        observer.threshold_done(n, t as i8, counts);
    }
    drop(nibbles);
    let written = pass.write_tables(&progress, write, distances_level, ex)?;
    observer.exchanged(n, ex.sum(ex.bytes_sent()));
    let _ = std::fs::remove_dir_all(&pass.dir);
    if !alone {
        // The layer's folder, once empty (ranks on other nodes have their own).
        let _ = std::fs::remove_dir(opts.scratch_for(db, rules, n));
    }
    // Every rank reads this layer's file from the next layers on: wait until it is there.
    ex.sum(0);
    Ok(written)
}

/// Removes every file of `dir` but those named in `keep`.
fn clear_dir(dir: &Path, keep: &[&str]) -> Result<(), StoreError> {
    let entries = std::fs::read_dir(dir).map_err(|e| chunks::io_err(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| chunks::io_err(dir, e))?;
        let name = entry.file_name();
        if keep.iter().any(|k| name == std::ffi::OsStr::new(k)) {
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
    db: PathBuf,
    dir: PathBuf,
    plan: LeanPlan,
    observer: &'a dyn LeanObserver,
    /// This rank's share of the layer, in the pass's numbering: `lo..hi`.
    lo: u64,
    hi: u64,
    /// Every rank's share ([`exchange::shares`]).
    bounds: Vec<u64>,
}

/// The board of the position numbered `q` in the pass's order.
#[inline]
fn board_at(n: u32, q: u64) -> Board {
    index::unrank(n, q).swapped()
}

/// The pass's number of `board`.
#[inline]
fn number_of(board: &Board) -> u64 {
    index::rank(&board.swapped())
}

impl Pass<'_> {
    /// Every position's best exit (to the exits file) and count of in-layer moves (to the
    /// nibbles), slice by slice.
    fn exits_pass(&self, nib: &mut Nibbles) -> Result<(), StoreError> {
        let n = self.n;
        let lower = lower::LowerFiles::open(&self.db, self.rules, n)?;
        let tmp = self.dir.join("exits.tmp");
        let mut out = ChunkWriter::create(&tmp)?;
        let slice = self.plan.slice_positions;
        let state = nib.as_bytes_mut();
        let mut start = self.lo;
        while start < self.hi {
            let len = slice.min(self.hi - start) as usize;
            let exits: Vec<AtomicI8> = (0..len).map(|_| AtomicI8::new(NO_EXIT)).collect();
            // The share starts at an even position, so the slice starts on a byte.
            let first = (start - self.lo) as usize;
            let bytes = &mut state[first / 2..(first + len).div_ceil(2)];
            // Moves: counts to the nibbles, game-over values to the exits, lookups out.
            let mut lookups: Vec<u64> = bytes
                .par_chunks_mut(SUB / 2)
                .zip(exits.par_chunks(SUB))
                .enumerate()
                .flat_map_iter(|(c, (bytes, exits))| {
                    let first = start + (c * SUB) as u64;
                    let mut found = Vec::new();
                    let end = first + exits.len() as u64;
                    for (q, swapped) in index::walk(n, first, end) {
                        let k = (q - first) as usize;
                        let slot = q - start;
                        let board = swapped.swapped();
                        let moves = moves_of(self.rules, n, &board, |layer, idx, _| {
                            found.push(u64::from(layer) << 58 | idx << 20 | slot);
                        });
                        match moves {
                            Moves::Over(value) => {
                                exits[k].store(value, Relaxed);
                                nibbles::set_in(bytes, k, 0);
                            }
                            Moves::Stay(stays) => nibbles::set_in(bytes, k, stays),
                        }
                    }
                    found
                })
                .collect();
            lookups.par_sort_unstable();
            lower.answer(n, &lookups, &exits)?;
            drop(lookups);
            // Positions without exits have a low exit at every threshold.
            let raw: Vec<u8> = exits.iter().map(|e| e.load(Relaxed) as u8).collect();
            bytes
                .par_chunks_mut(SUB / 2)
                .zip(raw.par_chunks(SUB))
                .for_each(|(bytes, raw)| {
                    for (k, &e) in raw.iter().enumerate() {
                        if e as i8 == NO_EXIT {
                            let nib = nibbles::get_in(bytes, k);
                            nibbles::set_in(bytes, k, nib | nibbles::LOW_EXIT);
                        }
                    }
                });
            let packed: Vec<Vec<u8>> = raw.par_chunks(EXIT_CHUNK).map(chunks::compress).collect();
            for (chunk, p) in raw.chunks(EXIT_CHUNK).zip(&packed) {
                out.write_compressed(chunk.len(), p)?;
            }
            self.observer.advance(len as u64);
            start += len as u64;
        }
        out.finish()?;
        let path = self.dir.join("exits.bin");
        std::fs::rename(&tmp, &path).map_err(|e| chunks::io_err(&path, e))?;
        self.observer
            .lower_blocks(n, lower.blocks_read(), lower.blocks_total());
        Ok(())
    }

    /// Round 0 of threshold `t`: the positions the exits settle.
    fn round_zero(&self, t: u32, nib: &Nibbles, held: &AtomicU64) -> Result<Vec<Run>, StoreError> {
        let n = self.n;
        let spill = Spiller::new(self, t, 0, held);
        let path = self.dir.join("exits.bin");
        let mut reader = ChunkReader::open(&path)?;
        let (win, lose) = (t as i8 as u8, (-(t as i8)) as u8);
        let mut first = self.lo;
        loop {
            let mut group = Vec::with_capacity(EXIT_GROUP);
            while group.len() < EXIT_GROUP {
                match reader.next_packed()? {
                    Some(p) => group.push(p),
                    None => break,
                }
            }
            if group.is_empty() {
                break;
            }
            let starts: Vec<u64> = group
                .iter()
                .scan(first, |at, p| {
                    let s = *at;
                    *at += p.raw_len as u64;
                    Some(s)
                })
                .collect();
            first = starts.last().copied().unwrap_or(first)
                + group.last().map_or(0, |p| p.raw_len as u64);
            let found: Vec<Vec<Settled>> = group
                .par_iter()
                .zip(starts.par_iter())
                .map(|(packed, &s)| -> Result<Vec<Settled>, StoreError> {
                    let raw = packed.unpack(&path)?;
                    let mut found = Vec::new();
                    for (b, block) in raw.chunks(64).enumerate() {
                        let mut hits = 0u64;
                        for (j, &e) in block.iter().enumerate() {
                            hits |= u64::from((e == win) | (e == lose)) << j;
                        }
                        while hits != 0 {
                            let j = hits.trailing_zeros() as usize;
                            hits &= hits - 1;
                            let k = 64 * b + j;
                            let q = s + k as u64;
                            let local = q - self.lo;
                            let settled = if raw[k] == win {
                                (nib.settle(local) == Update::Settled).then_some(false)
                            } else {
                                (nib.mark_low_exit(local) == Update::Settled).then_some(true)
                            };
                            if let Some(lost) = settled {
                                found.push(Settled::new(&board_at(n, q), lost));
                            }
                        }
                    }
                    Ok(found)
                })
                .collect::<Result<_, _>>()?;
            for f in found {
                self.observer.advance(f.len() as u64);
                spill.push(f)?;
            }
        }
        if first != self.hi {
            return Err(StoreError::Corrupted {
                path,
                what: format!(
                    "holds {} exits, this share of the layer has {}",
                    first - self.lo,
                    self.hi - self.lo
                ),
            });
        }
        spill.finish()
    }

    /// Round `round` of threshold `t`: the parents that the positions of `frontier`
    /// decide. Parents in another rank's share are sent to it, a batch of the frontier at
    /// a time (`batches` in all, the same on every rank), and this rank applies what the
    /// others send.
    #[allow(clippy::too_many_arguments)]
    fn propagate(
        &self,
        t: u32,
        round: u32,
        frontier: &[Run],
        batches: u64,
        nib: &Nibbles,
        held: &AtomicU64,
        ex: &dyn Exchange,
    ) -> Result<Vec<Run>, StoreError> {
        let spill = Spiller::new(self, t, round, held);
        let ranks = ex.ranks();
        let mut feed = Feed {
            dir: &self.dir,
            runs: frontier,
            next: 0,
            at: 0,
            reader: None,
        };
        let mut batch: Vec<Settled> = Vec::with_capacity(FRONTIER_BATCH);
        for _ in 0..batches {
            feed.fill(&mut batch, FRONTIER_BATCH)?;
            let results: Vec<(Vec<Settled>, Vec<Vec<u64>>)> = batch
                .par_chunks(4096)
                .map(|chunk| self.parents(chunk, nib, ranks))
                .collect();
            let mut outgoing = vec![Vec::new(); ranks];
            for (found, out) in results {
                self.observer.advance(found.len() as u64);
                spill.push(found)?;
                for (to, o) in outgoing.iter_mut().zip(out) {
                    to.extend(o);
                }
            }
            if ranks > 1 {
                let incoming = ex.all_to_all(&outgoing);
                let found: Vec<Vec<Settled>> = incoming
                    .par_chunks(4096)
                    .map(|c| self.apply_sent(c, nib))
                    .collect::<Result<_, _>>()?;
                for f in found {
                    self.observer.advance(f.len() as u64);
                    spill.push(f)?;
                }
            }
            batch.clear();
        }
        spill.finish()
    }

    /// Writes the rounds held in memory to files (for a checkpoint), and lists every
    /// round's files.
    fn to_files(
        &self,
        t: u32,
        rounds: &mut [Vec<Run>],
        held: &AtomicU64,
    ) -> Result<Vec<Vec<RunFile>>, StoreError> {
        let mut listed = Vec::with_capacity(rounds.len());
        for (r, runs) in rounds.iter_mut().enumerate() {
            let mut files = Vec::new();
            for (k, run) in runs.iter_mut().enumerate() {
                if let Run::Memory(entries) = run {
                    let file = format!("{}-m{k:03}.run", round_prefix(t, r as u32));
                    let round = r.min(usize::from(DISTANCE_SATURATED)) as u8;
                    runs::write_run(&self.dir.join(&file), entries, round)?;
                    held.fetch_sub(entries.len() as u64, Relaxed);
                    *run = Run::File(RunFile {
                        file,
                        entries: entries.len() as u64,
                    });
                }
                if let Run::File(f) = run {
                    files.push(f.clone());
                }
            }
            listed.push(files);
        }
        Ok(listed)
    }

    /// The parents that `children` settle in this rank's share, and the updates for the
    /// other ranks' shares (each a parent's key and whether the child lost, as a
    /// [`Settled`]'s bits). A batch of parents' numbers is gathered and their nibbles
    /// prefetched before any is updated, as in the in-memory pass.
    fn parents(
        &self,
        children: &[Settled],
        nib: &Nibbles,
        ranks: usize,
    ) -> (Vec<Settled>, Vec<Vec<u64>>) {
        let mut found = Vec::new();
        let mut out = vec![Vec::new(); ranks];
        let mut batch: Vec<(u64, Board, bool)> = Vec::with_capacity(PREFETCH_BATCH + 64);
        for &child in children {
            let lost = child.lost();
            unsow(self.rules, &child.board(), |parent| {
                let q = number_of(&parent);
                if (self.lo..self.hi).contains(&q) {
                    nib.prefetch(q - self.lo);
                    batch.push((q - self.lo, parent, lost));
                } else {
                    let to = exchange::owner(&self.bounds, q);
                    out[to].push(Settled::new(&parent, lost).0);
                }
            });
            if batch.len() >= PREFETCH_BATCH {
                apply_updates(&mut batch, nib, &mut found);
            }
        }
        apply_updates(&mut batch, nib, &mut found);
        (found, out)
    }

    /// Applies updates another rank sent (see [`Pass::parents`]).
    fn apply_sent(&self, sent: &[u64], nib: &Nibbles) -> Result<Vec<Settled>, StoreError> {
        let mut found = Vec::new();
        let mut batch: Vec<(u64, Board, bool)> = Vec::with_capacity(PREFETCH_BATCH + 64);
        for &bits in sent {
            let update = Settled(bits);
            let key = update.key();
            let q = valid_key(self.n, key)
                .then(|| number_of(&settled::board_of(key)))
                .filter(|q| (self.lo..self.hi).contains(q))
                .ok_or_else(|| StoreError::Corrupted {
                    path: self.dir.clone(),
                    what: "another rank sent a position outside this rank's share".into(),
                })?;
            nib.prefetch(q - self.lo);
            batch.push((q - self.lo, update.board(), update.lost()));
            if batch.len() >= PREFETCH_BATCH {
                apply_updates(&mut batch, nib, &mut found);
            }
        }
        apply_updates(&mut batch, nib, &mut found);
        Ok(found)
    }

    /// One run for threshold `t` from its rounds' runs, each entry keyed by its index
    /// and keeping its round. The rounds' runs are read once, in order, a range of
    /// [`PART`] positions at a time: each range's entries are placed in a table by index
    /// and read back in order, which sorts them without comparing.
    fn merge_threshold(&self, sources: &[runs::Source], out: &Path) -> Result<(), StoreError> {
        let n = self.n;
        let size = index::size(n);
        let (sources, staged) = runs::reduce(sources, out)?;
        let mut cursors = sources
            .iter()
            .map(runs::Peek::open)
            .collect::<Result<Vec<_>, _>>()?;
        let mut w = RunWriter::create(out)?;
        let mut slots = vec![0u16; PART.min(size) as usize];
        let mut base = 0u64;
        while base < size {
            let len = PART.min(size - base) as usize;
            let end = base + len as u64;
            let bound = if end == size {
                u64::MAX
            } else {
                settled::key(&index::unrank(n, end))
            };
            let mut found = 0usize;
            for c in &mut cursors {
                c.take_below(bound, |e| {
                    let key = e.settled.key();
                    let i = valid_key(n, key)
                        .then(|| settled::index_of_key(key).checked_sub(base))
                        .flatten()
                        .filter(|&i| i < len as u64)
                        .ok_or_else(|| damaged_run(out))?;
                    slots[i as usize] =
                        1 | u16::from(e.settled.lost()) << 1 | u16::from(e.round) << 2;
                    found += 1;
                    Ok(())
                })?;
            }
            if found > 0 {
                for (c, chunk) in slots[..len].chunks_mut(16).enumerate() {
                    if chunk.iter().all(|&s| s == 0) {
                        continue;
                    }
                    for (j, s) in chunk.iter_mut().enumerate() {
                        if *s != 0 {
                            let i = base + (16 * c + j) as u64;
                            w.push(Entry {
                                settled: Settled::from_key(i, *s & 2 != 0),
                                round: (*s >> 2) as u8,
                            })?;
                            *s = 0;
                        }
                    }
                }
            }
            base = end;
        }
        if cursors.iter().any(|c| !c.is_done()) {
            return Err(damaged_run(out));
        }
        w.finish()?;
        for f in staged {
            let _ = std::fs::remove_file(f);
        }
        Ok(())
    }

    /// The final merge: every threshold's run, in index order, into the distances and the
    /// values files (distances first: a values file marks a finished layer), a range of
    /// [`PART`] positions at a time.
    fn write_tables(
        &self,
        progress: &Checkpoint,
        write: WriteOptions,
        distances_level: i32,
        ex: &dyn Exchange,
    ) -> Result<Option<WrittenLayer>, StoreError> {
        let n = self.n;
        let size = index::size(n);
        // Rank 0 writes; every rank sends it the positions it settled, range by range
        // (endless play, value 0, is what is left).
        let root = ex.rank() == 0;
        let mut outputs = if root {
            let values = TableWriter::create(&self.db, self.rules, n, TableKind::Values, write)?;
            let rounds = TableWriter::create(
                &self.db,
                self.rules,
                n,
                TableKind::Distances,
                WriteOptions {
                    zstd_level: distances_level,
                    ..write
                },
            )?;
            Some((values, rounds))
        } else {
            None
        };
        let mut cursors = Vec::new();
        for (t, f) in &progress.thresholds {
            let source = runs::Source::File(self.dir.join(f));
            cursors.push((*t as i8, runs::Peek::open(&source)?, self.dir.join(f)));
        }
        let mut histogram = [0u64; HISTOGRAM_LEN];
        let part = PART.min(size) as usize;
        let (mut values, mut rounds) = (vec![0u8; part], vec![0u8; part]);
        let mut base = 0u64;
        while base < size {
            let len = PART.min(size - base) as usize;
            let end = base + len as u64;
            values[..len].fill(0);
            rounds[..len].fill(0);
            for (t, c, path) in &mut cursors {
                c.take_below(end, |e| {
                    let i = e
                        .settled
                        .key()
                        .checked_sub(base)
                        .ok_or_else(|| damaged_run(path))?;
                    values[i as usize] = if e.settled.lost() { -*t } else { *t } as u8;
                    rounds[i as usize] = e.round;
                    Ok(())
                })?;
            }
            if ex.ranks() > 1 {
                // Rank 0 gets every rank's settled positions of the range: the offset in
                // the range, the value and the round, 8 bytes each.
                let mut mine = Vec::new();
                for (i, (&v, &r)) in values[..len].iter().zip(&rounds[..len]).enumerate() {
                    if v != 0 {
                        mine.push((i as u64) << 16 | u64::from(v) << 8 | u64::from(r));
                    }
                }
                for packed in ex.gather_to_root(&mine) {
                    let i = (packed >> 16) as usize;
                    if i >= len {
                        return Err(StoreError::Corrupted {
                            path: self.dir.clone(),
                            what: "another rank sent a position outside the range".into(),
                        });
                    }
                    values[i] = (packed >> 8) as u8;
                    rounds[i] = packed as u8;
                }
            }
            if let Some((values_out, rounds_out)) = &mut outputs {
                for &v in &values[..len] {
                    histogram[store::histogram_bucket(v as i8)] += 1;
                }
                rounds_out.append(&rounds[..len])?;
                values_out.append(&values[..len])?;
            }
            base = end;
        }
        if let Some((_, _, path)) = cursors.iter().find(|(_, c, _)| !c.is_done()) {
            return Err(damaged_run(path));
        }
        let Some((values_out, rounds_out)) = outputs else {
            return Ok(None);
        };
        let summary = LayerSummary {
            seeds: n,
            positions: size,
            histogram,
        };
        rounds_out.finish(summary.clone())?;
        values_out.finish(summary).map(Some)
    }
}

/// Applies a batch of (nibble, parent, child lost) updates, emptying it: a child in `L`
/// puts its parent in `W`; a child in `W` counts its parent down, and the last way out
/// with a low exit puts it in `L`.
fn apply_updates(batch: &mut Vec<(u64, Board, bool)>, nib: &Nibbles, found: &mut Vec<Settled>) {
    for &(i, parent, child_lost) in batch.iter() {
        let (update, lost) = if child_lost {
            (nib.settle(i), false)
        } else {
            (nib.count_down(i), true)
        };
        if update == Update::Settled {
            found.push(Settled::new(&parent, lost));
        }
    }
    batch.clear();
}

/// Reads a round's runs, a batch at a time.
struct Feed<'a> {
    dir: &'a Path,
    runs: &'a [Run],
    /// The run being read, and where in it (for a run in memory).
    next: usize,
    at: usize,
    reader: Option<RunReader>,
}

impl Feed<'_> {
    /// Appends up to `max − batch.len()` next entries to `batch`.
    fn fill(&mut self, batch: &mut Vec<Settled>, max: usize) -> Result<(), StoreError> {
        while batch.len() < max && self.next < self.runs.len() {
            match &self.runs[self.next] {
                Run::Memory(entries) => {
                    let take = (max - batch.len()).min(entries.len() - self.at);
                    batch.extend_from_slice(&entries[self.at..self.at + take]);
                    self.at += take;
                    if self.at == entries.len() {
                        self.next += 1;
                        self.at = 0;
                    }
                }
                Run::File(f) => {
                    if self.reader.is_none() {
                        self.reader = Some(RunReader::open(&self.dir.join(&f.file))?);
                    }
                    let reader = self.reader.as_mut().expect("just opened");
                    while batch.len() < max {
                        match reader.next_entry()? {
                            Some(e) => batch.push(e.settled),
                            None => {
                                self.reader = None;
                                self.next += 1;
                                break;
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }
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

/// The prefix of the files of round `round` of threshold `t`.
fn round_prefix(t: u32, round: u32) -> String {
    format!("t{t:02}-r{round:04}")
}

/// Collects the positions a round settles, sorted into runs: kept in memory while the
/// threshold's runs fit in the buffer, written to a file when they do not.
struct Spiller<'a> {
    dir: &'a Path,
    prefix: String,
    round: u8,
    /// Entries the buffer holds: the threshold's runs kept in memory and this round's
    /// entries not yet sorted.
    budget: u64,
    /// Entries of the threshold's runs kept in memory.
    held: &'a AtomicU64,
    buffer: Mutex<Vec<Settled>>,
    runs: Mutex<Vec<Run>>,
    next_file: AtomicU64,
}

impl<'a> Spiller<'a> {
    fn new(pass: &'a Pass, t: u32, round: u32, held: &'a AtomicU64) -> Spiller<'a> {
        Spiller {
            dir: &pass.dir,
            prefix: round_prefix(t, round),
            round: round.min(u32::from(DISTANCE_SATURATED)) as u8,
            budget: (pass.plan.buffer_bytes / ENTRY_BYTES).max(2),
            held,
            buffer: Mutex::new(Vec::new()),
            runs: Mutex::new(Vec::new()),
            next_file: AtomicU64::new(0),
        }
    }

    fn push(&self, mut found: Vec<Settled>) -> Result<(), StoreError> {
        let full = {
            let mut buffer = self.buffer.lock().unwrap_or_else(|e| e.into_inner());
            if buffer.capacity() == 0 {
                // Its quarter of the budget and room for one more batch's entries, once:
                // grown by doubling, the buffer would reach twice its budget.
                buffer.reserve((self.budget / 4) as usize + SPILL_SLACK);
            }
            buffer.append(&mut found);
            // A quarter of the budget: the next entries fill another quarter while a run
            // is written, and the runs kept in memory take the other half.
            if (buffer.len() as u64) < (self.budget / 4).max(1) {
                return Ok(());
            }
            std::mem::take(&mut *buffer)
        };
        self.write(full)
    }

    fn write(&self, mut entries: Vec<Settled>) -> Result<(), StoreError> {
        if entries.is_empty() {
            return Ok(());
        }
        entries.par_sort_unstable_by_key(|s| s.key());
        let k = self.next_file.fetch_add(1, Relaxed);
        let file = format!("{}-{k:05}.run", self.prefix);
        runs::write_run(&self.dir.join(&file), &entries, self.round)?;
        let run = Run::File(RunFile {
            file,
            entries: entries.len() as u64,
        });
        self.runs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(run);
        Ok(())
    }

    fn finish(self) -> Result<Vec<Run>, StoreError> {
        let mut rest = std::mem::take(&mut *self.buffer.lock().unwrap_or_else(|e| e.into_inner()));
        let len = rest.len() as u64;
        if len > 0 && self.held.load(Relaxed) + len <= self.budget / 2 {
            rest.par_sort_unstable_by_key(|s| s.key());
            // Kept for the rest of the threshold: only its entries, not the reserve.
            rest.shrink_to_fit();
            self.held.fetch_add(len, Relaxed);
            self.runs
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(Run::Memory(rest));
        } else {
            self.write(rest)?;
        }
        Ok(self.runs.into_inner().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Where a layer's pass stands, as saved in `checkpoint` in the scratch folder.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Checkpoint {
    rules: Rules,
    seeds: u32,
    /// Thresholds above this one are done; 0 when all are.
    next_threshold: u32,
    /// The runs of each round of `next_threshold` done so far.
    rounds: Vec<Vec<RunFile>>,
    /// Each finished threshold's run.
    thresholds: Vec<(u32, String)>,
    /// The nibbles' snapshot.
    nibbles: String,
    /// Each named file's [`chunks::digest`] when it was saved, which a resume checks: a
    /// file is bound to its place in the checkpoint, not only to its name.
    digests: Vec<(String, u64)>,
    /// The files the checkpoint on disk names (not saved in it).
    saved: Vec<String>,
    /// Files no longer needed that the checkpoint on disk still names: removed once the
    /// next one is saved (not saved in it).
    stale: Vec<String>,
}

const CHECKPOINT: &str = "checkpoint";
const CHECKPOINT_MAGIC: &str = "awari lean checkpoint 2";

impl Checkpoint {
    fn start(rules: Rules, seeds: u32) -> Checkpoint {
        Checkpoint {
            rules,
            seeds,
            next_threshold: seeds,
            rounds: Vec::new(),
            thresholds: Vec::new(),
            nibbles: String::new(),
            digests: Vec::new(),
            saved: Vec::new(),
            stale: Vec::new(),
        }
    }

    /// A file is no longer needed: removed now, or after the next checkpoint if the one
    /// on disk names it.
    fn discard(&mut self, dir: &Path, file: &str) {
        if self.saved.iter().any(|f| f == file) {
            self.stale.push(file.to_string());
        } else {
            let _ = std::fs::remove_file(dir.join(file));
        }
    }

    fn encode(&self) -> String {
        let mut s = format!(
            "{CHECKPOINT_MAGIC}\nrules {}\nlayer {}\nnext-threshold {}\nnibbles {}\n",
            self.rules.name(),
            self.seeds,
            self.next_threshold,
            self.nibbles
        );
        for (t, f) in &self.thresholds {
            s += &format!("threshold {t} {f}\n");
        }
        for (r, files) in self.rounds.iter().enumerate() {
            s += &format!("round {r}\n");
            for f in files {
                s += &format!("run {} {}\n", f.entries, f.file);
            }
        }
        for (f, d) in &self.digests {
            s += &format!("file {d:016x} {f}\n");
        }
        let sum = xxhash_rust::xxh3::xxh3_64(s.as_bytes());
        s + &format!("sum {sum:016x}\n")
    }

    fn decode(text: &str) -> Option<Checkpoint> {
        let body_end = text.rfind("sum ")?;
        let (body, tail) = text.split_at(body_end);
        let sum = u64::from_str_radix(tail.strip_prefix("sum ")?.trim(), 16).ok()?;
        if xxhash_rust::xxh3::xxh3_64(body.as_bytes()) != sum {
            return None;
        }
        let mut lines = body.lines();
        if lines.next()? != CHECKPOINT_MAGIC {
            return None;
        }
        let mut field = |name: &str| -> Option<String> {
            lines
                .next()?
                .strip_prefix(name)?
                .strip_prefix(' ')
                .map(str::to_string)
        };
        let rules: Rules = field("rules")?.parse().ok()?;
        let seeds = field("layer")?.parse().ok()?;
        let next_threshold = field("next-threshold")?.parse().ok()?;
        let nibbles = field("nibbles")?;
        let mut cp = Checkpoint {
            rules,
            seeds,
            next_threshold,
            rounds: Vec::new(),
            thresholds: Vec::new(),
            nibbles,
            digests: Vec::new(),
            saved: Vec::new(),
            stale: Vec::new(),
        };
        for line in lines {
            let words: Vec<&str> = line.split(' ').collect();
            match words.as_slice() {
                ["threshold", t, f] => cp.thresholds.push((t.parse().ok()?, f.to_string())),
                ["round", _] => cp.rounds.push(Vec::new()),
                ["run", entries, f] => cp.rounds.last_mut()?.push(RunFile {
                    file: f.to_string(),
                    entries: entries.parse().ok()?,
                }),
                ["file", d, f] => cp
                    .digests
                    .push((f.to_string(), u64::from_str_radix(d, 16).ok()?)),
                _ => return None,
            }
        }
        Some(cp)
    }

    /// Every file the checkpoint needs.
    fn files(&self) -> Vec<&str> {
        let mut f = vec![CHECKPOINT, "exits.bin", self.nibbles.as_str()];
        f.extend(self.thresholds.iter().map(|(_, f)| f.as_str()));
        f.extend(self.rounds.iter().flatten().map(|r| r.file.as_str()));
        f
    }

    /// The checkpoint in `dir`, if there is a valid one for this layer; every file it
    /// does not name is removed. A checkpoint that does not decode, or that names a
    /// missing file, is an error: the folder is not what this program left.
    fn load(dir: &Path, rules: Rules, seeds: u32) -> Result<Option<Checkpoint>, StoreError> {
        let path = dir.join(CHECKPOINT);
        let bytes = match std::fs::read(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(chunks::io_err(&path, e)),
        };
        let damaged = |what: &str| StoreError::Corrupted {
            path: path.clone(),
            what: format!("{what}; remove the folder to build the layer from the start"),
        };
        // A flipped byte may leave the file not UTF-8: damage like any other, with its remedy.
        let text = String::from_utf8(bytes).map_err(|_| damaged("the checkpoint is not text"))?;
        let cp =
            Checkpoint::decode(&text).ok_or_else(|| damaged("the checkpoint does not decode"))?;
        if cp.rules != rules || cp.seeds != seeds || cp.next_threshold > seeds {
            return Err(damaged("the checkpoint is for another layer"));
        }
        for f in cp.files() {
            if !dir.join(f).is_file() {
                return Err(damaged(&format!("{f} is missing")));
            }
        }
        // Every file in its place: the one the checkpoint saved under that name, not
        // another threshold's, round's, layer's or rules preset's.
        let named: Vec<&str> = cp
            .files()
            .into_iter()
            .filter(|f| *f != CHECKPOINT)
            .collect();
        if named.len() != cp.digests.len() || named.iter().any(|f| cp.digest_of(f).is_none()) {
            return Err(damaged(
                "the checkpoint does not record every file it names",
            ));
        }
        for f in named {
            let found = chunks::digest(&dir.join(f)).ok();
            if found != cp.digest_of(f) {
                return Err(damaged(&format!(
                    "{f} is not the file this checkpoint saved"
                )));
            }
        }
        clear_dir(dir, &cp.files())?;
        let mut cp = cp;
        cp.saved = cp.files().iter().map(|f| f.to_string()).collect();
        Ok(Some(cp))
    }

    /// The digest recorded for `file`.
    fn digest_of(&self, file: &str) -> Option<u64> {
        self.digests
            .iter()
            .find(|(f, _)| f == file)
            .map(|(_, d)| *d)
    }

    fn load_nibbles(&self, dir: &Path, positions: u64) -> Result<Nibbles, StoreError> {
        let path = dir.join(&self.nibbles);
        let mut nib = Nibbles::new(positions);
        let bytes = nib.as_bytes_mut();
        let mut reader = ChunkReader::open(&path)?;
        let mut at = 0usize;
        while let Some(chunk) = reader.next_chunk()? {
            let end = at + chunk.len();
            if end > bytes.len() {
                break;
            }
            bytes[at..end].copy_from_slice(&chunk);
            at = end;
        }
        if at != bytes.len() {
            return Err(StoreError::Corrupted {
                path,
                what: "the nibbles snapshot has the wrong size".into(),
            });
        }
        Ok(nib)
    }

    /// Saves the nibbles under a new name, then the checkpoint naming them (each synced,
    /// then renamed into place), then removes the snapshot it replaces.
    fn save(&mut self, dir: &Path, nib: &mut Nibbles) -> Result<(), StoreError> {
        let name = format!(
            "nibbles-{:02}-{:04}.bin",
            self.next_threshold,
            self.rounds.len()
        );
        let old = std::mem::replace(&mut self.nibbles, name.clone());
        if old == name {
            // Saved at this very point already (a checkpoint after a round that settled
            // nothing): nothing changed.
            return Ok(());
        }
        let path = dir.join(&name);
        let mut w = ChunkWriter::create(&path)?;
        let bytes = nib.snapshot();
        let packed: Vec<Vec<u8>> = bytes.par_chunks(1 << 20).map(chunks::compress).collect();
        for (raw, p) in bytes.chunks(1 << 20).zip(&packed) {
            w.write_compressed(raw.len(), p)?;
        }
        w.finish()?;
        // Every file the checkpoint names is made durable before it is saved, and its
        // digest recorded (files are written once: a file already saved keeps its own).
        let named: Vec<String> = self
            .files()
            .into_iter()
            .filter(|f| *f != CHECKPOINT)
            .map(str::to_string)
            .collect();
        let mut digests = Vec::with_capacity(named.len());
        for f in named {
            let kept = self.digest_of(&f).filter(|_| self.saved.contains(&f));
            let digest = match kept {
                Some(d) => d,
                None => {
                    let path = dir.join(&f);
                    chunks::sync(&path)?;
                    chunks::digest(&path)?
                }
            };
            digests.push((f, digest));
        }
        self.digests = digests;
        let tmp = dir.join("checkpoint.tmp");
        let text = self.encode();
        let written = std::fs::File::create(&tmp).and_then(|mut f| {
            use std::io::Write;
            f.write_all(text.as_bytes())?;
            f.sync_all()
        });
        written.map_err(|e| chunks::io_err(&tmp, e))?;
        let target = dir.join(CHECKPOINT);
        std::fs::rename(&tmp, &target).map_err(|e| chunks::io_err(&target, e))?;
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        if !old.is_empty() {
            let _ = std::fs::remove_file(dir.join(old));
        }
        for f in self.stale.drain(..) {
            let _ = std::fs::remove_file(dir.join(f));
        }
        self.saved = self.files().iter().map(|f| f.to_string()).collect();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoints_round_trip_and_refuse_edits() {
        let mut cp = Checkpoint::start(Rules::AWARI, 12);
        cp.next_threshold = 7;
        cp.nibbles = "nibbles-07-0002.bin".into();
        cp.thresholds.push((12, "threshold-12.run".into()));
        cp.rounds.push(vec![]);
        cp.rounds.push(vec![RunFile {
            file: "t07-r0001-00000.run".into(),
            entries: 42,
        }]);
        let text = cp.encode();
        assert_eq!(Checkpoint::decode(&text), Some(cp));
        let edited = text.replace("next-threshold 7", "next-threshold 6");
        assert_eq!(Checkpoint::decode(&edited), None);
    }

    /// A checkpoint saved with its files, then each way of putting another file in one's
    /// place: swapped thresholds, a copy of another threshold's run, an exits file of
    /// another layer, a file cut short. Each is refused on resume, naming the file; the
    /// untouched folder resumes.
    #[test]
    fn a_checkpoint_refuses_files_that_are_not_its_own() {
        let chunk_file = |path: &Path, fill: u8, len: usize| {
            let mut w = ChunkWriter::create(path).unwrap();
            w.write(&vec![fill; len]).unwrap();
            w.write(&[fill, 1, 2, 3]).unwrap();
            w.finish().unwrap();
        };
        let run = |path: &Path, first: u64| {
            let n = 12;
            let entries: Vec<Settled> = (first..first + 50)
                .map(|i| Settled::new(&index::unrank(n, i * 7), i % 2 == 0))
                .collect();
            runs::write_run(path, &entries, 0).unwrap();
        };
        let saved = |dir: &Path| {
            chunk_file(&dir.join("exits.bin"), 3, 5000);
            run(&dir.join("threshold-12.run"), 0);
            run(&dir.join("threshold-11.run"), 100);
            run(&dir.join("t10-r0000-00000.run"), 200);
            let mut cp = Checkpoint::start(Rules::AWARI, 12);
            cp.thresholds.push((12, "threshold-12.run".into()));
            cp.thresholds.push((11, "threshold-11.run".into()));
            cp.next_threshold = 10;
            cp.rounds.push(vec![RunFile {
                file: "t10-r0000-00000.run".into(),
                entries: 50,
            }]);
            let mut nib = Nibbles::new(1000);
            cp.save(dir, &mut nib).unwrap();
            cp
        };
        let root = tempfile::tempdir().unwrap();
        let good = root.path().join("good");
        std::fs::create_dir(&good).unwrap();
        let cp = saved(&good);
        let loaded = Checkpoint::load(&good, Rules::AWARI, 12).unwrap().unwrap();
        assert_eq!(loaded.digests, cp.digests);
        assert_eq!(loaded.thresholds, cp.thresholds);

        type Damage = fn(&Path);
        let damages: [(&str, &str, Damage); 4] = [
            ("swapped thresholds", "threshold-1", |d| {
                let (a, b) = (d.join("threshold-12.run"), d.join("threshold-11.run"));
                std::fs::rename(&a, d.join("x")).unwrap();
                std::fs::rename(&b, &a).unwrap();
                std::fs::rename(d.join("x"), &b).unwrap();
            }),
            ("a copied run", "t10-r0000-00000.run", |d| {
                std::fs::copy(d.join("threshold-11.run"), d.join("t10-r0000-00000.run")).unwrap();
            }),
            ("another layer's exits", "exits.bin", |d| {
                let mut w = ChunkWriter::create(&d.join("exits.bin")).unwrap();
                w.write(&[3u8; 4999]).unwrap();
                w.write(&[3, 1, 2, 3]).unwrap();
                w.finish().unwrap();
            }),
            ("a file cut short", "threshold-11.run", |d| {
                let path = d.join("threshold-11.run");
                let bytes = std::fs::read(&path).unwrap();
                std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
            }),
        ];
        for (what, file, damage) in damages {
            let dir = root.path().join(what);
            std::fs::create_dir(&dir).unwrap();
            saved(&dir);
            damage(&dir);
            let err = Checkpoint::load(&dir, Rules::AWARI, 12)
                .err()
                .unwrap_or_else(|| panic!("{what}: resumed into it"))
                .to_string();
            assert!(
                err.contains(file) && err.contains("not the file this checkpoint saved"),
                "{what}: {err}"
            );
        }
    }
}
