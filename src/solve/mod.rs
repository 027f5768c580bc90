//! The retrograde pass: exact values of every position of a layer, given the layers below.
//!
//! # Method
//!
//! Within layer `n` the only moves that stay in the layer are the non-capturing ones; a
//! capturing move is an *exit* whose value (`captured − value(child)`) is already known from
//! a lower layer. For each threshold `t = n, n−1, …, 1` two sets grow together:
//!
//! * `W_t`: the mover can force a value `≥ t` — some exit gives `≥ t`, or some in-layer
//!   child is in `L_t`;
//! * `L_t`: the mover gets at most `−t` — every exit gives `≤ −t` and every in-layer child
//!   is in `W_t`.
//!
//! Endless play scores 0, which is neither `≥ t` nor `≤ −t`, so each is a reachability game
//! solved by retrograde propagation: a position that enters `L_t` puts every in-layer
//! predecessor in `W_t`; one that enters `W_t` decrements each predecessor's count of
//! in-layer children not yet in `W`, and a predecessor whose count reaches zero (and whose
//! best exit is `≤ −t`) enters `L_t`. Since `W_t ⊆ W_{t−1}`, membership and counters carry
//! over from one threshold to the next: each position is settled once, and each in-layer
//! edge is walked backwards at most once. A position first entering `W_t` has value exactly
//! `t`, one entering `L_t` exactly `−t`; whatever is left at the end is endless play, 0.
//!
//! Only the best exit matters: `W_t` needs some exit `≥ t`, `L_t` needs every exit `≤ −t`,
//! i.e. the best one. So the working state is two bytes a position: the best exit, and
//! one byte that holds the counter while the position is unsettled and its value after.
//!
//! # Distances
//!
//! The pass also records, for each settled position, the *round* in which it settled:
//! 0 when its exits alone decide it, `k + 1` when a position settled in round `k` of the
//! same threshold decided it. A won position of value `t` settles one round after its first
//! child enters `L_t`; a lost one, one round after its last child outside `W` enters `W_t`,
//! and every best move of a lost position leads to a child of value exactly `t`, settled
//! in an earlier round of the same threshold. So along perfect play the round falls at
//! every move that stays in the layer, until a capture or the end of the game: the stored
//! rounds let [`crate::probe`] play a won position out instead of going round (the role of
//! a Syzygy DTZ table). The rounds live where the best exit was, since a settled position's
//! best exit is never read again: they cost no memory. The frontier is processed round by
//! round, so the rounds, like the values, do not depend on the thread count.
//!
//! Predecessors are found by un-sowing (`unsow.rs`); each candidate is confirmed by playing
//! its move forward with the rules, which keeps every rule subtlety (feeding, grand slams)
//! in one place.
//!
//! # Parallelism
//!
//! Passes over the layer split the index range into chunks (rayon); propagation processes a
//! frontier in parallel. Shared per-position state is one atomic byte, updated by
//! compare-and-swap; there is no lock. The fixpoint does not depend
//! on the order of work, so any thread count gives the same values, byte for byte.

pub mod bounds;
pub mod lean;
pub mod own_row;
mod settled;
mod unsow;

pub(crate) use settled::Settled;

pub(crate) use unsow::{unsow, unsow_bits};

use crate::index;
use crate::rules::Rules;
use crate::store::DISTANCE_SATURATED;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

/// Best exit of a position without capturing moves.
const NO_EXIT: i8 = i8::MIN;
/// Positions per unit of parallel work in whole-layer passes.
const CHUNK: u64 = 1 << 14;
/// Positions that share one [`ExitMask`]: a divisor of [`CHUNK`] and a multiple of 64.
const SPAN: u64 = 1 << 10;
/// Parent updates gathered (and prefetched) before they are applied.
pub(crate) const PREFETCH_BATCH: usize = 64;

