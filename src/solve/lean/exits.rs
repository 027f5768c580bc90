//! The exits pass: every position's best exit (a capture into a lower layer, or the end of
//! the game) and its count of in-layer moves to the nibbles, slice by slice, the lower
//! layers' blocks read in order (`lower.rs`).
//!
//! The exits go to one file per threshold: `exits-TT.run` lists, in the pass's order, the
//! positions whose best exit is `t` or `−t` (the run format of `runs.rs` without rounds,
//! with the pass's number for key and "lost" for `−t`). Round 0 of threshold `t` then
//! reads only the positions it settles or marks, instead of every position of the layer
//! at every threshold, and the file is removed once its threshold is done. A best exit of 0
//! matters at no threshold and is not written; a position without one has a low exit at
//! every threshold, marked in its nibble here.
use super::nibbles::{self, Nibbles};
use super::runs::{Entry, RunWriter};
use super::{lower, Pass, NO_EXIT, SUB};
use crate::board::swap_rows;
use crate::index;
use crate::solve::settled::Settled;
use crate::solve::{moves_of, Moves};
use crate::store::{StoreError, TableKind};
use rayon::prelude::*;
use std::sync::atomic::{AtomicI8, Ordering::Relaxed};

impl Pass<'_> {
    /// Every position's best exit (to the exits file) and count of in-layer moves (to the
    /// nibbles), slice by slice.
    pub(super) fn exits_pass(&self, nib: &mut Nibbles) -> Result<(), StoreError> {
        let n = self.n;
        let lower = lower::LowerFiles::open(&self.db, self.rules, n)?;
        let mut buckets = (1..=n)
            .map(|t| RunWriter::keys_only(&self.dir.join(exits_file(t))))
            .collect::<Result<Vec<_>, _>>()?;
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
                    for (q, swapped) in index::walk_bits(n, first, end) {
                        let k = (q - first) as usize;
                        let slot = q - start;
                        let moves = moves_of(self.rules, n, swap_rows(swapped), |layer, idx, _| {
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
            // Each part of the slice sorts its exits by threshold; then each threshold's
            // file takes its entries, part after part, one file a task.
            let parts: Vec<Vec<Vec<u32>>> =
                raw.par_chunks(SUB).map(|r| by_threshold(n, r)).collect();
            push_to_buckets(&mut buckets, &parts, start)?;
            self.observer.advance(len as u64);
            start += len as u64;
        }
        for bucket in buckets {
            bucket.finish()?;
        }
        self.observer
            .lower_blocks(n, lower.blocks_read(), lower.blocks_total());
        Ok(())
    }
}

impl Pass<'_> {
    /// The exits pass of the own-row values' reachability game (`super::Game::Reach`):
    /// every position's in-layer moves to the nibbles, and its two nodes' exits to the
    /// files of their thresholds `t = d + n`: the `W` node's best exit `e_w` (from the
    /// children's high ends) at `t = e_w + n` when `e_w > −n`, the `L` node's `e_l` (from
    /// their low ends) as a low exit at `t = n − e_l` when `e_l < n`. An `L` node without
    /// an exit has a low exit at every threshold, as in the values.
    pub(super) fn reach_exits_pass(
        &self,
        nib: &mut Nibbles,
        high: TableKind,
    ) -> Result<(), StoreError> {
        let n = self.n;
        let lower = lower::LowerFiles::open_pairs(&self.db, self.rules, n, high)?;
        let mut buckets = (1..=2 * n)
            .map(|t| RunWriter::keys_only(&self.dir.join(exits_file(t))))
            .collect::<Result<Vec<_>, _>>()?;
        let slice = self.plan.slice_positions;
        let state = nib.as_bytes_mut();
        let mut start = self.lo;
        while start < self.hi {
            let len = slice.min(self.hi - start) as usize;
            let won: Vec<AtomicI8> = (0..len).map(|_| AtomicI8::new(NO_EXIT)).collect();
            let lost: Vec<AtomicI8> = (0..len).map(|_| AtomicI8::new(NO_EXIT)).collect();
            let first = (start - self.lo) as usize;
            let bytes = &mut state[first / 2..(first + len).div_ceil(2)];
            let mut lookups: Vec<u64> = bytes
                .par_chunks_mut(SUB / 2)
                .zip(won.par_chunks(SUB).zip(lost.par_chunks(SUB)))
                .enumerate()
                .flat_map_iter(|(c, (bytes, (won, lost)))| {
                    let first = start + (c * SUB) as u64;
                    let mut found = Vec::new();
                    let end = first + won.len() as u64;
                    for (q, swapped) in index::walk_bits(n, first, end) {
                        let k = (q - first) as usize;
                        let slot = q - start;
                        let moves = moves_of(self.rules, n, swap_rows(swapped), |layer, idx, _| {
                            found.push(u64::from(layer) << 58 | idx << 20 | slot);
                        });
                        match moves {
                            Moves::Over(value) => {
                                won[k].store(value, Relaxed);
                                lost[k].store(value, Relaxed);
                                nibbles::set_in(bytes, k, 0);
                            }
                            Moves::Stay(stays) => nibbles::set_in(bytes, k, stays),
                        }
                    }
                    found
                })
                .collect();
            lookups.par_sort_unstable();
            lower.answer_pairs(n, &lookups, &won, &lost)?;
            drop(lookups);
            let won: Vec<i8> = won.iter().map(|e| e.load(Relaxed)).collect();
            let lost: Vec<i8> = lost.iter().map(|e| e.load(Relaxed)).collect();
            bytes
                .par_chunks_mut(SUB / 2)
                .zip(lost.par_chunks(SUB))
                .for_each(|(bytes, lost)| {
                    for (k, &e) in lost.iter().enumerate() {
                        if e == NO_EXIT {
                            let nib = nibbles::get_in(bytes, k);
                            nibbles::set_in(bytes, k, nib | nibbles::LOW_EXIT);
                        }
                    }
                });
            let parts: Vec<Vec<Vec<u32>>> = won
                .par_chunks(SUB)
                .zip(lost.par_chunks(SUB))
                .map(|(w, l)| reach_by_threshold(n, w, l))
                .collect();
            push_to_buckets(&mut buckets, &parts, start)?;
            self.observer.advance(len as u64);
            start += len as u64;
        }
        for bucket in buckets {
            bucket.finish()?;
        }
        self.observer
            .lower_blocks(n, lower.blocks_read(), lower.blocks_total());
        Ok(())
    }
}

