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
//! # Speed
//!
//! Two one-pass retrograde attractors first bound every value: `lo0` (infinite play loses
//! for the protagonist) and `hi0` (infinite play wins). Where they meet the value is known;
//! the threshold loop above runs only on the rest, and at threshold `d` only on the nodes
//! whose value is still open at `d` (`cur < d ≤ hi0`). The layer's in-layer move graph is
//! held explicitly (successor and predecessor lists, 4 bytes an edge).

use crate::board::Board;
use crate::index;
use crate::rules::{Rules, Turn};
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering::Relaxed};

/// The pair of bounds of every position of one layer, by index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BoundsLayer {
    /// `low(P)`: what P's mover is guaranteed.
    pub low: Vec<i8>,
    /// `high(P)`: what P's opponent cannot stop P's mover from reaching.
    pub high: Vec<i8>,
}

/// The own-row difference of a position for its side to move: own row minus the other row.
#[inline]
pub fn own_row_difference(board: &Board) -> i8 {
    board.mover_seeds() as i8 - board.opponent_seeds() as i8
}

/// Best exit of a protagonist node without one.
const NO_EXIT0: i8 = i8::MIN;
/// Worst exit (for the protagonist) of an antagonist node without one.
const NO_EXIT1: i8 = i8::MAX;

/// The in-layer move graph of a layer, with exits and weights.
struct LayerGraph {
    n: u32,
    /// `(P, 0)`: the best exit for the protagonist (`captured − high(child)`), or the end value.
    exit0: Vec<i8>,
    /// `(P, 1)`: the exit worst for the protagonist (`low(child) − captured`), or minus the end value.
    exit1: Vec<i8>,
    /// Own-row difference for P's mover.
    r: Vec<i8>,
    succ_start: Vec<u32>,
    succ: Vec<u32>,
    pred_start: Vec<u32>,
    pred: Vec<u32>,
}

impl LayerGraph {
    fn build(rules: Rules, n: u32, lower: &[BoundsLayer]) -> LayerGraph {
        let size = index::size(n) as usize;
        const CHUNK: usize = 1 << 14;
        let mut exit0 = vec![NO_EXIT0; size];
        let mut exit1 = vec![NO_EXIT1; size];
        let mut r = vec![0i8; size];
        let mut degree = vec![0u8; size];
        let chunk_edges: Vec<Vec<u32>> = exit0
            .par_chunks_mut(CHUNK)
            .zip(exit1.par_chunks_mut(CHUNK))
            .zip(r.par_chunks_mut(CHUNK))
            .zip(degree.par_chunks_mut(CHUNK))
            .enumerate()
            .map(|(c, (((e0, e1), r), deg))| {
                let start = (c * CHUNK) as u64;
                let end = start + e0.len() as u64;
                let mut edges = Vec::with_capacity(e0.len() * 4);
                for (i, board) in index::walk(n, start, end) {
                    let k = (i - start) as usize;
                    r[k] = own_row_difference(&board);
                    match rules.turn(&board) {
                        Turn::GameOver { value } => {
                            e0[k] = value;
                            e1[k] = -value;
                        }
                        Turn::Moves(moves) => {
                            for m in &moves {
                                let child = index::rank(&m.child);
                                if m.captured == 0 {
                                    edges.push(child as u32);
                                    deg[k] += 1;
                                } else {
                                    let layer = &lower[(n - u32::from(m.captured)) as usize];
                                    let c = m.captured as i8;
                                    e0[k] = e0[k].max(c - layer.high[child as usize]);
                                    e1[k] = e1[k].min(layer.low[child as usize] - c);
                                }
                            }
                        }
                    }
                }
                edges
            })
            .collect();
        let total: usize = chunk_edges.iter().map(Vec::len).sum();
        assert!(
            total < u32::MAX as usize,
            "layer {n}: too many in-layer moves"
        );
        let mut succ_start = Vec::with_capacity(size + 1);
        let mut acc = 0u32;
        for &d in &degree {
            succ_start.push(acc);
            acc += u32::from(d);
        }
        succ_start.push(acc);
        drop(degree);
        let succ = chunk_edges.concat();
        // Predecessors by counting sort.
        let mut indegree = vec![0u32; size + 1];
        for &c in &succ {
            indegree[c as usize + 1] += 1;
        }
        for i in 0..size {
            indegree[i + 1] += indegree[i];
        }
        let pred_start = indegree.clone();
        let mut fill = indegree;
        let mut pred = vec![0u32; total];
        for p in 0..size {
            for &c in &succ[succ_start[p] as usize..succ_start[p + 1] as usize] {
                let slot = &mut fill[c as usize];
                pred[*slot as usize] = p as u32;
                *slot += 1;
            }
        }
        LayerGraph {
            n,
            exit0,
            exit1,
            r,
            succ_start,
            succ,
            pred_start,
            pred,
        }
    }