/// Asks the CPU to start loading the cache line of `cell`.
#[inline(always)]
pub(crate) fn prefetch<T>(cell: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; it never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(
            cell as *const T as *const i8,
            std::arch::x86_64::_MM_HINT_T0,
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = cell;
}

/// The largest layer the solver handles: every layer of the game (a frontier entry packs
/// any board of up to 48 seeds, see `settled.rs`). Memory, not the encoding, is the limit.
pub const MAX_SOLVABLE_SEEDS: u32 = crate::board::MAX_SEEDS;

/// What the pass reports while it runs, for a progress bar or a profile. Every method has
/// an empty default; the calls come from worker threads.
pub trait SolveObserver: Sync {
    /// A phase of layer `seeds` begins.
    fn phase(&self, _seeds: u32, _phase: Phase) {}
    /// `positions` more positions were handled in the current phase (or settled, in a
    /// threshold phase).
    fn advance(&self, _positions: u64) {}
    /// A threshold is done: how many positions its exits settled, in how many rounds of
    /// propagation how many more settled, and how long it took.
    fn threshold_done(&self, _seeds: u32, _t: i8, _counts: ThresholdCounts) {}
    /// Whether the caller wants the work stopped (a Ctrl-C in a program that must stay
    /// alive, unlike the CLI, which exits). Asked between chunks, rounds and thresholds;
    /// once it says yes, the pass skips what is left and its result is meaningless:
    /// [`crate::build::build`] then returns [`crate::build::BuildError::Cancelled`] without
    /// writing the layer. The lean pass is asked only between layers.
    fn cancelled(&self) -> bool {
        false
    }
}

/// The phases of a layer's pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Every position's best capturing move and count of moves staying in the layer.
    Exits,
    /// Settling the positions of value `t` and `−t`.
    Threshold(i8),
}

/// What one threshold of the pass did.
#[derive(Clone, Copy, Debug, Default)]
pub struct ThresholdCounts {
    /// Positions settled by their exits alone.
    pub by_exits: u64,
    /// Rounds of propagation.
    pub rounds: u32,
    /// Positions settled by propagation.
    pub propagated: u64,
    /// Wall time of the threshold.
    pub elapsed: std::time::Duration,
}

/// An observer that ignores everything.
#[derive(Clone, Copy, Debug, Default)]
pub struct Quiet;
impl SolveObserver for Quiet {}

/// A solved layer: values and rounds, both indexed by [`index::rank`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SolvedLayer {
    /// The value of each position.
    pub values: Vec<i8>,
    /// The round in which each position settled (see the module docs), capped at
    /// [`DISTANCE_SATURATED`]; 0 for endless play.
    pub distances: Vec<u8>,
}

/// Working memory of the pass, in bytes per position of the layer being solved (the state
/// byte and the best exit), not counting the frontier.
pub(crate) const WORK_BYTES_PER_POSITION: u64 = 2;

/// One byte of shared state per position. While a position is unsettled it holds
/// `0x80 | k`, `k` being its number of in-layer moves whose child is not yet known to be in
/// `W` (at most 6); once settled it holds the value as an `i8` (−48..=48), which never
/// collides with `0x80..=0x87`. Packing the counter and the value together makes every
/// predecessor update a single random access and a single compare-and-swap.
pub(crate) mod cell {
    pub const UNSETTLED: u8 = 0x80;
    #[inline]
    pub fn unsettled(counter: u8) -> u8 {
        UNSETTLED | counter
    }
    #[inline]
    pub fn is_unsettled(cell: u8) -> bool {
        cell & 0xF8 == UNSETTLED
    }
    #[inline]
    pub fn counter(cell: u8) -> u8 {
        cell & 0x07
    }
    /// Sets an unsettled cell to the value `v`; false if it was settled already (by this
    /// or another thread).
    #[inline]
    pub fn settle(cell: &std::sync::atomic::AtomicU8, v: i8) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        let mut c = cell.load(Relaxed);
        while is_unsettled(c) {
            match cell.compare_exchange_weak(c, v as u8, Relaxed, Relaxed) {
                Ok(_) => return true,
                Err(now) => c = now,
            }
        }
        false
    }
}

/// Values of the layers already solved, by layer then index.
pub trait LowerLayers: Sync {
    /// The value of position `index` of layer `seeds`.
    fn value(&self, seeds: u32, index: u64) -> i8;
    /// A hint that `value(seeds, index)` is coming soon.
    fn prefetch(&self, _seeds: u32, _index: u64) {}
}

impl<T: AsRef<[i8]> + Sync> LowerLayers for [T] {
    #[inline]
    fn value(&self, seeds: u32, index: u64) -> i8 {
        self[seeds as usize].as_ref()[index as usize]
    }
    #[inline]
    fn prefetch(&self, seeds: u32, index: u64) {
        prefetch(&self[seeds as usize].as_ref()[index as usize]);
    }
}

