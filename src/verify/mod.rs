//! Independent re-check of stored layers: every value must equal the best over its legal
//! moves, computed from the stored values of the children with the rules alone.
//!
//! The bounds tables are checked the same way ([`verify_bounds`]).
//!
//! This uses the files (read back through the store) and the move generator, never the
//! solver. Local consistency is necessary, not sufficient: inside a cycle of non-capturing
//! moves several assignments can satisfy it, which is why the solver's exactness is proven
//! separately by the tests against an independent naive solver.

mod bounds;

pub use bounds::{verify_bounds, BoundsCheck};

use crate::index;
use crate::probe::Database;
use crate::rules::Turn;
use crate::store::{self, Incomplete, LayerState, StoreError, DISTANCE_SATURATED};
use rayon::prelude::*;

/// A stored value that disagrees with its moves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The position.
    pub board: crate::Board,
    /// Its stored value.
    pub stored: i8,
    /// The best over its moves.
    pub expected: i8,
}

/// The result of checking one layer.
#[derive(Clone, Debug)]
pub struct LayerCheck {
    /// The layer.
    pub seeds: u32,
    /// Positions checked.
    pub positions: u64,
    /// Positions whose value is not the best over their moves.
    pub mismatches: u64,
    /// Whether the layer keeps its distances, checked too (false for a layer built
    /// without them).
    pub distances_checked: bool,
    /// Positions whose stored round breaks the promise of the distances (see
    /// [`crate::store::TableKind::Distances`]): a won position with no best move that
    /// captures or leads to a lower round, a lost one with a best move that does neither,
    /// or an endless-play position with a round other than 0.
    pub distance_faults: u64,
    /// The first few mismatches, in index order.
    pub examples: Vec<Mismatch>,
}

/// Why a check could not run.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// A layer the check needs is missing.
    #[error("layer {0} is missing; verify needs every layer from 0 up to the last one checked")]
    Missing(u32),
    /// A file could not be read, or is damaged.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A layer has its values but not every table a finished layer has (see
    /// [`crate::store::layer_state`]).
    #[error("layer {seeds} is incomplete ({why})")]
    Incomplete {
        /// The layer.
        seeds: u32,
        /// What is missing or damaged.
        why: Incomplete,
        /// The rule set.
        rules: crate::Rules,
        /// The database folder.
        dir: std::path::PathBuf,
    },
    /// A sampled position's value could not be read.
    #[error(transparent)]
    Probe(#[from] crate::probe::ProbeError),
}

const EXAMPLES: usize = 10;

/// Checks layers `first..=last` of `db`: block checksums, then every value against its
/// moves. Layers `0..=last` are read into memory.
pub fn verify(
    db: &Database,
    first: u32,
    last: u32,
    mut on_layer: impl FnMut(&LayerCheck),
) -> Result<Vec<LayerCheck>, VerifyError> {
    // A missing layer or a damaged block fails here, in seconds, before minutes of
    // loading and checking; reading the layers back below checks the blocks again, which
    // costs little next to the value check.
    for n in first..=last {
        check_before_loading(db, n)?;
    }
    let mut values: Vec<Vec<i8>> = Vec::new();
    let mut checks = Vec::new();
    for n in first..=last {
        let check = check_whole(db, n, &mut values)?;
        on_layer(&check);
        checks.push(check);
    }
    Ok(checks)
}

/// Layer `n` present, every block of its values sound, and every table beside them whole.
fn check_before_loading(db: &Database, n: u32) -> Result<(), VerifyError> {
    db.layer(n).ok_or(VerifyError::Missing(n))?.check_blocks()?;
    // This checks every block of the distances too.
    require_complete(db, n, Depth::Whole)
}

