//! Guaranteed bounds when an endless game ends with each side keeping its own row.
//!
//! # What is computed
//!
//! Under the own-row rule a capture-free cycle ends at a repeated position `Q`, and each side
//! keeps the seeds on its own row: the side to move at `Q` scores `r(Q)` from then on, where
//! `r(Q)` = seeds in pits 0..=5 − seeds in pits 6..=11 (its own row minus the other). Which
//! position repeats first depends on the game's history, so no table holds one value. For a
//! position `P` the table holds a pair:
//!
//! * `low(P)`: the value for P's mover of the game in which an infinite capture-free play is
//!   scored by the *smallest* own-row difference, seen from P's mover, among the positions
//!   the play visits infinitely often (the choice made *against* P's mover);
//! * `high(P)`: the same with the *largest* (the choice made *for* P's mover).
//!
//! A capture leaves the layer, and its value is bounded by the child's pair: the exit is
//! worth at least `captured − high(child)` and at most `captured − low(child)`.
//!
//! # The game on the doubled graph
//!
//! Both tables are values of one game, played by a *protagonist* against an *antagonist* on
//! the nodes `(P, 0)` (the protagonist moves in P) and `(P, 1)` (the antagonist moves in P).
//! A non-capturing move leads from `(P, t)` to `(child, 1 − t)`. Payoffs are seen from the
//! protagonist: an exit from `(P, 0)` pays `captured − high(child)`, one from `(P, 1)` pays
//! `low(child) − captured`; a finished game pays `±` its end value; node weights are
//! `w(P, 0) = r(P)`, `w(P, 1) = −r(P)`; an infinite play pays the smallest weight it visits
//! infinitely often (a "lim inf" objective). Then `low(P) = Val(P, 0)` and
//! `high(P) = −Val(P, 1)`.
//!
//! For a threshold `d` the protagonist wins when the play takes an exit paying `≥ d` or
//! eventually stays among nodes of weight `≥ d`: a co-Büchi game, determined with
//! memoryless strategies. Its winning region `W_d` is the least fixpoint of
//!
//! ```text
//! W ← Attr_protagonist( W ∪ S(W) ),
//! S(W) = nodes outside W from which the protagonist can keep the play, for ever, away from
//!        every node of weight < d and every exit paying < d, or reach W
//! ```
//!
//! computed from `W = W_{d+1}` (winning at `d + 1` is winning at `d`, so the least fixpoint
//! is reached from there). When `S(W)` adds nothing, the antagonist can, from every node
//! outside `W`, force a visit to a node of weight `< d` (or a bad exit) without entering `W`,
//! and again from there: so he wins outside `W`. `Val(v) = max{d : v ∈ W_d}`.
//!
//! # Why it is the guarantee a player needs
//!
//! Let `σ` be a memoryless strategy winning the threshold game at `d = low(P)` from `(P, 0)`.
//! In the real game counted from P (first, second or any repetition ends it), a game where P's
//! mover follows `σ` either captures (and the child's pair bounds the rest, by induction on
//! the seeds) or ends at a position `Q` that repeats. Between two occurrences of `Q` the play
//! followed `σ`, so repeating that stretch for ever is a play consistent with `σ` that visits
//! `Q` infinitely often; since `σ` wins, `w(Q) ≥ d`: P's mover scores at least `low(P)`.
//! The same argument from `(P, 1)` gives the opponent's guarantee, at most `high(P)` for P's
//! mover. So every real game counted from P scores within `[low(P), high(P)]` under perfect
//! play, and `low ≤ high`.
//!
//! # Speed and memory
//!
//! Two reachability games first bound every value (`reach.rs`): `lo` (endless play loses
//! for the protagonist) and `hi` (endless play wins for it). Each is one parallel
//! retrograde pass of the same kind as the value pass: nodes enter by thresholds, counters
//! carry over, and each node enters once. Where `lo = hi` the value is known. The threshold
//! loop above runs only on the rest, the *open* nodes (`open.rs`), on an explicit graph of
//! them alone; they are few (none in most layers above 10).
//!
//! Every position thus enters four times (two nodes, two passes) where the value pass
//! settles it at most once, so the passes walk stored predecessor lists rather than un-sow
//! boards. Working memory is about 30 bytes a position: the lists (4 bytes a move, 3.3
//! moves a position at layer 20, and a 4-byte offset), each node's exit and state byte,
//! the first pass's result, the move counts, and the seeds sorted by exit (4 bytes a node
//! that has one).

mod open;
mod reach;

use crate::board::Board;
use crate::index;
use crate::rules::Rules;
use crate::solve::{moves_of, prefetch, unsow, Moves, PREFETCH_BATCH};
use rayon::prelude::*;
use reach::{reach, NONE_HIGH, NONE_LOW};