impl<T: AsRef<[i8]> + Sync> LowerLayers for Vec<T> {
    #[inline]
    fn value(&self, seeds: u32, index: u64) -> i8 {
        self.as_slice().value(seeds, index)
    }
    #[inline]
    fn prefetch(&self, seeds: u32, index: u64) {
        self.as_slice().prefetch(seeds, index);
    }
}

/// Exact values (and rounds) of every position of layer `n`, indexed by [`index::rank`].
/// `lower` must hold layers `0..n` for the same rules.
///
/// If `observer` reports [`SolveObserver::cancelled`], the pass stops early and the values
/// returned are not the layer's.
///
/// # Panics
///
/// If `n` is above [`MAX_SOLVABLE_SEEDS`].
pub fn solve_layer(
    rules: Rules,
    n: u32,
    lower: &dyn LowerLayers,
    observer: &dyn SolveObserver,
) -> SolvedLayer {
    assert!(
        n <= MAX_SOLVABLE_SEEDS,
        "layer {n} is too large for the solver"
    );
    observer.phase(n, Phase::Exits);
    let (mut cells, mut best_exit, masks) = exits_pass(rules, n, lower, observer);
    for t in (1..=n as i8).rev() {
        if observer.cancelled() {
            break;
        }
        observer.phase(n, Phase::Threshold(t));
        let counts = settle_threshold(rules, n, t, &mut cells, &mut best_exit, &masks, observer);
        observer.threshold_done(n, t, counts);
    }
    finish(cells, best_exit)
}

/// What the exits pass of either pass learns of a position from its moves.
pub(crate) enum Moves {
    /// The game is over: its value (an exit worth that).
    Over(i8),
    /// This many moves stay in the layer.
    Stay(u8),
}

/// The moves of `board` (layer `n`, packed: [`crate::board::ROW_MASK`]) for an exits
/// pass: `capture(child layer, child index, seeds captured)` for each capturing move, and
/// what the others say.
#[inline]
pub(crate) fn moves_of(
    rules: Rules,
    n: u32,
    board: u128,
    mut capture: impl FnMut(u32, u64, u8),
) -> Moves {
    let turn = rules.packed_turn(board);
    if let Some(value) = turn.over {
        return Moves::Over(value);
    }
    let mut stays = 0u8;
    let mut legal = turn.legal;
    while legal != 0 {
        let pit = legal.trailing_zeros() as usize;
        legal &= legal - 1;
        match turn.captured[pit] {
            0 => stays += 1,
            taken => capture(
                n - u32::from(taken),
                index::rank_bits(turn.children[pit]),
                taken,
            ),
        }
    }
    Moves::Stay(stays)
}

/// The thresholds at which some position of a [`SPAN`] may settle by its exits: bit `t`
/// is set if a position's best exit is `t` or `−t`.
///
/// A position settles by its exits only at the threshold of its best exit's magnitude:
/// one of `e > 0` settles at `t = e` if nothing settled it before, and one of `e < 0`
/// only once no in-layer move is left and `e ≤ −t`, which first holds at `t = −e` (a
/// count that reaches zero later settles in the round that counts it down). So a span
/// whose mask lacks bit `t` has nothing for [`settle_by_exits`] at `t`, and is skipped.
/// At the high thresholds most spans are: at layer 24 a threshold that settles nothing
/// took 4 ms instead of the 0.28 s of a scan of the whole layer.
type ExitMask = u64;

/// The [`ExitMask`] of the best exits of one span.
fn exit_mask(exits: &[u8]) -> ExitMask {
    exits.iter().fold(0, |mask, &e| {
        let e = e as i8;
        if e == NO_EXIT {
            mask
        } else {
            mask | 1 << e.unsigned_abs()
        }
    })
}

