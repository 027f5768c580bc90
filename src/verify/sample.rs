//! The values' check on a sample of a layer too large to hold ([`verify_sampled`]): the
//! runs drawn at random (also for the bounds' and the own-row values' sampled checks), and
//! the batches that check them, each block they need read once a batch.

use super::{check_before_loading, check_whole, require_complete, Depth};
use super::{LayerCheck, Mismatch, VerifyError, EXAMPLES};
use crate::index;
use crate::probe::Database;
use crate::rules::Turn;
use crate::store::DISTANCE_SATURATED;
use rayon::prelude::*;
use std::sync::atomic::{AtomicI8, AtomicU8, Ordering::Relaxed};

/// Checks `count` positions of each layer `first..=last` against their moves, as
/// [`verify`] does for whole layers: for layers too large to hold in memory. A layer of at
/// most `count` positions is checked whole, as [`verify`] checks it.
///
/// The sample is made of runs of consecutive positions: the layer is cut where its values
/// file cuts its blocks (halves, quarters … of blocks while a sample would be fewer than
/// 512 runs, so that a small one stays spread over the layer), and runs are drawn at random
/// without replacement (seeded by the layer, so the same command checks the same positions)
/// until they hold `count` positions, the last one drawn cut to fit. Every position is as
/// likely to be checked as any other; a run's positions are checked with every move,
/// against the stored values of the children wherever they lie (lower layers included), and
/// with their rounds. A block decompressed for the sample's own values is so used whole,
/// and its positions are walked in order rather than unranked one by one.
///
/// The memory stays flat whatever the sample and the layer: the runs are checked in
/// batches of a fixed number of positions, each batch's lookups of children sorted so every
/// block they need is read and decompressed once for the batch, and only the counts and the
/// first few mismatches outlive a batch.
///
/// # Errors
///
/// A layer missing, or a file that cannot be read or is damaged (blocks are checked as
/// they are read; a sampled layer's blocks that no lookup needs are not read).
///
/// [`verify`]: super::verify()
pub fn verify_sampled(
    db: &Database,
    first: u32,
    last: u32,
    count: u64,
    mut on_layer: impl FnMut(&LayerCheck),
) -> Result<Vec<LayerCheck>, VerifyError> {
    let mut checks = Vec::new();
    // The layers checked whole; those below one serve the next (layers grow with their
    // seeds, so the whole ones come first and are dropped once the sampling starts).
    let mut values: Vec<Vec<i8>> = Vec::new();
    for n in first..=last {
        db.layer(n).ok_or(VerifyError::Missing(n))?;
        let check = if count >= index::size(n) {
            check_before_loading(db, n)?;
            check_whole(db, n, &mut values)?
        } else {
            values = Vec::new();
            require_complete(db, n, Depth::Present)?;
            check_sample(db, n, count)?
        };
        on_layer(&check);
        checks.push(check);
    }
    Ok(checks)
}

/// Positions a sampled check checks together: a batch's lookups of children (about five a
/// position) need nearly every block of the layers below and of its own layer, each read
/// and decompressed once for the batch, so the larger the batch the fewer times those
/// layers are decompressed (the time that is not the sample's own). A position takes 53
/// bytes (six keys and five bytes): 1.5 Mi positions about 80 MB.
const BATCH: u64 = 3 << 19;
/// The low bits of a sorted lookup that say which position's move it is: its number in
/// the batch. The high bits are the looked-up position's index among all layers, below
/// `index::size_up_to(48)` < 2^41.
const SLOT_BITS: u32 = 23;
const _: () = assert!(BATCH <= 1 << SLOT_BITS);
/// Keys a position has room for, one for each of its moves at most.
const MOVES: usize = 6;
/// In the `over` of a position whose game goes on (a game over is worth at most 48).
const GOES_ON: i8 = i8::MIN;

/// Runs a sample is drawn as, at least, when it holds that many positions.
const MIN_RUNS: u64 = 512;

/// The positions of a run for a sample of `picks` positions from a layer stored in blocks
/// of `block`: a block, so that a block read for the sample's own values is used whole,
/// halved while the sample would be fewer than [`MIN_RUNS`] runs, so that a small sample
/// is still spread over the layer (a sample of 100,000 positions in whole blocks would be
/// six places of a layer of billions).
pub(super) fn run_length(block: u32, picks: u64) -> u64 {
    let mut run = u64::from(block).max(1);
    while run > 1 && picks / run < MIN_RUNS {
        run = run.div_ceil(2);
    }
    run
}

