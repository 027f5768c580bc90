//! The two reachability games that bound every node, each one parallel retrograde pass.
//!
//! `reach(reacher)` is the value, for `reacher` (0: the protagonist, 1: the antagonist), of
//! the game on the doubled graph in which it must take an exit and endless play is its worst
//! outcome, `−n`: the largest `d` such that it can force an exit worth `≥ d` to it. For
//! `d = n, n − 1, …, −n + 1` the set `R_d` of nodes from which it forces such an exit grows:
//!
//! * a node where the reacher moves enters when one of its exits is worth `≥ d` or one of
//!   its in-layer moves leads into `R_d`;
//! * a node where the other side moves enters when every in-layer move leads into `R_d` and
//!   every exit is worth `≥ d` to the reacher.
//!
//! `R_d ⊆ R_{d−1}`, so, as in the value pass (`crate::solve`), the counters of in-layer
//! moves not yet leading into `R` carry over from one threshold to the next: each node enters
//! once, at its value, and each in-layer edge is walked backwards (un-sown) at most once.
//! Nothing is scanned per threshold: the nodes that enter by their exits alone are sorted
//! into buckets by exit value once, and a node whose last way out closes while its worst exit
//! is still below the threshold waits in the bucket of that exit.
//!
//! Nodes are numbered `2 · index + side`: the two nodes of a position share a cache line.
//! The result does not depend on the order of work, so any thread count gives the same
//! bytes.

use crate::board::Board;
use crate::index;
use crate::rules::Rules;
use crate::solve::{bytes_mut, cell, prefetch, unsow, Settled, PREFETCH_BATCH};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

/// The exit of a node of the reacher that has none: below every threshold.
pub(super) const NONE_LOW: i8 = -127;
/// The exit of a node of the other side that has none: above every threshold. Negating
/// an exits array turns one sentinel into the other, as it turns the sides round.
pub(super) const NONE_HIGH: i8 = 127;

/// Positions per unit of parallel work when sorting the seeds.
const CHUNK: usize = 1 << 16;

/// A node of the doubled graph as a frontier entry: its board's key, and its side in the
/// verdict bit of [`Settled`] (set for side 1).
#[inline]
fn node_entry(board: &Board, side: usize) -> Settled {
    Settled::new(board, side == 1)
}

/// The values of `reach(reacher)` for every node `2 · index + side` of layer `n`, from the
/// nodes' exits oriented for the reacher (its best on its nodes, [`NONE_LOW`] without one;
/// the other side's worst for it on the others, [`NONE_HIGH`] without one) and every
/// position's number of in-layer moves. Nodes from which the reacher forces nothing get `−n`.
pub(super) fn reach(rules: Rules, n: u32, exit: &[i8], degree: &[u8], reacher: usize) -> Vec<i8> {
    let size = degree.len();
    debug_assert_eq!(exit.len(), 2 * size);
    let slot = |d: i8| (i32::from(d) + n as i32) as usize;
    let mut cells: Vec<AtomicU8> = Vec::with_capacity(2 * size);
    cells.resize_with(2 * size, || AtomicU8::new(0));
    // The reacher's nodes need no counter: one move into R is enough.
    bytes_mut(&mut cells)
        .par_chunks_mut(2 * CHUNK)
        .zip(degree.par_chunks(CHUNK))
        .for_each(|(cells, degree)| {
            for (pair, &moves) in cells.chunks_mut(2).zip(degree) {
                for (side, c) in pair.iter_mut().enumerate() {
                    *c = cell::unsettled(if side == reacher { 0 } else { moves });
                }
            }
        });
    let mut buckets = seeds_by_exit(n, exit, degree, reacher);
    let pass = Pass {
        rules,
        n,
        reacher,
        exit,
        cells: &cells,
    };
    let mut waiting: Vec<Vec<Settled>> = vec![Vec::new(); slot(n as i8) + 1];
    for d in (-(n as i32) + 1..=n as i32).rev() {
        let d = d as i8;
        let lists = std::mem::take(&mut buckets[slot(d)]);
        let waited = std::mem::take(&mut waiting[slot(d)]);
        // A seed may have entered at a higher threshold already, by a move.
        let mut frontier: Vec<Settled> = lists
            .par_iter()
            .chain(rayon::iter::once(&waited))
            .flat_map_iter(|list| list.iter().copied())
            .filter(|entry| pass.enter(pass.node_of(entry), d))
            .collect();
        drop((lists, waited));
        while !frontier.is_empty() {
            let (next, wait) = pass.propagate(d, &frontier);
            for (e, entry) in wait {
                waiting[slot(e)].push(entry);
            }
            frontier = next;
        }
    }
    let never = -(n as i8);
    cells
        .into_iter()
        .map(|c| {
            let c = c.into_inner();
            if cell::is_unsettled(c) {
                never
            } else {
                c as i8
            }
        })
        .collect()
}