/// Pass 1: each position's best exit and its number of in-layer moves, and the exit
/// masks of the spans. Lower-layer values are looked up a batch at a time after
/// prefetching, as in propagation.
fn exits_pass(
    rules: Rules,
    n: u32,
    lower: &dyn LowerLayers,
    observer: &dyn SolveObserver,
) -> (Vec<AtomicU8>, Vec<AtomicU8>, Vec<ExitMask>) {
    let size = index::size(n) as usize;
    // Both are touched at random by every round's updates: on huge pages (`memory.rs`).
    let mut cells = crate::memory::huge_vec(size, || AtomicU8::new(0));
    let mut best_exit = crate::memory::huge_vec(size, || AtomicU8::new(NO_EXIT as u8));
    let mut masks = vec![0; (size as u64).div_ceil(SPAN) as usize];
    bytes_mut(&mut best_exit)
        .par_chunks_mut(CHUNK as usize)
        .zip(bytes_mut(&mut cells).par_chunks_mut(CHUNK as usize))
        .zip(masks.par_chunks_mut((CHUNK / SPAN) as usize))
        .enumerate()
        .for_each(|(c, ((exits, cells), masks))| {
            if observer.cancelled() {
                return;
            }
            let start = c as u64 * CHUNK;
            let end = start + exits.len() as u64;
            // (position in chunk, seeds captured, child's layer, child's index)
            let mut pending: Vec<(u32, u8, u32, u64)> = Vec::with_capacity(PREFETCH_BATCH + 8);
            for (i, board) in index::walk_bits(n, start, end) {
                let k = (i - start) as usize;
                let moves = moves_of(rules, n, board, |seeds, idx, captured| {
                    lower.prefetch(seeds, idx);
                    pending.push((k as u32, captured, seeds, idx));
                });
                match moves {
                    Moves::Over(value) => {
                        exits[k] = value as u8;
                        cells[k] = cell::unsettled(0);
                    }
                    Moves::Stay(stays) => cells[k] = cell::unsettled(stays),
                }
                if pending.len() >= PREFETCH_BATCH {
                    apply_exits(&mut pending, exits, lower);
                }
            }
            apply_exits(&mut pending, exits, lower);
            for (mask, span) in masks.iter_mut().zip(exits.chunks(SPAN as usize)) {
                *mask = exit_mask(span);
            }
            observer.advance(exits.len() as u64);
        });
    (cells, best_exit, masks)
}

/// Pass 2 at threshold `t`: the positions its exits decide, then propagation round by
/// round until nothing more settles.
fn settle_threshold(
    rules: Rules,
    n: u32,
    t: i8,
    cells: &mut [AtomicU8],
    best_exit: &mut [AtomicU8],
    masks: &[ExitMask],
    observer: &dyn SolveObserver,
) -> ThresholdCounts {
    let started = std::time::Instant::now();
    let mut frontier = settle_by_exits(n, t, bytes_mut(cells), bytes_mut(best_exit), masks);
    let mut counts = ThresholdCounts {
        by_exits: frontier.len() as u64,
        ..ThresholdCounts::default()
    };
    observer.advance(frontier.len() as u64);
    let state = State {
        rules,
        cells,
        best_exit,
    };
    while !frontier.is_empty() && !observer.cancelled() {
        counts.rounds += 1;
        let round = counts.rounds.min(u32::from(DISTANCE_SATURATED)) as u8;
        frontier = state.propagate(t, round, &frontier);
        counts.propagated += frontier.len() as u64;
        observer.advance(frontier.len() as u64);
    }
    counts.elapsed = started.elapsed();
    counts
}

/// The values and rounds from the final state. What is left unsettled is endless play:
/// value 0, round 0. Collecting a mapped `into_iter` reuses each allocation, so this needs
/// no second layer-sized buffer.
fn finish(mut cells: Vec<AtomicU8>, mut best_exit: Vec<AtomicU8>) -> SolvedLayer {
    bytes_mut(&mut best_exit)
        .par_iter_mut()
        .zip(bytes_mut(&mut cells).par_iter())
        .for_each(|(round, &c)| {
            if cell::is_unsettled(c) {
                *round = 0;
            }
        });
    let values = cells
        .into_iter()
        .map(|c| {
            let c = c.into_inner();
            if cell::is_unsettled(c) {
                0
            } else {
                c as i8
            }
        })
        .collect();
    let distances = best_exit.into_iter().map(AtomicU8::into_inner).collect();
    SolvedLayer { values, distances }
}

/// Solves layers `0..=max_seeds` in memory: `result[n][index]` is a value. For tests and
/// small games; the build driver writes each layer to disk as it goes.
pub fn solve_all(rules: Rules, max_seeds: u32) -> Vec<Vec<i8>> {
    let mut layers: Vec<Vec<i8>> = Vec::new();
    for n in 0..=max_seeds {
        let solved = solve_layer(rules, n, &layers, &Quiet);
        layers.push(solved.values);
    }
    layers
}