/// The runs of a sample of `picks` positions of layer `n` (fewer than the layer holds),
/// cut at multiples of `run`: `(first index, positions)`, in index order. Drawn by a
/// generator seeded with the layer, so a check repeats.
pub(super) fn sample_runs(n: u32, picks: u64, run: u64) -> Vec<(u64, u64)> {
    let size = index::size(n);
    let runs = size.div_ceil(run);
    let mut rng = crate::search::Rng::new(0x5EED_0FA5_A3B1_E5ED ^ u64::from(n));
    // A partial Fisher–Yates shuffle over the run numbers, kept sparse (the swapped ones
    // only): a big layer has hundreds of thousands of runs and a sample may need few.
    let mut moved: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
    let mut chosen = Vec::new();
    let mut left = picks;
    let mut drawn = 0;
    while left > 0 && drawn < runs {
        let j = drawn + below(&mut rng, runs - drawn);
        let at_j = *moved.get(&j).unwrap_or(&j);
        let at_drawn = *moved.get(&drawn).unwrap_or(&drawn);
        moved.insert(j, at_drawn);
        drawn += 1;
        let start = at_j * run;
        let len = (size - start).min(run).min(left);
        chosen.push((start, len));
        left -= len;
    }
    chosen.sort_unstable();
    chosen
}

/// A number in `0..n` (`n > 0`) from `rng`, without the bias of a plain remainder.
fn below(rng: &mut crate::search::Rng, n: u64) -> u64 {
    ((u128::from(rng.next_u64()) * u128::from(n)) >> 64) as u64
}

/// Checks `picks` positions of layer `n` (fewer than the layer holds), in runs drawn at
/// random (see [`verify_sampled`]).
fn check_sample(db: &Database, n: u32, picks: u64) -> Result<LayerCheck, VerifyError> {
    let file = db.layer(n).ok_or(VerifyError::Missing(n))?;
    let runs = sample_runs(n, picks, run_length(file.block_size(), picks));
    let has_distances = db.distances_file(n).is_some();
    let mut check = LayerCheck {
        seeds: n,
        positions: picks,
        mismatches: 0,
        distances_checked: has_distances,
        distance_faults: 0,
        examples: Vec::new(),
    };
    let mut at = 0;
    while at < runs.len() {
        // Whole runs up to BATCH positions (a run is at most a block, far below it).
        let mut end = at;
        let mut held = 0;
        while end < runs.len() && (end == at || held + runs[end].1 <= BATCH) {
            held += runs[end].1;
            end += 1;
        }
        let (mismatches, faults, examples) = check_batch(db, n, &runs[at..end])?;
        check.mismatches += mismatches;
        check.distance_faults += faults;
        let room = EXAMPLES - check.examples.len();
        check.examples.extend(examples.into_iter().take(room));
        at = end;
    }
    Ok(check)
}

/// The first index of layer `n` among all layers, for the sorted lookups of a batch.
fn layer_base(n: u32) -> u64 {
    index::size_up_to(n) - index::size(n)
}

/// In a position's `best` flags: a best move (one worth the stored value) that makes
/// progress (captures, or leads to a lower round), and one that does not.
const PROGRESS: u8 = 1;
const NO_PROGRESS: u8 = 2;

/// One batch of runs of layer `n` as [`check_batch`] reads it: each position's stored
/// value, round and game-over value, and its children's lookups.
struct Batch {
    /// Each run's first position's number within the batch.
    firsts: Vec<usize>,
    /// A lookup of each child: its global number above [`SLOT_BITS`], the position's
    /// number in the batch below; sorted.
    keys: Vec<u64>,
    /// Stored values, by position.
    stored: Vec<u8>,
    /// Stored rounds, by position (empty without distances).
    rounds: Vec<u8>,
    /// Game-over values ([`GOES_ON`] for a game that goes on), by position.
    over: Vec<i8>,
}

impl Batch {
    /// A position's own value and round, by its number in the batch.
    fn own(&self, p: usize) -> (i8, u8) {
        let round = self.rounds.get(p).copied().unwrap_or(0);
        (self.stored[p] as i8, round)
    }
}

