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
//! once, at its value, and each in-layer edge is walked backwards at most once. Nothing is
//! scanned per threshold: the nodes that enter by their exits alone are sorted into buckets
//! by exit value once, and a node whose last way out closes while its worst exit is still
//! below the threshold waits in the bucket of that exit.
//!
//! Each position's node is entered four times (two sides, two passes), so, unlike the value
//! pass, this one walks a stored list of predecessors ([`Predecessors`], built once per
//! layer) instead of un-sowing boards: an entry costs a few memory reads and no move logic.
//!
//! Nodes are numbered `2 · index + side`: the two nodes of a position share a cache line.
//! The result does not depend on the order of work, so any thread count gives the same
//! bytes.

use super::Predecessors;
use crate::solve::{bytes_mut, cell, prefetch, PREFETCH_BATCH};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

/// The exit of a node of the reacher that has none: below every threshold.
pub(super) const NONE_LOW: i8 = -127;
/// The exit of a node of the other side that has none: above every threshold. Negating
/// an exits array turns one sentinel into the other, as it turns the sides round.
pub(super) const NONE_HIGH: i8 = 127;

/// Positions per unit of parallel work when sorting the seeds.
const CHUNK: usize = 1 << 16;

/// The values of `reach(reacher)` for every node `2 · index + side` of a layer of `n` seeds,
/// from the nodes' exits oriented for the reacher (its best on its nodes, [`NONE_LOW`]
/// without one; the other side's worst for it on the others, [`NONE_HIGH`] without one),
/// every position's number of in-layer moves, and their predecessors. Nodes from which the
/// reacher forces nothing get `−n`.
pub(super) fn reach(
    n: u32,
    exit: &[i8],
    degree: &[u8],
    preds: &Predecessors,
    reacher: usize,
) -> Vec<i8> {
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
        n,
        reacher,
        exit,
        preds,
        cells: &cells,
    };
    let mut waiting: Vec<Vec<u32>> = vec![Vec::new(); slot(n as i8) + 1];
    for d in (-(n as i32) + 1..=n as i32).rev() {
        let d = d as i8;
        let lists = std::mem::take(&mut buckets[slot(d)]);
        let waited = std::mem::take(&mut waiting[slot(d)]);
        // A seed may have entered at a higher threshold already, by a move.
        let mut frontier: Vec<u32> = lists
            .par_iter()
            .chain(rayon::iter::once(&waited))
            .flat_map_iter(|list| list.iter().copied())
            .filter(|&node| pass.enter(node as usize, d))
            .collect();
        drop((lists, waited));
        while !frontier.is_empty() {
            let found = pass.propagate(d, &frontier);
            for (e, node) in found.waiting {
                waiting[slot(e)].push(node);
            }
            frontier = found.entered;
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
fn seeds_by_exit(n: u32, exit: &[i8], degree: &[u8], reacher: usize) -> Vec<Vec<Vec<u32>>> {
    let slots = 2 * n as usize + 1;
    let seed_slot = |side: usize, moves: u8, e: i8| -> Option<usize> {
        let counts = side == reacher || moves == 0;
        let e = i32::from(e);
        (counts && e > -(n as i32)).then(|| (e.min(n as i32) + n as i32) as usize)
    };
    let per_chunk: Vec<Vec<Vec<u32>>> = exit
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
            let mut lists: Vec<Vec<u32>> = counts.iter().map(|&c| Vec::with_capacity(c)).collect();
            let first_node = 2 * c * CHUNK;
            for (k, &moves) in degree.iter().enumerate() {
                for side in 0..2 {
                    if let Some(s) = seed_slot(side, moves, exit[2 * k + side]) {
                        lists[s].push((first_node + 2 * k + side) as u32);
                    }
                }
            }
            lists
        })
        .collect();
    // By slot, then chunk.
    let mut by_slot: Vec<Vec<Vec<u32>>> = (0..slots).map(|_| Vec::new()).collect();
    for lists in per_chunk {
        for (s, list) in lists.into_iter().enumerate() {
            if !list.is_empty() {
                by_slot[s].push(list);
            }
        }
    }
    by_slot
}

/// What a round of propagation finds: the nodes that entered, and those whose last way
/// out closed while their worst exit is below the threshold, with that exit (they wait for
/// its threshold).
#[derive(Default)]
struct Found {
    entered: Vec<u32>,
    waiting: Vec<(i8, u32)>,
}

struct Pass<'a> {
    n: u32,
    reacher: usize,
    exit: &'a [i8],
    preds: &'a Predecessors,
    cells: &'a [AtomicU8],
}

impl Pass<'_> {
    /// Puts an unsettled node in `R_d`; false if it was already in.
    #[inline]
    fn enter(&self, node: usize, d: i8) -> bool {
        cell::settle(&self.cells[node], d)
    }

    /// The in-layer predecessors that the nodes of `frontier`, just entered `R_d`, bring in.
    fn propagate(&self, d: i8, frontier: &[u32]) -> Found {
        let per_chunk: Vec<Found> = frontier
            .par_chunks(4096)
            .map(|chunk| {
                let mut found = Found::default();
                // As in the value pass: gather a batch of parents and prefetch their cells
                // before touching any, since they are scattered over the whole layer.
                let mut batch: Vec<u32> = Vec::with_capacity(PREFETCH_BATCH + 64);
                for &node in chunk {
                    let side = 1 - (node & 1);
                    for &parent in self.preds.of(node as usize >> 1) {
                        let u = 2 * parent + side;
                        prefetch(&self.cells[u as usize]);
                        batch.push(u);
                    }
                    if batch.len() >= PREFETCH_BATCH {
                        self.update(d, &mut batch, &mut found);
                    }
                }
                self.update(d, &mut batch, &mut found);
                found
            })
            .collect();
        let mut all = Found::default();
        for found in per_chunk {
            all.entered.extend(found.entered);
            all.waiting.extend(found.waiting);
        }
        all
    }

    /// Applies a batch of parent nodes, emptying it.
    #[inline]
    fn update(&self, d: i8, batch: &mut Vec<u32>, found: &mut Found) {
        for &u in batch.iter() {
            if (u & 1) as usize == self.reacher {
                if self.enter(u as usize, d) {
                    found.entered.push(u);
                }
                continue;
            }
            let cell = &self.cells[u as usize];
            let mut c = cell.load(Relaxed);
            while cell::is_unsettled(c) {
                let left = cell::counter(c) - 1;
                // The exit is read only for the last way out: it is another cache line.
                let e = if left == 0 {
                    self.exit[u as usize]
                } else {
                    NONE_HIGH
                };
                let next = if left == 0 && e >= d {
                    d as u8
                } else {
                    cell::unsettled(left)
                };
                match cell.compare_exchange_weak(c, next, Relaxed, Relaxed) {
                    Ok(_) => {
                        if left == 0 {
                            if e >= d {
                                found.entered.push(u);
                            } else if i32::from(e) > -(self.n as i32) {
                                found.waiting.push((e, u));
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