/// The pair of bounds of every position of one layer, by index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BoundsLayer {
    /// `low(P)`: what P's mover is guaranteed.
    pub low: Vec<i8>,
    /// `high(P)`: what P's opponent cannot stop P's mover from reaching.
    pub high: Vec<i8>,
}

impl BoundsLayer {
    /// Positions whose low equals their high: their value does not depend on the history.
    pub fn exact(&self) -> u64 {
        self.low
            .par_iter()
            .zip(self.high.par_iter())
            .filter(|(l, h)| l == h)
            .count() as u64
    }
}

/// The own-row difference of a position for its side to move: own row minus the other row.
#[inline]
pub fn own_row_difference(board: &Board) -> i8 {
    board.mover_seeds() as i8 - board.opponent_seeds() as i8
}

/// Positions per unit of parallel work in the exits pass.
const CHUNK: usize = 1 << 14;

/// The largest layer the bounds solver handles: its predecessor lists and node numbers
/// are `u32`, and a layer of up to 25 seeds has fewer than `2^32` in-layer moves (at most
/// six a position) and nodes. Memory stops a 24 GiB machine earlier: `build` reckons
/// 15.5 GiB for layer 24 and 22.5 GiB for layer 25.
pub const MAX_BOUNDS_SEEDS: u32 = 25;

/// Every node's exit, oriented for the protagonist, and every position's in-layer moves.
struct Exits {
    /// Node `2 · index`: the best exit of P's mover as protagonist, `captured −
    /// high(child)` (the end value when the game is over), [`NONE_LOW`] without one. Node
    /// `2 · index + 1`: the exit worst for the protagonist when it is P's opponent,
    /// `low(child) − captured` (minus the end value), [`NONE_HIGH`] without one.
    exit: Vec<i8>,
    /// How many moves stay in the layer.
    degree: Vec<u8>,
}

/// A layer's in-layer moves backwards: for each position, the positions with a
/// non-capturing move to it, one entry a move.
pub(super) struct Predecessors {
    /// Where each position's list starts in `list`; one more entry closes the last.
    start: Vec<u32>,
    list: Vec<u32>,
}

impl Predecessors {
    /// The predecessors of position `index`.
    #[inline]
    pub(super) fn of(&self, index: usize) -> &[u32] {
        &self.list[self.start[index] as usize..self.start[index + 1] as usize]
    }
}

/// One pass over the layer: every position's moves, with the lower layers' pairs looked up
/// a batch at a time after prefetching, as in the value pass.
fn exits_pass(rules: Rules, n: u32, lower: &[BoundsLayer]) -> Exits {
    let size = index::size(n) as usize;
    let mut exit = vec![0i8; 2 * size];
    let mut degree = vec![0u8; size];
    exit.par_chunks_mut(2 * CHUNK)
        .zip(degree.par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(c, (exit, degree))| {
            let start = (c * CHUNK) as u64;
            let end = start + degree.len() as u64;
            // (position in chunk, seeds captured, child's layer, child's index)
            let mut pending: Vec<(u32, u8, u32, u64)> = Vec::with_capacity(PREFETCH_BATCH + 8);
            for (i, board) in index::walk_bits(n, start, end) {
                let k = (i - start) as usize;
                exit[2 * k] = NONE_LOW;
                exit[2 * k + 1] = NONE_HIGH;
                let moves = moves_of(rules, n, board, |seeds, idx, captured| {
                    let child = &lower[seeds as usize];
                    prefetch(&child.low[idx as usize]);
                    prefetch(&child.high[idx as usize]);
                    pending.push((k as u32, captured, seeds, idx));
                });
                match moves {
                    Moves::Over(value) => {
                        exit[2 * k] = value;
                        exit[2 * k + 1] = -value;
                    }
                    Moves::Stay(stays) => degree[k] = stays,
                }
                if pending.len() >= PREFETCH_BATCH {
                    apply_exits(&mut pending, exit, lower);
                }
            }
            apply_exits(&mut pending, exit, lower);
        });
    Exits { exit, degree }
}

/// Chunks of [`CHUNK`] positions un-sown at once by [`predecessors`] before their lists
/// are appended: this bounds the memory held twice.
const CHUNKS_PER_BATCH: usize = 256;