    #[inline]
    fn succ_of(&self, p: usize) -> &[u32] {
        &self.succ[self.succ_start[p] as usize..self.succ_start[p + 1] as usize]
    }

    #[inline]
    fn pred_of(&self, p: usize) -> &[u32] {
        &self.pred[self.pred_start[p] as usize..self.pred_start[p + 1] as usize]
    }

    /// The protagonist's payoff for node `v`'s weight.
    #[inline]
    fn weight(&self, v: usize) -> i8 {
        let r = self.r[v >> 1];
        if v & 1 == 0 {
            r
        } else {
            -r
        }
    }

    /// Values of the reachability game in which `reacher` (0: protagonist, 1: antagonist)
    /// must reach an exit and infinite play is lost for it: `max{d : the reacher forces an
    /// exit worth ≥ d to it}`, `−n` where it forces nothing. One retrograde pass over the
    /// thresholds, `n` down to `−n + 1`, each node entering once.
    fn reach(&self, reacher: usize) -> Vec<i8> {
        let n = self.n as i32;
        let size = self.exit0.len();
        // Exits as the reacher sees them: its own best, and the other side's worst for it.
        let oriented = |v: usize| -> i8 {
            let p = v >> 1;
            let (e, none_in, none_out) = if v & 1 == 0 {
                (
                    self.exit0[p],
                    NO_EXIT0,
                    if reacher == 0 { NO_EXIT0 } else { NO_EXIT1 },
                )
            } else {
                (
                    self.exit1[p],
                    NO_EXIT1,
                    if reacher == 1 { NO_EXIT0 } else { NO_EXIT1 },
                )
            };
            if e == none_in {
                none_out
            } else if reacher == 0 {
                e
            } else {
                -e
            }
        };
        const OUT: i8 = i8::MIN;
        let mut value = vec![OUT; 2 * size];
        let mut count = vec![0u8; 2 * size];
        let slot = |d: i32| (d + n) as usize;
        let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); (2 * n + 1) as usize];
        for (v, count) in count.iter_mut().enumerate() {
            let e = oriented(v);
            let deg = (self.succ_start[(v >> 1) + 1] - self.succ_start[v >> 1]) as u8;
            if v & 1 == reacher {
                if e != NO_EXIT0 && i32::from(e) > -n {
                    buckets[slot(e.into())].push(v as u32);
                }
            } else {
                *count = deg;
                if deg == 0 && e != NO_EXIT1 && i32::from(e) > -n {
                    buckets[slot(e.into())].push(v as u32);
                }
            }
        }
        let mut queue: Vec<u32> = Vec::new();
        for d in (-n + 1..=n).rev() {
            queue.append(&mut buckets[slot(d)]);
            while let Some(v) = queue.pop() {
                let v = v as usize;
                if value[v] != OUT {
                    continue;
                }
                value[v] = d as i8;
                let t = v & 1;
                for &p in self.pred_of(v >> 1) {
                    let u = 2 * p as usize + (1 - t);
                    if value[u] != OUT {
                        continue;
                    }
                    if u & 1 == reacher {
                        queue.push(u as u32);
                    } else {
                        count[u] -= 1;
                        if count[u] == 0 {
                            let e = oriented(u);
                            if e == NO_EXIT1 || i32::from(e) >= d {
                                queue.push(u as u32);
                            } else if i32::from(e) > -n {
                                buckets[slot(e.into())].push(u as u32);
                            }
                        }
                    }
                }
            }
        }
        value
            .into_iter()
            .map(|v| if v == OUT { -n as i8 } else { v })
            .collect()
    }
}