/// Checks the runs `runs` of layer `n`: their mismatches, distance faults and first
/// mismatches.
///
/// A position's stored value and round are known from its run's block before its children
/// are looked up, so each child's answer is folded into the position as it arrives: the
/// best worth so far and whether a best move makes progress. A batch so holds a lookup key
/// a move and five bytes a position, which is what lets it hold many positions.
fn check_batch(
    db: &Database,
    n: u32,
    runs: &[(u64, u64)],
) -> Result<(u64, u64, Vec<Mismatch>), VerifyError> {
    let mut batch = read_batch(db, n, runs)?;
    let groups = block_groups(db, &batch.keys)?;
    let (best_worth, best_moves) = fold_children(db, n, &batch, &groups)?;
    batch.keys = Vec::new();
    let has_distances = db.distances_file(n).is_some();
    let judged = runs
        .par_iter()
        .zip(&batch.firsts)
        .map(|(&(start, len), &first)| {
            let (mut bad, mut faults, mut found) = (0u64, 0u64, Vec::new());
            for j in 0..len as usize {
                let p = first + j;
                let (stored, round) = batch.own(p);
                let (expected, fault) = if batch.over[p] != GOES_ON {
                    (batch.over[p], has_distances && round != 0)
                } else {
                    let expected = best_worth[p].load(Relaxed);
                    let best = best_moves[p].load(Relaxed);
                    let fault = has_distances
                        && if stored == 0 {
                            round != 0
                        } else if round == DISTANCE_SATURATED {
                            false
                        } else if stored > 0 {
                            best & PROGRESS == 0
                        } else {
                            best & NO_PROGRESS != 0
                        };
                    (expected, fault)
                };
                faults += u64::from(fault);
                if stored != expected {
                    bad += 1;
                    if found.len() < EXAMPLES {
                        found.push(Mismatch {
                            board: index::unrank(n, start + j as u64),
                            stored,
                            expected,
                        });
                    }
                }
            }
            (bad, faults, found)
        })
        .reduce(
            || (0, 0, Vec::new()),
            |(a, f, mut x), (b, g, y)| {
                x.extend(y);
                x.truncate(EXAMPLES);
                (a + b, f + g, x)
            },
        );
    Ok(judged)
}

/// Reads the runs of a batch: one pass over each run, its own blocks read (so used whole),
/// its positions walked in order, their moves generated once; the lookups then sorted.
fn read_batch(db: &Database, n: u32, runs: &[(u64, u64)]) -> Result<Batch, VerifyError> {
    let rules = db.rules();
    db.layer(n).ok_or(VerifyError::Missing(n))?;
    let distances_file = db.distances_file(n);
    let has_distances = distances_file.is_some();
    let mut firsts = Vec::with_capacity(runs.len());
    let mut positions = 0usize;
    for &(_, len) in runs {
        firsts.push(positions);
        positions += len as usize;
    }
    // Six keys a position (a child's lookup, or none where it has fewer moves), and its
    // stored value, round and game-over value, each run's together, so the runs fill their
    // own parts in parallel.
    let mut keys = vec![u64::MAX; positions * MOVES];
    let mut stored = vec![0u8; positions];
    let mut rounds = vec![0u8; if has_distances { positions } else { 0 }];
    let mut over = vec![GOES_ON; positions];
    let mut parts = Vec::with_capacity(runs.len());
    let (mut k_rest, mut s_rest, mut r_rest, mut o_rest) = (
        &mut keys[..],
        &mut stored[..],
        &mut rounds[..],
        &mut over[..],
    );
    for &(_, len) in runs {
        let len = len as usize;
        let (k, kr) = std::mem::take(&mut k_rest).split_at_mut(len * MOVES);
        let (s, sr) = std::mem::take(&mut s_rest).split_at_mut(len);
        let r_len = if has_distances { len } else { 0 };
        let (r, rr) = std::mem::take(&mut r_rest).split_at_mut(r_len);
        let (o, or) = std::mem::take(&mut o_rest).split_at_mut(len);
        parts.push((k, s, r, o));
        (k_rest, s_rest, r_rest, o_rest) = (kr, sr, rr, or);
    }
    runs.par_iter().zip(&firsts).zip(parts).try_for_each(
        |((&(start, len), &first), (keys, stored, rounds, over))| -> Result<(), VerifyError> {
            for (s, v) in stored.iter_mut().zip(db.true_span(n, start, len)?) {
                *s = v as u8;
            }
            if let Some(d) = distances_file {
                rounds.copy_from_slice(&d.stored_span(start, len)?);
            }
            for (i, board) in index::walk(n, start, start + len) {
                let j = (i - start) as usize;
                match rules.turn(&board) {
                    Turn::GameOver { value } => over[j] = value,
                    Turn::Moves(list) => {
                        for (k, mv) in list.iter().enumerate() {
                            let child = n - u32::from(mv.captured);
                            let key = layer_base(child) + index::rank(&mv.child);
                            keys[j * MOVES + k] = key << SLOT_BITS | (first + j) as u64;
                        }
                    }
                }
            }
            Ok(())
        },
    )?;
    keys.retain(|&k| k != u64::MAX);
    keys.par_sort_unstable();
    Ok(Batch {
        firsts,
        keys,
        stored,
        rounds,
        over,
    })
}