/// The predecessor lists of layer `n`, position by position in index order, by un-sowing
/// each position (no shared writes, so no atomics, and the same lists on any thread count).
/// `moves` is the layer's number of in-layer moves, the lists' total length.
fn predecessors(rules: Rules, n: u32, moves: usize) -> Predecessors {
    let size = index::size(n) as usize;
    let mut start: Vec<u32> = Vec::with_capacity(size + 1);
    let mut list: Vec<u32> = Vec::with_capacity(moves);
    let chunks = size.div_ceil(CHUNK);
    for first in (0..chunks).step_by(CHUNKS_PER_BATCH) {
        let parts: Vec<(Vec<u8>, Vec<u32>)> = (first..chunks.min(first + CHUNKS_PER_BATCH))
            .into_par_iter()
            .map(|c| {
                let from = (c * CHUNK) as u64;
                let to = (from + CHUNK as u64).min(size as u64);
                let mut counts = Vec::with_capacity((to - from) as usize);
                let mut parents = Vec::new();
                for (_, board) in index::walk(n, from, to) {
                    let before = parents.len();
                    unsow(rules, &board, |parent| {
                        parents.push(index::rank(&parent) as u32)
                    });
                    counts.push((parents.len() - before) as u8);
                }
                (counts, parents)
            })
            .collect();
        for (counts, parents) in parts {
            let mut at = list.len() as u32;
            for k in counts {
                start.push(at);
                at += u32::from(k);
            }
            list.extend(parents);
        }
    }
    assert_eq!(list.len(), moves, "un-sowing finds every in-layer move");
    start.push(list.len() as u32);
    Predecessors { start, list }
}

/// Folds a batch of capturing moves into their nodes' exits, emptying it.
#[inline]
fn apply_exits(pending: &mut Vec<(u32, u8, u32, u64)>, exit: &mut [i8], lower: &[BoundsLayer]) {
    for &(k, captured, seeds, idx) in pending.iter() {
        let child = &lower[seeds as usize];
        let c = captured as i8;
        let k = k as usize;
        exit[2 * k] = exit[2 * k].max(c - child.high[idx as usize]);
        exit[2 * k + 1] = exit[2 * k + 1].min(child.low[idx as usize] - c);
    }
    pending.clear();
}

/// The pair of bounds of every position of layer `n`, by index. `lower` must hold the pairs
/// of layers `0..n` for the same rules.
///
/// # Panics
///
/// If `lower` is short, or `n` is above [`MAX_BOUNDS_SEEDS`].
pub fn solve_layer_bounds(rules: Rules, n: u32, lower: &[BoundsLayer]) -> BoundsLayer {
    assert!(lower.len() >= n as usize, "layers below {n} are needed");
    assert!(
        n <= MAX_BOUNDS_SEEDS,
        "layer {n} is beyond the bounds solver ({MAX_BOUNDS_SEEDS} seeds)"
    );
    let Exits { mut exit, degree } = exits_pass(rules, n, lower);
    let moves: u64 = degree.par_iter().map(|&k| u64::from(k)).sum();
    assert!(moves < 1 << 32, "layer {n}: fewer than 2^32 in-layer moves");
    let preds = predecessors(rules, n, moves as usize);
    // The protagonist reaching, then the antagonist (the exits seen from its side).
    let mut lo = reach(n, &exit, &degree, &preds, 0);
    exit.par_iter_mut().for_each(|e| *e = -*e);
    let mut hi = reach(n, &exit, &degree, &preds, 1);
    drop((preds, degree));
    exit.par_iter_mut().for_each(|e| *e = -*e);
    hi.par_iter_mut().for_each(|v| *v = -*v);
    let open: Vec<u64> = lo
        .par_iter()
        .zip(hi.par_iter())
        .enumerate()
        .filter(|(_, (l, h))| l < h)
        .map(|(v, _)| v as u64)
        .collect();
    if !open.is_empty() {
        open::solve(rules, n, &open, &mut lo, &hi, &exit);
    }
    drop((exit, hi));
    let low = lo.par_iter().step_by(2).copied().collect();
    let high = lo.par_iter().skip(1).step_by(2).map(|&v| -v).collect();
    BoundsLayer { low, high }
}

/// The protagonist's reachability game alone (`lo` in the module docs, before the open
/// nodes' threshold loop): for every position, the value of its node where its mover is
/// the protagonist, and minus the value of the node where the opponent is. What the lean
/// pass of the own-row values computes (`crate::solve::lean`), for its tests.
#[cfg(test)]
pub(crate) fn reach_of_layer(rules: Rules, n: u32, lower: &[BoundsLayer]) -> BoundsLayer {
    let Exits { exit, degree } = exits_pass(rules, n, lower);
    let moves: u64 = degree.iter().map(|&k| u64::from(k)).sum();
    let preds = predecessors(rules, n, moves as usize);
    let lo = reach(n, &exit, &degree, &preds, 0);
    BoundsLayer {
        low: lo.iter().step_by(2).copied().collect(),
        high: lo.iter().skip(1).step_by(2).map(|&v| -v).collect(),
    }
}

/// Solves layers `0..=max_seeds` in memory. For tests and small games.
pub fn solve_all_bounds(rules: Rules, max_seeds: u32) -> Vec<BoundsLayer> {
    let mut layers: Vec<BoundsLayer> = Vec::new();
    for n in 0..=max_seeds {
        let layer = solve_layer_bounds(rules, n, &layers);
        layers.push(layer);
    }
    layers
}