/// The pair of bounds of every position of layer `n`, by index. `lower` must hold the pairs
/// of layers `0..n` for the same rules.
pub fn solve_layer_own_row(rules: Rules, n: u32, lower: &[BoundsLayer]) -> BoundsLayer {
    assert!(lower.len() >= n as usize, "layers below {n} are needed");
    let g = LayerGraph::build(rules, n, lower);
    let size = g.exit0.len();
    // Bounds: the protagonist's value when infinite play loses for it, and when it wins.
    let mut cur = g.reach(0);
    let hi0: Vec<i8> = g.reach(1).into_iter().map(|v| -v).collect();
    let open: Vec<u32> = (0..2 * size)
        .filter(|&v| cur[v] < hi0[v])
        .map(|v| v as u32)
        .collect();
    if !open.is_empty() {
        let top = open.iter().map(|&v| hi0[v as usize]).max().unwrap_or(0);
        let bottom = open.iter().map(|&v| cur[v as usize]).min().unwrap_or(0);
        let mut count: Vec<AtomicU8> = Vec::with_capacity(2 * size);
        count.resize_with(2 * size, || AtomicU8::new(0));
        let mut in_a: Vec<AtomicBool> = Vec::with_capacity(2 * size);
        in_a.resize_with(2 * size, || AtomicBool::new(false));
        let mut cand: Vec<u32>;
        let mut queue: Vec<u32> = Vec::new();
        for d in (bottom + 1..=top).rev() {
            cand = open
                .par_iter()
                .copied()
                .filter(|&v| cur[v as usize] < d && d <= hi0[v as usize])
                .collect();
            threshold(&g, d, &mut cur, &hi0, &cand, &count, &in_a, &mut queue);
        }
    }
    let low = (0..size).map(|p| cur[2 * p]).collect();
    let high = (0..size).map(|p| -cur[2 * p + 1]).collect();
    BoundsLayer { low, high }
}