/// Checks every position of layer `n` with layers `0..=n` in memory: `values` holds the
/// layers read so far (from 0 up), and is extended to `n`.
fn check_whole(
    db: &Database,
    n: u32,
    values: &mut Vec<Vec<i8>>,
) -> Result<LayerCheck, VerifyError> {
    while values.len() <= n as usize {
        let seeds = values.len() as u32;
        let file = db.layer(seeds).ok_or(VerifyError::Missing(seeds))?;
        values.push(file.read_all()?);
    }
    let distances = db
        .distances_file(n)
        .map(|d| d.read_all_bytes())
        .transpose()?;
    Ok(check_layer(
        db.rules(),
        n,
        &values[..=n as usize],
        distances.as_deref(),
    ))
}

/// Checks `count` positions of each layer `first..=last`, spread evenly over its index
/// range, against their moves, as [`verify`] does for whole layers: for layers too large
/// to hold in memory. A layer of at most `count` positions is checked whole, as
/// [`verify`] checks it.
///
/// The time is about proportional to the sample and the memory stays flat whatever the
/// sample and the layer: the positions are checked in batches of a fixed size, each
/// batch's lookups sorted so every block they need is read and decompressed once for the
/// batch, and only the counts and the first few mismatches outlive a batch.
///
/// # Errors
///
/// A layer missing, or a file that cannot be read or is damaged (blocks are checked as
/// they are read; a sampled layer's blocks that no lookup needs are not read).
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

/// Positions a sampled check looks up together: a batch's lookups (about six a position)
/// need nearly every block of the layers below and of its own layer, each read and
/// decompressed once for the batch, so the larger the batch the fewer times the whole
/// database is decompressed. 2^20 positions take about 70 MB.
const BATCH: u64 = 1 << 20;
/// Positions one thread prepares or judges at a time, within a batch.
const STRIP: usize = 4096;
/// The low bits of a sorted lookup that say where its answer goes: a batch has at most
/// `BATCH * 7` slots (a position, then at most six moves). The high bits are the looked-up
/// position's index among all layers, below `index::size_up_to(48)` < 2^41.
const SLOT_BITS: u32 = 23;
const _: () = assert!(BATCH * 7 <= 1 << SLOT_BITS);
/// In the `over` of a position whose game goes on (a game over is worth at most 48).
const GOES_ON: i8 = i8::MIN;

/// Checks `picks` positions of layer `n` (fewer than the layer holds), spread evenly over
/// its index range, ends included.
fn check_sample(db: &Database, n: u32, picks: u64) -> Result<LayerCheck, VerifyError> {
    let size = index::size(n);
    // Evenly spread, ends included; in u128, as `k * (size - 1)` overflows u64 from
    // layer 28 on for a large sample.
    let spot = |k: u64| -> u64 {
        if picks <= 1 {
            0
        } else {
            (u128::from(k) * u128::from(size - 1) / u128::from(picks - 1)) as u64
        }
    };
    let has_distances = db.distances_file(n).is_some();
    let mut check = LayerCheck {
        seeds: n,
        positions: picks,
        mismatches: 0,
        distances_checked: has_distances,
        distance_faults: 0,
        examples: Vec::new(),
    };
    let mut start = 0;
    while start < picks {
        let end = (start + BATCH).min(picks);
        let (mismatches, faults, examples) = check_batch(db, n, start..end, &spot)?;
        check.mismatches += mismatches;
        check.distance_faults += faults;
        let room = EXAMPLES - check.examples.len();
        check.examples.extend(examples.into_iter().take(room));
        start = end;
    }
    Ok(check)
}

/// The first index of layer `n` among all layers, for the sorted lookups of a batch.
fn layer_base(n: u32) -> u64 {
    index::size_up_to(n) - index::size(n)
}