/// The nodes that can enter by their exits alone (the reacher's nodes, and the other side's
/// without in-layer moves), by the slot of their exit (`exit + n`), as lists per chunk.
/// Exits worth `≤ −n` never decide anything and are left out.
fn seeds_by_exit(n: u32, exit: &[i8], degree: &[u8], reacher: usize) -> Vec<Vec<Vec<Settled>>> {
    let slots = 2 * n as usize + 1;
    let seed_slot = |side: usize, moves: u8, e: i8| -> Option<usize> {
        let counts = side == reacher || moves == 0;
        (counts && i32::from(e) > -(n as i32)).then(|| (i32::from(e).min(n as i32) + n as i32) as usize)
    };
    let per_chunk: Vec<Vec<Vec<Settled>>> = exit
        .par_chunks(2 * CHUNK)
        .zip(degree.par_chunks(CHUNK))
        .enumerate()
        .map(|(c, (exit, degree))| {
            // Count first, so that every list is allocated once at its size.
            let mut counts = vec![0usize; slots];
            for (k, &moves) in degree.iter().enumerate() {
                for side in 0..2 {
                    if let Some(s) = seed_slot(side, moves, exit[2 * k + side]) {
                        counts[s] += 1;
                    }
                }
            }
            let mut lists: Vec<Vec<Settled>> =
                counts.iter().map(|&c| Vec::with_capacity(c)).collect();
            let start = (c * CHUNK) as u64;
            let end = start + degree.len() as u64;
            for (i, board) in index::walk(n, start, end) {
                let k = (i - start) as usize;
                for side in 0..2 {
                    if let Some(s) = seed_slot(side, degree[k], exit[2 * k + side]) {
                        lists[s].push(node_entry(&board, side));
                    }
                }
            }
            lists
        })
        .collect();
    // By slot, then chunk.
    let mut by_slot: Vec<Vec<Vec<Settled>>> = (0..slots).map(|_| Vec::new()).collect();
    for lists in per_chunk {
        for (s, list) in lists.into_iter().enumerate() {
            if !list.is_empty() {
                by_slot[s].push(list);
            }
        }
    }
    by_slot
}

struct Pass<'a> {
    rules: Rules,
    n: u32,
    reacher: usize,
    exit: &'a [i8],
    cells: &'a [AtomicU8],
}

impl Pass<'_> {
    #[inline]
    fn node_of(&self, entry: &Settled) -> usize {
        2 * crate::solve::settled::index_of_key(entry.key()) as usize + usize::from(entry.lost())
    }

    /// Puts an unsettled node in `R_d`; false if it was already in.
    #[inline]
    fn enter(&self, node: usize, d: i8) -> bool {
        let cell = &self.cells[node];
        let mut c = cell.load(Relaxed);
        while cell::is_unsettled(c) {
            match cell.compare_exchange_weak(c, d as u8, Relaxed, Relaxed) {
                Ok(_) => return true,
                Err(now) => c = now,
            }
        }
        false
    }

    /// The in-layer predecessors that the nodes of `frontier`, just entered `R_d`, bring in:
    /// the nodes that enter now, and those whose last way out closed while their worst exit
    /// is below `d` (with that exit: they wait for its threshold).
    fn propagate(&self, d: i8, frontier: &[Settled]) -> (Vec<Settled>, Vec<(i8, Settled)>) {
        let per_chunk: Vec<(Vec<Settled>, Vec<(i8, Settled)>)> = frontier
            .par_chunks(4096)
            .map(|chunk| {
                let mut entered = Vec::new();
                let mut waiting = Vec::new();
                // As in the value pass: gather a batch of parents and prefetch their cells
                // before touching any, since they are scattered over the whole layer.
                let mut batch: Vec<(usize, Board, usize)> = Vec::with_capacity(PREFETCH_BATCH + 64);
                for &entry in chunk {
                    let side = 1 - usize::from(entry.lost());
                    unsow(self.rules, &entry.board(), |parent| {
                        let u = 2 * index::rank(&parent) as usize + side;
                        prefetch(&self.cells[u]);
                        batch.push((u, parent, side));
                    });
                    if batch.len() >= PREFETCH_BATCH {
                        self.update(d, &mut batch, &mut entered, &mut waiting);
                    }
                }
                self.update(d, &mut batch, &mut entered, &mut waiting);
                (entered, waiting)
            })
            .collect();
        let mut entered = Vec::new();
        let mut waiting = Vec::new();
        for (e, w) in per_chunk {
            entered.extend(e);
            waiting.extend(w);
        }
        (entered, waiting)
    }

    /// Applies a batch of (parent node, parent board, parent side) edges, emptying it.
    #[inline]
    fn update(
        &self,
        d: i8,
        batch: &mut Vec<(usize, Board, usize)>,
        entered: &mut Vec<Settled>,
        waiting: &mut Vec<(i8, Settled)>,
    ) {
        for &(u, parent, side) in batch.iter() {
            if side == self.reacher {
                if self.enter(u, d) {
                    entered.push(node_entry(&parent, side));
                }
                continue;
            }
            let cell = &self.cells[u];
            let mut c = cell.load(Relaxed);
            while cell::is_unsettled(c) {
                let left = cell::counter(c) - 1;
                // The exit is read only for the last way out: it is another cache line.
                let e = if left == 0 { self.exit[u] } else { NONE_HIGH };
                let next = if left == 0 && e >= d {
                    d as u8
                } else {
                    cell::unsettled(left)
                };
                match cell.compare_exchange_weak(c, next, Relaxed, Relaxed) {
                    Ok(_) => {
                        if left == 0 {
                            if e >= d {
                                entered.push(node_entry(&parent, side));
                            } else if i32::from(e) > -(self.n as i32) {
                                waiting.push((e, node_entry(&parent, side)));
                            }
                        }
                        break;
                    }
                    Err(now) => c = now,
                }
            }
        }
        batch.clear();
    }
}
