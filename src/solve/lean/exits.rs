//! The exits pass: every position's best exit (a capture into a lower layer, or the end of
//! the game) to the exits file, and its count of in-layer moves to the nibbles, slice by
//! slice, the lower layers' blocks read in order (`lower.rs`).

use super::*;

impl Pass<'_> {
    /// Every position's best exit (to the exits file) and count of in-layer moves (to the
    /// nibbles), slice by slice.
    pub(super) fn exits_pass(&self, nib: &mut Nibbles) -> Result<(), StoreError> {
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
}