/// The cells as plain bytes, for the phases where one thread owns each part of the layer.
pub(crate) fn bytes_mut(cells: &mut [AtomicU8]) -> &mut [u8] {
    // SAFETY: AtomicU8 has the same size, alignment and bit validity as u8, and the
    // exclusive borrow rules out any concurrent atomic access while the bytes are in use.
    unsafe { &mut *(cells as *mut [AtomicU8] as *mut [u8]) }
}

/// Positions that enter `W_t` or `L_t` by their exits alone at threshold `t`: a best exit
/// of `t` (higher ones settled at a higher threshold), or no in-layer child left outside
/// `W` and a best exit now `≤ −t`. They are settled here (in round 0) and returned.
///
/// This runs once per threshold over the layer, so it skips the spans whose exit masks
/// rule out `t`, tests 64 positions at a time with branch-free code the compiler
/// vectorises, and only looks closer at the hits.
fn settle_by_exits(
    n: u32,
    t: i8,
    cells: &mut [u8],
    best_exit: &mut [u8],
    masks: &[ExitMask],
) -> Vec<Settled> {
    let per_chunk: Vec<Vec<Settled>> = cells
        .par_chunks_mut(CHUNK as usize)
        .zip(best_exit.par_chunks_mut(CHUNK as usize))
        .zip(masks.par_chunks((CHUNK / SPAN) as usize))
        .enumerate()
        .map(|(c, ((cells, exits), masks))| {
            let start = c * CHUNK as usize;
            let mut found = Vec::new();
            // Hits come in index order: most boards are a step or a few from the last.
            let mut boards = index::Cursor::new(n);
            let groups = cells.chunks_mut(64).zip(exits.chunks_mut(64)).enumerate();
            for (b, (cells, exits)) in groups {
                if masks[b * 64 / SPAN as usize] & 1 << t == 0 {
                    continue;
                }
                let mut hits = 0u64;
                for (j, (&c, &e)) in cells.iter().zip(exits.iter()).enumerate() {
                    let e = e as i8;
                    let unsettled = c & 0xF8 == cell::UNSETTLED;
                    let lost_all = c == cell::UNSETTLED && e <= -t;
                    let hit = unsettled & (e >= t) | lost_all;
                    hits |= u64::from(hit) << j;
                }
                while hits != 0 {
                    let j = hits.trailing_zeros() as usize;
                    hits &= hits - 1;
                    let settled = if exits[j] as i8 >= t { t } else { -t };
                    cells[j] = settled as u8;
                    // Settled by its exits: round 0 (the best exit is not needed again).
                    exits[j] = 0;
                    let i = start + 64 * b + j;
                    let key = settled::key_of_bits(boards.bits_at(i as u64));
                    found.push(Settled::from_key(key, settled < 0));
                }
            }
            found
        })
        .collect();
    per_chunk.concat()
}

/// Folds a batch of capturing moves into their positions' best exits, emptying it.
#[inline]
fn apply_exits(pending: &mut Vec<(u32, u8, u32, u64)>, exits: &mut [u8], lower: &dyn LowerLayers) {
    for &(k, captured, seeds, idx) in pending.iter() {
        let v = captured as i8 - lower.value(seeds, idx);
        let e = &mut exits[k as usize];
        *e = (*e as i8).max(v) as u8;
    }
    pending.clear();
}

struct State<'a> {
    rules: Rules,
    cells: &'a [AtomicU8],
    /// The best exit (an `i8`) while a position is unsettled, its round once settled.
    best_exit: &'a [AtomicU8],
}

