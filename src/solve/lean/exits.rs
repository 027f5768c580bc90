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
use crate::store::StoreError;
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
                    Ok::<(), StoreError>(())
                })?;
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
}