/// Grows `W_d` (the nodes with `cur ≥ d`) to the protagonist's winning region at threshold
/// `d`, over the candidates `cand` (the nodes still open at `d`).
#[allow(clippy::too_many_arguments)]
fn threshold(
    g: &LayerGraph,
    d: i8,
    cur: &mut [i8],
    hi0: &[i8],
    cand: &[u32],
    count: &[AtomicU8],
    in_a: &[AtomicBool],
    queue: &mut Vec<u32>,
) {
    let is_cand = |cur: &[i8], v: usize| cur[v] < d && d <= hi0[v];
    let lost = |cur: &[i8], v: usize| cur[v] < d && hi0[v] < d;
    loop {
        // 1. The protagonist's attractor of W (and of exits paying ≥ d). The scan runs in
        //    parallel (each candidate writes only its own counter); propagation does not.
        queue.clear();
        {
            let cur: &[i8] = cur;
            let found: Vec<Vec<u32>> = cand
                .par_chunks(1 << 14)
                .map(|chunk| {
                    let mut found = Vec::new();
                    for &v in chunk {
                        let v = v as usize;
                        if cur[v] >= d {
                            continue;
                        }
                        let succ = g.succ_of(v >> 1);
                        let t = v & 1;
                        let child = |c: u32| 2 * c as usize + (1 - t);
                        let enter = if t == 0 {
                            g.exit0[v >> 1] >= d && g.exit0[v >> 1] != NO_EXIT0
                                || succ.iter().any(|&c| cur[child(c)] >= d)
                        } else {
                            let outside = succ.iter().filter(|&&c| cur[child(c)] < d).count() as u8;
                            count[v].store(outside, Relaxed);
                            outside == 0 && g.exit1[v >> 1] >= d
                        };
                        if enter {
                            found.push(v as u32);
                        }
                    }
                    found
                })
                .collect();
            queue.extend(found.into_iter().flatten());
        }
        // A node joins W when it is queued, so that no counter is touched after that.
        for &v in queue.iter() {
            cur[v as usize] = d;
        }
        while let Some(v) = queue.pop() {
            let t = v as usize & 1;
            for &p in g.pred_of(v as usize >> 1) {
                let u = 2 * p as usize + (1 - t);
                if !is_cand(cur, u) {
                    continue;
                }
                let enter = if u & 1 == 0 {
                    true
                } else {
                    let left = count[u].load(Relaxed) - 1;
                    count[u].store(left, Relaxed);
                    left == 0 && g.exit1[u >> 1] >= d
                };
                if enter {
                    cur[u] = d;
                    queue.push(u as u32);
                }
            }
        }
        // 2. The antagonist's attractor of the bad nodes (weight < d, exit paying < d, or
        //    already lost at d), avoiding W.
        {
            let cur: &[i8] = cur;
            let found: Vec<Vec<u32>> = cand
                .par_chunks(1 << 14)
                .map(|chunk| {
                    let mut found = Vec::new();
                    for &v in chunk {
                        let v = v as usize;
                        in_a[v].store(false, Relaxed);
                        if cur[v] >= d {
                            continue;
                        }
                        let succ = g.succ_of(v >> 1);
                        let t = v & 1;
                        let child = |c: u32| 2 * c as usize + (1 - t);
                        let enter = if g.weight(v) < d {
                            true
                        } else if t == 1 {
                            g.exit1[v >> 1] < d || succ.iter().any(|&c| lost(cur, child(c)))
                        } else {
                            // Successors that keep the protagonist out of A: in W or open.
                            let keep = succ.iter().filter(|&&c| !lost(cur, child(c))).count() as u8;
                            count[v].store(keep, Relaxed);
                            keep == 0 && (g.exit0[v >> 1] < d || g.exit0[v >> 1] == NO_EXIT0)
                        };
                        if enter {
                            in_a[v].store(true, Relaxed);
                            found.push(v as u32);
                        }
                    }
                    found
                })
                .collect();
            queue.extend(found.into_iter().flatten());
        }
        while let Some(v) = queue.pop() {
            let t = v as usize & 1;
            for &p in g.pred_of(v as usize >> 1) {
                let u = 2 * p as usize + (1 - t);
                if !is_cand(cur, u) || in_a[u].load(Relaxed) {
                    continue;
                }
                let enter = if u & 1 == 1 {
                    true
                } else {
                    let left = count[u].load(Relaxed) - 1;
                    count[u].store(left, Relaxed);
                    left == 0 && (g.exit0[u >> 1] < d || g.exit0[u >> 1] == NO_EXIT0)
                };
                if enter {
                    in_a[u].store(true, Relaxed);
                    queue.push(u as u32);
                }
            }
        }
        // 3. What is left can stay among good nodes for ever: it joins W.
        let mut grew = false;
        for &v in cand {
            let v = v as usize;
            if cur[v] < d && !in_a[v].load(Relaxed) {
                cur[v] = d;
                grew = true;
            }
        }
        if !grew {
            return;
        }
    }
}

/// Solves layers `0..=max_seeds` in memory. For tests and small games.
pub fn solve_all_own_row(rules: Rules, max_seeds: u32) -> Vec<BoundsLayer> {
    let mut layers: Vec<BoundsLayer> = Vec::new();
    for n in 0..=max_seeds {
        let layer = solve_layer_own_row(rules, n, &layers);
        layers.push(layer);
    }
    layers
}
