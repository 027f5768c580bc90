//! The merges: a threshold's rounds into one run, and every threshold's run into the
//! distances and values files.

use super::*;

impl Pass<'_> {
    /// and keeping its round. The rounds' runs are read once, in order, a range of
    /// [`PART`] positions at a time: each range's entries are placed in a table by index
    /// and read back in order, which sorts them without comparing.
    pub(super) fn merge_threshold(
        &self,
        sources: &[runs::Source],
        out: &Path,
    ) -> Result<(), StoreError> {
        let n = self.n;
        let size = index::size(n);
        let fan_in = runs::merge_fan_in(self.hi - self.lo);
        let (sources, staged) = runs::reduce(sources, out, fan_in)?;
        let mut cursors = sources
            .iter()
            .map(runs::Peek::open)
            .collect::<Result<Vec<_>, _>>()?;
        let mut w = RunWriter::grouped(out, runs::GROUP)?;
        // PART is a multiple of 16 × 64: whole groups, whole words.
        let mut slots = vec![0u16; PART as usize];
        let mut groups = vec![0u64; PART as usize / 16 / 64];
        let mut base = 0u64;
        while base < size {
            let len = PART.min(size - base) as usize;
            let end = base + len as u64;
            let bound = if end == size {
                u64::MAX
            } else {
                settled::key(&index::unrank(n, end))
            };
            // Each run's entries of the range, read and placed by index in parallel.
            let placed: Vec<Vec<(u32, u16)>> = cursors
                .par_iter_mut()
                .map(|c| {
                    let mut placed = Vec::new();
                    c.take_below(bound, |e| {
                        let key = e.settled.key();
                        let i = valid_key(n, key)
                            .then(|| settled::index_of_key(key).checked_sub(base))
                            .flatten()
                            .filter(|&i| i < len as u64)
                            .ok_or_else(|| damaged_run(out))?;
                        let slot = 1 | u16::from(e.settled.lost()) << 1 | u16::from(e.round) << 2;
                        placed.push((i as u32, slot));
                        Ok(())
                    })?;
                    Ok(placed)
                })
                .collect::<Result<_, StoreError>>()?;
            // The slots are read back in order through a bit a group of 16 slots, set when
            // one is filled: a sparse range (most ranges of most thresholds) costs its
            // entries, not a scan of its 2^20 slots.
            for &(i, slot) in placed.iter().flatten() {
                slots[i as usize] = slot;
                let g = i as usize / 16;
                groups[g / 64] |= 1 << (g % 64);
            }
            for (word_at, word) in groups.iter_mut().enumerate() {
                while *word != 0 {
                    let g = 64 * word_at + word.trailing_zeros() as usize;
                    *word &= *word - 1;
                    for (j, s) in slots[16 * g..16 * g + 16].iter_mut().enumerate() {
                        if *s != 0 {
                            let i = base + (16 * g + j) as u64;
                            w.push(Entry {
                                settled: Settled::from_key(i, *s & 2 != 0),
                                round: (*s >> 2) as u8,
                            })?;
                            *s = 0;
                        }
                    }
                }
            }
            base = end;
        }
        if cursors.iter().any(|c| !c.is_done()) {
            return Err(damaged_run(out));
        }
        w.finish()?;
        for f in staged {
            let _ = std::fs::remove_file(f);
        }
        Ok(())
    }

    /// The final merge: every threshold's run, in index order, into the distances and the
    /// values files (distances first: a values file marks a finished layer), a range of
    /// [`PART`] positions at a time.
    pub(super) fn write_tables(
        &self,
        progress: &Checkpoint,
        write: WriteOptions,
        distances_level: i32,
        ex: &dyn Exchange,
    ) -> Result<Option<WrittenLayer>, StoreError> {
        let n = self.n;
        let size = index::size(n);
        // Rank 0 writes; every rank sends it the positions it settled, range by range
        // (endless play, value 0, is what is left).
        let root = ex.rank() == 0;
        let mut outputs = if root {
            let values = TableWriter::create(&self.db, self.rules, n, TableKind::Values, write)?;
            let rounds = TableWriter::create(
                &self.db,
                self.rules,
                n,
                TableKind::Distances,
                WriteOptions {
                    zstd_level: distances_level,
                    ..write
                },
            )?;
            Some((values, rounds))
        } else {
            None
        };
        let mut cursors = Vec::new();
        for (t, f) in &progress.thresholds {
            let source = runs::Source::File(self.dir.join(f));
            cursors.push((*t as i8, runs::Peek::open(&source)?, self.dir.join(f)));
        }
        let mut histogram = [0u64; HISTOGRAM_LEN];
        let part = PART.min(size) as usize;
        let (mut values, mut rounds) = (vec![0u8; part], vec![0u8; part]);
        let mut base = 0u64;
        while base < size {
            let len = PART.min(size - base) as usize;
            let end = base + len as u64;
            values[..len].fill(0);
            rounds[..len].fill(0);
            // Each threshold's entries of the range, read in parallel, then placed.
            let placed: Vec<Vec<(u32, u8, u8)>> = cursors
                .par_iter_mut()
                .map(|(t, c, path)| {
                    let mut placed = Vec::new();
                    c.take_below(end, |e| {
                        let i = e
                            .settled
                            .key()
                            .checked_sub(base)
                            .ok_or_else(|| damaged_run(path))?;
                        let value = if e.settled.lost() { -*t } else { *t } as u8;
                        placed.push((i as u32, value, e.round));
                        Ok(())
                    })?;
                    Ok(placed)
                })
                .collect::<Result<_, StoreError>>()?;
            for &(i, value, round) in placed.iter().flatten() {
                values[i as usize] = value;
                rounds[i as usize] = round;
            }
            if ex.ranks() > 1 {
                self.gather_range(&mut values[..len], &mut rounds[..len], ex)?;
            }
            if let Some((values_out, rounds_out)) = &mut outputs {
                for &v in &values[..len] {
                    histogram[store::histogram_bucket(v as i8)] += 1;
                }
                rounds_out.append(&rounds[..len])?;
                values_out.append(&values[..len])?;
            }
            base = end;
        }
        if let Some((_, _, path)) = cursors.iter().find(|(_, c, _)| !c.is_done()) {
            return Err(damaged_run(path));
        }
        let Some((values_out, rounds_out)) = outputs else {
            return Ok(None);
        };
        let summary = LayerSummary {
            seeds: n,
            positions: size,
            histogram,
        };
        rounds_out.finish(summary.clone())?;
        values_out.finish(summary).map(Some)
    }

    /// Rank 0 gets every rank's settled positions of a range of the final merge: the
    /// offset in the range, the value and the round, 8 bytes each.
    fn gather_range(
        &self,
        values: &mut [u8],
        rounds: &mut [u8],
        ex: &dyn Exchange,
    ) -> Result<(), StoreError> {
        let mut mine = Vec::new();
        for (i, (&v, &r)) in values.iter().zip(rounds.iter()).enumerate() {
            if v != 0 {
                mine.push((i as u64) << 16 | u64::from(v) << 8 | u64::from(r));
            }
        }
        for packed in ex.gather_to_root(&mine) {
            let i = (packed >> 16) as usize;
            if i >= values.len() {
                return Err(StoreError::Corrupted {
                    path: self.dir.clone(),
                    what: "another rank sent a position outside the range".into(),
                });
            }
            values[i] = (packed >> 8) as u8;
            rounds[i] = packed as u8;
        }
        Ok(())
    }
}