/// The sorted lookups cut where the block changes: (layer, block, first, end).
fn block_groups(db: &Database, keys: &[u64]) -> Result<Vec<(u32, u64, usize, usize)>, VerifyError> {
    let mut groups: Vec<(u32, u64, usize, usize)> = Vec::new();
    let mut layer = 0;
    for (at, &key) in keys.iter().enumerate() {
        let global = key >> SLOT_BITS;
        while global >= index::size_up_to(layer) {
            layer += 1;
        }
        let file = db.layer(layer).ok_or(VerifyError::Missing(layer))?;
        let block = (global - layer_base(layer)) / u64::from(file.block_size());
        match groups.last_mut() {
            Some(g) if g.0 == layer && g.1 == block => g.3 = at + 1,
            _ => groups.push((layer, block, at, at + 1)),
        }
    }
    Ok(groups)
}

/// Each child's answer folded into its position, a block of children at a time: the best
/// worth over a position's moves, and its best moves' progress ([`PROGRESS`],
/// [`NO_PROGRESS`]).
fn fold_children(
    db: &Database,
    n: u32,
    batch: &Batch,
    groups: &[(u32, u64, usize, usize)],
) -> Result<(Vec<AtomicI8>, Vec<AtomicU8>), VerifyError> {
    let distances_file = db.distances_file(n);
    let has_distances = distances_file.is_some();
    let positions = batch.stored.len();
    let best_worth: Vec<AtomicI8> = (0..positions).map(|_| AtomicI8::new(i8::MIN)).collect();
    let best_moves: Vec<AtomicU8> = (0..positions).map(|_| AtomicU8::new(0)).collect();
    groups
        .par_iter()
        .try_for_each(|&(layer, block, first, end)| -> Result<(), VerifyError> {
            let file = db.layer(layer).ok_or(VerifyError::Missing(layer))?;
            let base = layer_base(layer) + block * u64::from(file.block_size());
            let start = block * u64::from(file.block_size());
            let bytes = db.true_span(layer, start, file.block_len(block) as u64)?;
            // Only the layer's own rounds are read: a child's round matters for the moves
            // that do not capture.
            let distances = match distances_file {
                Some(d) if layer == n => {
                    Some(d.stored_span(base - layer_base(layer), bytes.len() as u64)?)
                }
                _ => None,
            };
            let captured = (n - layer) as i8;
            for &key in &batch.keys[first..end] {
                let within = ((key >> SLOT_BITS) - base) as usize;
                let p = (key & ((1 << SLOT_BITS) - 1)) as usize;
                let worth = captured - bytes[within];
                best_worth[p].fetch_max(worth, Relaxed);
                // As `round_keeps_its_promise`: along best play the rounds fall until a
                // capture. Only the best moves for the stored value count.
                let (stored, round) = batch.own(p);
                if has_distances && worth == stored && stored != 0 && round != DISTANCE_SATURATED {
                    let progress =
                        captured > 0 || distances.as_ref().is_some_and(|d| d[within] < round);
                    let flag = if progress { PROGRESS } else { NO_PROGRESS };
                    best_moves[p].fetch_or(flag, Relaxed);
                }
            }
            Ok(())
        })?;
    Ok((best_worth, best_moves))
}