impl State<'_> {
    /// Settles the in-layer predecessors that the newly settled `frontier` decides at
    /// threshold `t`, in round `round`, and returns them.
    fn propagate(&self, t: i8, round: u8, frontier: &[Settled]) -> Vec<Settled> {
        let per_chunk: Vec<Vec<Settled>> = frontier
            .par_chunks(4096)
            .map(|chunk| {
                let mut found = Vec::new();
                // Parents are gathered a batch at a time and their cells prefetched before
                // any is updated: the cells are scattered over the whole layer, and a
                // compare-and-swap would otherwise wait for each cache miss in turn.
                let mut batch: Vec<(usize, u128, bool)> = Vec::with_capacity(PREFETCH_BATCH + 64);
                for &entry in chunk {
                    let child_lost = entry.lost();
                    unsow_bits(self.rules, settled::bits_of(entry.key()), |parent| {
                        let p = index::rank_bits(parent) as usize;
                        prefetch(&self.cells[p]);
                        batch.push((p, parent, child_lost));
                    });
                    if batch.len() >= PREFETCH_BATCH {
                        self.update_parents(t, round, &mut batch, &mut found);
                    }
                }
                self.update_parents(t, round, &mut batch, &mut found);
                found
            })
            .collect();
        per_chunk.concat()
    }

    /// Applies a batch of (parent, packed parent board, child lost) edges, emptying the
    /// batch.
    #[inline]
    fn update_parents(
        &self,
        t: i8,
        round: u8,
        batch: &mut Vec<(usize, u128, bool)>,
        found: &mut Vec<Settled>,
    ) {
        for &(p, parent, child_lost) in batch.iter() {
            let settled = if child_lost {
                // A child in L_t: its parent can move there and get ≥ t.
                self.settle(p, t)
                    .then(|| Settled::from_key(settled::key_of_bits(parent), false))
            } else {
                // If that was its parent's last way out, the parent is in L_t.
                self.count_down(p, t)
                    .then(|| Settled::from_key(settled::key_of_bits(parent), true))
            };
            if let Some(entry) = settled {
                // Only the thread whose compare-and-swap settled `p` gets here, and no one
                // reads a settled position's best exit: the slot is free for its round.
                self.best_exit[p].store(round, Relaxed);
                found.push(entry);
            }
        }
        batch.clear();
    }

    /// Sets an unsettled position's value to `v`; false if it was already settled.
    #[inline]
    fn settle(&self, p: usize, v: i8) -> bool {
        cell::settle(&self.cells[p], v)
    }

    /// One more in-layer child of `p` is in `W_t`. If that was the last child outside `W`
    /// and every exit gives `≤ −t`, `p` enters `L_t`: true.
    #[inline]
    fn count_down(&self, p: usize, t: i8) -> bool {
        let cell = &self.cells[p];
        let mut c = cell.load(Relaxed);
        while cell::is_unsettled(c) {
            let left = cell::counter(c) - 1;
            // If another thread settles `p` meanwhile, this may read its round instead of its
            // best exit; the compare-and-swap below then fails and the loop ends.
            let next = if left == 0 && (self.best_exit[p].load(Relaxed) as i8) <= -t {
                -t as u8
            } else {
                cell::unsettled(left)
            };
            match cell.compare_exchange_weak(c, next, Relaxed, Relaxed) {
                Ok(_) => return !cell::is_unsettled(next),
                Err(now) => c = now,
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exit_mask_has_the_magnitudes_of_the_exits() {
        assert_eq!(exit_mask(&[NO_EXIT as u8; 5]), 0);
        let exits = [-3i8, 5, NO_EXIT, 3, 48, -1].map(|e| e as u8);
        assert_eq!(exit_mask(&exits), 1 << 1 | 1 << 3 | 1 << 5 | 1 << 48);
    }

    /// Skipping the spans whose masks rule a threshold out changes nothing: every layer
    /// of 0..=12 of every preset solved with masks that rule nothing out gives the same
    /// values and rounds.
    #[test]
    fn skipping_spans_by_their_exit_masks_loses_no_position() {
        for rules in Rules::ALL {
            let mut layers: Vec<Vec<i8>> = Vec::new();
            for n in 0..=12 {
                let solved = solve_layer(rules, n, &layers, &Quiet);
                let (mut cells, mut best_exit, masks) = exits_pass(rules, n, &layers, &Quiet);
                let everything = vec![!0; masks.len()];
                for t in (1..=n as i8).rev() {
                    settle_threshold(rules, n, t, &mut cells, &mut best_exit, &everything, &Quiet);
                }
                let unskipped = finish(cells, best_exit);
                assert_eq!(solved.values, unskipped.values, "{rules} layer {n}");
                assert_eq!(solved.distances, unskipped.distances, "{rules} layer {n}");
                layers.push(solved.values);
            }
        }
    }
}