/// The two nodes' exits of consecutive positions (`won`, `lost`: their best exits, fewer
/// than 2^31 positions) sorted by threshold `t = d + n`: list `t − 1` holds `k << 1` for
/// every position `k` whose `W` exit is `t − n` (above `−n`), and `k << 1 | 1` for every
/// one whose `L` exit is `n − t` (below `n`), in the order of `k`, a `W` entry before an
/// `L` entry of the same position.
fn reach_by_threshold(n: u32, won: &[i8], lost: &[i8]) -> Vec<Vec<u32>> {
    let n = n as i32;
    let mut lists = vec![Vec::new(); 2 * n as usize];
    for (k, (&w, &l)) in won.iter().zip(lost).enumerate() {
        let k = (k as u32) << 1;
        if w != NO_EXIT && i32::from(w) > -n {
            lists[(i32::from(w) + n - 1) as usize].push(k);
        }
        if l != NO_EXIT && i32::from(l) < n {
            lists[(n - i32::from(l) - 1) as usize].push(k | 1);
        }
    }
    lists
}

/// Appends a slice's exits, sorted by threshold in parts of [`SUB`] positions from
/// `start` (entries `k << 1 | lost`), to each threshold's file, one file a task.
fn push_to_buckets(
    buckets: &mut [RunWriter],
    parts: &[Vec<Vec<u32>>],
    start: u64,
) -> Result<(), StoreError> {
    buckets
        .par_iter_mut()
        .enumerate()
        .try_for_each(|(b, bucket)| {
            for (p, part) in parts.iter().enumerate() {
                let first = start + (p * SUB) as u64;
                for &k in &part[b] {
                    bucket.push(Entry {
                        settled: Settled::from_key(first + u64::from(k >> 1), k & 1 == 1),
                        round: 0,
                    })?;
                }
            }
            Ok(())
        })
}

/// The exits file of threshold `t`.
pub(super) fn exits_file(t: u32) -> String {
    format!("exits-{t:02}.run")
}

/// The exits of `raw` (best exits of consecutive positions, fewer than 2^31) sorted by
/// threshold: list `t − 1` holds `k << 1 | lost` for every position `k` whose best exit is
/// `t` (lost 0) or `−t` (lost 1). Exits of 0, and the absence of any, go in no list.
fn by_threshold(n: u32, raw: &[u8]) -> Vec<Vec<u32>> {
    let mut lists = vec![Vec::new(); n as usize];
    for (k, &e) in raw.iter().enumerate() {
        let t = (e as i8).unsigned_abs();
        if (1..=n).contains(&u32::from(t)) {
            lists[usize::from(t) - 1].push((k as u32) << 1 | u32::from((e as i8) < 0));
        }
    }
    lists
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exits_go_to_their_threshold_with_their_sign() {
        let exits: [i8; 8] = [0, 2, -2, NO_EXIT, 1, 5, -4, 4];
        let raw: Vec<u8> = exits.iter().map(|&e| e as u8).collect();
        let lists = by_threshold(4, &raw);
        let entry = |k: u32, lost: bool| k << 1 | u32::from(lost);
        assert_eq!(lists[0], [entry(4, false)]);
        assert_eq!(lists[1], [entry(1, false), entry(2, true)]);
        assert!(lists[2].is_empty());
        // No exit, an exit of 0 and one beyond the layer's thresholds go nowhere.
        assert_eq!(lists[3], [entry(6, true), entry(7, false)]);
        assert_eq!(lists.len(), 4);
    }

    #[test]
    fn the_two_nodes_exits_go_to_their_thresholds() {
        // n = 3: thresholds t = 1..=6 stand for d = -2..=3.
        let won: [i8; 4] = [3, -3, 0, NO_EXIT];
        let lost: [i8; 4] = [-1, 3, 0, NO_EXIT];
        let lists = reach_by_threshold(3, &won, &lost);
        assert_eq!(lists.len(), 6);
        // W of 0 at d = 3 (t = 6); L of 0 (exit -1) at d = 1 (t = 4).
        // (Entries are `k << 1`, plus 1 for an L entry.)
        assert_eq!(lists[5], [0]);
        assert_eq!(lists[3], [1]);
        // W exit -3 and L exit 3 decide nothing; exits of 0 both at d = 0 (t = 3), W first.
        assert_eq!(lists[2], [2 << 1, 2 << 1 | 1]);
        assert!([0, 1, 4].iter().all(|&t| lists[t].is_empty()));
    }
}