/// Checks the sampled positions `ks` (their indices given by `spot`) of layer `n`: their
/// mismatches, distance faults and first mismatches.
fn check_batch(
    db: &Database,
    n: u32,
    ks: std::ops::Range<u64>,
    spot: &(impl Fn(u64) -> u64 + Sync),
) -> Result<(u64, u64, Vec<Mismatch>), VerifyError> {
    use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
    let rules = db.rules();
    let len = (ks.end - ks.start) as usize;
    let strips = len.div_ceil(STRIP);
    // First the moves of each position, to size the lookups exactly (a second move
    // generation costs less than room for the most moves a position can have).
    let mut moves = vec![0u8; len];
    let mut over = vec![GOES_ON; len];
    moves
        .par_chunks_mut(STRIP)
        .zip(over.par_chunks_mut(STRIP))
        .enumerate()
        .for_each(|(strip, (moves, over))| {
            for j in 0..moves.len() {
                let i = spot(ks.start + (strip * STRIP + j) as u64);
                match rules.turn(&index::unrank(n, i)) {
                    Turn::GameOver { value } => over[j] = value,
                    Turn::Moves(list) => moves[j] = list.len() as u8,
                }
            }
        });
    // A position's slots: its own, then one per move in order; a strip's are together.
    let mut bases = Vec::with_capacity(strips + 1);
    bases.push(0usize);
    for strip in moves.chunks(STRIP) {
        let slots: usize = strip.iter().map(|&m| 1 + usize::from(m)).sum();
        bases.push(bases.last().unwrap() + slots);
    }
    let slots = bases[strips];
    let mut keys = vec![0u64; slots];
    let mut captured = vec![0u8; slots];
    let mut key_strips = Vec::with_capacity(strips);
    let mut captured_strips = Vec::with_capacity(strips);
    let (mut key_rest, mut captured_rest) = (&mut keys[..], &mut captured[..]);
    for strip in 0..strips {
        let width = bases[strip + 1] - bases[strip];
        let (k, kr) = std::mem::take(&mut key_rest).split_at_mut(width);
        let (c, cr) = std::mem::take(&mut captured_rest).split_at_mut(width);
        key_strips.push(k);
        captured_strips.push(c);
        (key_rest, captured_rest) = (kr, cr);
    }
    key_strips
        .into_par_iter()
        .zip(captured_strips)
        .enumerate()
        .for_each(|(strip, (keys, captured))| {
            let mut at = 0;
            for j in strip * STRIP..((strip + 1) * STRIP).min(len) {
                let i = spot(ks.start + j as u64);
                let slot = (bases[strip] + at) as u64;
                keys[at] = (layer_base(n) + i) << SLOT_BITS | slot;
                at += 1;
                if let Turn::Moves(list) = rules.turn(&index::unrank(n, i)) {
                    for mv in &list {
                        let child = n - u32::from(mv.captured);
                        let key = layer_base(child) + index::rank(&mv.child);
                        keys[at] = key << SLOT_BITS | (bases[strip] + at) as u64;
                        captured[at] = mv.captured;
                        at += 1;
                    }
                }
            }
        });
    keys.par_sort_unstable();
    // The sorted lookups cut where the block changes: (layer, block, first, end).
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
    let values: Vec<AtomicU8> = (0..slots).map(|_| AtomicU8::new(0)).collect();
    let rounds: Vec<AtomicU8> = (0..slots).map(|_| AtomicU8::new(0)).collect();
    groups
        .par_iter()
        .try_for_each(|&(layer, block, first, end)| -> Result<(), VerifyError> {
            let file = db.layer(layer).ok_or(VerifyError::Missing(layer))?;
            let base = layer_base(layer) + block * u64::from(file.block_size());
            let bytes = file.read_block_bytes(block)?;
            // Only the layer's own rounds are read: a round matters for the position
            // itself and for moves that do not capture.
            let distances = match db.distances_file(n) {
                Some(d) if layer == n => Some(d.read_block_bytes(block)?),
                _ => None,
            };
            for &key in &keys[first..end] {
                let within = ((key >> SLOT_BITS) - base) as usize;
                let slot = (key & ((1 << SLOT_BITS) - 1)) as usize;
                values[slot].store(bytes[within], Relaxed);
                if let Some(d) = &distances {
                    rounds[slot].store(d[within], Relaxed);
                }
            }
            Ok(())
        })?;
    drop(keys);
    let has_distances = db.distances_file(n).is_some();
    let value = |slot: usize| values[slot].load(Relaxed) as i8;
    let round = |slot: usize| rounds[slot].load(Relaxed);
    let judged = (0..strips)
        .into_par_iter()
        .map(|strip| {
            let (mut bad, mut faults, mut found) = (0u64, 0u64, Vec::new());
            let mut slot = bases[strip];
            for j in strip * STRIP..((strip + 1) * STRIP).min(len) {
                let own_slot = slot;
                slot += 1 + usize::from(moves[j]);
                let slot = own_slot;
                let stored = value(slot);
                let own = round(slot);
                let (expected, fault) = if over[j] != GOES_ON {
                    (over[j], has_distances && own != 0)
                } else {
                    let children = slot + 1..=slot + usize::from(moves[j]);
                    let worth = |c: usize| captured[c] as i8 - value(c);
                    let expected = children
                        .clone()
                        .map(worth)
                        .max()
                        .expect("a position that is not over has a move");
                    // As `round_keeps_its_promise`: along best play the rounds fall
                    // until a capture.
                    let fault = has_distances
                        && if stored == 0 {
                            own != 0
                        } else if own == DISTANCE_SATURATED {
                            false
                        } else {
                            let mut best = children
                                .filter(|&c| worth(c) == stored)
                                .map(|c| captured[c] > 0 || round(c) < own);
                            if stored > 0 {
                                !best.any(|p| p)
                            } else {
                                !best.all(|p| p)
                            }
                        };
                    (expected, fault)
                };
                faults += u64::from(fault);
                if stored != expected {
                    bad += 1;
                    if found.len() < EXAMPLES {
                        found.push(Mismatch {
                            board: index::unrank(n, spot(ks.start + j as u64)),
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

/// How closely [`require_complete`] looks at the tables beside the values.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Depth {
    /// Present, header and every block checksum sound.
    Whole,
    /// Present: a sampled check reads only some blocks of a layer (each checked as read).
    Present,
}

/// Fails layer `n` unless every table of [`store::companion_tables`] is beside its values:
/// whole, as [`store::layer_state`] checks it, or (for a sampled check) present.
fn require_complete(db: &Database, n: u32, depth: Depth) -> Result<(), VerifyError> {
    let incomplete = |why| VerifyError::Incomplete {
        seeds: n,
        why,
        rules: db.rules(),
        dir: db.dir().to_path_buf(),
    };
    if depth == Depth::Present {
        for &kind in store::companion_tables(db.rules(), n) {
            let path = store::table_path(db.dir(), db.rules(), n, kind);
            if std::fs::symlink_metadata(&path).is_err() {
                return Err(incomplete(Incomplete::Missing { kind, path }));
            }
        }
        return Ok(());
    }
    match store::layer_state(db.dir(), db.rules(), store::Tables::Values, n)? {
        LayerState::Incomplete(why) => Err(incomplete(why)),
        LayerState::Missing => Err(VerifyError::Missing(n)),
        LayerState::Complete => Ok(()),
    }
}

/// Whether the round of a position agrees with its moves: along best play the rounds fall
/// until a capture (see [`crate::store::TableKind::Distances`]).
fn round_keeps_its_promise(
    rules: crate::Rules,
    board: &crate::Board,
    value: i8,
    round: u8,
    layers: &[Vec<i8>],
    distances: &[u8],
) -> bool {
    if value == 0 {
        return round == 0;
    }
    let Turn::Moves(moves) = rules.turn(board) else {
        return round == 0;
    };
    if round == DISTANCE_SATURATED {
        return true;
    }
    let n = board.seeds();
    // For each best move: whether it makes progress (captures, or leads to a lower round).
    let mut best = moves.iter().filter_map(|m| {
        let child_layer = &layers[(n - u32::from(m.captured)) as usize];
        let at = index::rank(&m.child) as usize;
        let worth = m.captured as i8 - child_layer[at];
        (worth == value).then(|| m.captured > 0 || distances[at] < round)
    });
    if value > 0 {
        best.any(|progress| progress)
    } else {
        best.all(|progress| progress)
    }
}

fn check_layer(
    rules: crate::Rules,
    n: u32,
    values: &[Vec<i8>],
    distances: Option<&[u8]>,
) -> LayerCheck {
    let size = index::size(n);
    const CHUNK: u64 = 1 << 14;
    let (mismatches, faults, mut examples) = (0..size.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let start = c * CHUNK;
            let end = (start + CHUNK).min(size);
            let mut count = 0u64;
            let mut faults = 0u64;
            let mut found = Vec::new();
            for (i, board) in index::walk(n, start, end) {
                let expected = match rules.turn(&board) {
                    Turn::GameOver { value } => value,
                    Turn::Moves(moves) => moves
                        .iter()
                        .map(|m| {
                            let child_seeds = n - u32::from(m.captured);
                            let child =
                                values[child_seeds as usize][index::rank(&m.child) as usize];
                            m.captured as i8 - child
                        })
                        .max()
                        .expect("a position that is not over has a move"),
                };
                let stored = values[n as usize][i as usize];
                if let Some(d) = distances {
                    if !round_keeps_its_promise(rules, &board, stored, d[i as usize], values, d) {
                        faults += 1;
                    }
                }
                if stored != expected {
                    count += 1;
                    if found.len() < EXAMPLES {
                        found.push(Mismatch {
                            board,
                            stored,
                            expected,
                        });
                    }
                }
            }
            (count, faults, found)
        })
        .reduce(
            || (0, 0, Vec::new()),
            |(a, f, mut x), (b, g, y)| {
                x.extend(y);
                (a + b, f + g, x)
            },
        );
    examples.truncate(EXAMPLES);
    LayerCheck {
        seeds: n,
        positions: size,
        mismatches,
        distances_checked: distances.is_some(),
        distance_faults: faults,
        examples,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solve::{solve_layer, Quiet};
    use crate::Rules;

    /// Layers 0..=10 of every preset, solved in memory, with their rounds.
    fn solved(rules: Rules) -> (Vec<Vec<i8>>, Vec<Vec<u8>>) {
        let (mut values, mut rounds) = (Vec::new(), Vec::new());
        for n in 0..=10 {
            let layer = solve_layer(rules, n, &values, &Quiet);
            values.push(layer.values);
            rounds.push(layer.distances);
        }
        (values, rounds)
    }

    #[test]
    fn the_rounds_of_every_small_position_lead_best_play_out_of_the_layer() {
        for rules in Rules::ALL {
            let (values, rounds) = solved(rules);
            for n in 0..=10u32 {
                let check =
                    check_layer(rules, n, &values[..=n as usize], Some(&rounds[n as usize]));
                assert_eq!(check.mismatches, 0, "{rules} layer {n}");
                assert_eq!(check.distance_faults, 0, "{rules} layer {n}");
                assert!(rounds[n as usize].iter().all(|&r| r != DISTANCE_SATURATED));
            }
        }
    }

    #[test]
    fn a_wrong_round_is_caught() {
        let rules = Rules::AWARI;
        let (values, rounds) = solved(rules);
        let n = 10u32;
        // A won position that needs in-layer moves before it captures: round 1 or more.
        let at = (0..rounds[10].len())
            .find(|&i| values[10][i] > 0 && rounds[10][i] >= 2)
            .expect("layer 10 has won positions that take a few moves to convert");
        let mut wrong = rounds[10].clone();
        wrong[at] = 0;
        let check = check_layer(rules, n, &values, Some(&wrong));
        assert!(
            check.distance_faults >= 1,
            "a won position's round set to 0"
        );
        // And a draw with a round: also wrong.
        let draw = (0..rounds[10].len()).find(|&i| values[10][i] == 0).unwrap();
        let mut wrong = rounds[10].clone();
        wrong[draw] = 3;
        assert!(check_layer(rules, n, &values, Some(&wrong)).distance_faults >= 1);
    }
}
