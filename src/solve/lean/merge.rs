//! The merges: a threshold's rounds into one run, and every threshold's run into the
//! distances and values files.

use super::*;

impl Pass<'_> {
    /// Merges a threshold's rounds (`sources`) into one run at `out`, each entry keeping
    /// its round. The rounds' runs are read once, in order, a range of [`PART`] positions
    /// at a time: each range's entries are placed in a table by index and read back in
    /// order, which sorts them without comparing. A range's entries are read (every run by
    /// its own task) while the previous range's are written.
    pub(super) fn merge_threshold(
        &self,
        sources: &[runs::Source],
        out: &Path,
    ) -> Result<(), StoreError> {
        let size = index::size(self.n);
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
        let mut placed = self.take_range(&mut cursors, 0, out)?;
        let mut base = 0u64;
        while base < size {
            let end = (base + PART).min(size);
            let (written, next) = rayon::join(
                || emit_range(&placed, base, &mut slots, &mut groups, &mut w),
                || {
                    if end < size {
                        self.take_range(&mut cursors, end, out)
                    } else {
                        Ok(Vec::new())
                    }
                },
            );
            written?;
            placed = next?;
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

    /// Every run's entries of the range of [`PART`] positions from `base`, each as its
    /// offset in the range and its slot (settled, lost, round), read in parallel.
    fn take_range(
        &self,
        cursors: &mut [runs::Peek],
        base: u64,
        out: &Path,
    ) -> Result<Vec<Vec<(u32, u16)>>, StoreError> {
        let n = self.n;
        let size = index::size(n);
        let len = PART.min(size - base);
        let end = base + len;
        let bound = if end == size {
            u64::MAX
        } else {
            settled::key(&index::unrank(n, end))
        };
        cursors
            .par_iter_mut()
            .map(|c| {
                let mut placed = Vec::new();
                c.take_below(bound, |e| {
                    let key = e.settled.key();
                    let i = valid_key(n, key)
                        .then(|| settled::index_of_key(key).checked_sub(base))
                        .flatten()
                        .filter(|&i| i < len)
                        .ok_or_else(|| damaged_run(out))?;
                    let round = if self.keeps_rounds() { e.round } else { 0 };
                    let slot = 1 | u16::from(e.settled.lost()) << 1 | u16::from(round) << 2;
                    placed.push((i as u32, slot));
                    Ok(())
                })?;
                Ok(placed)
            })
            .collect()
    }

    /// The final merge: every threshold's run, in index order, into the distances and the
    /// values files (distances first: a values file marks a finished layer), a range of
    /// [`PART`] positions at a time.
    pub(super) fn write_tables(
        &self,
        progress: &Checkpoint,
        write: WriteOptions,
        ex: &dyn Exchange,
    ) -> Result<Option<WrittenLayer>, StoreError> {
        let n = self.n;
        let size = index::size(n);
        // Rank 0 writes; every rank sends it the positions it settled, range by range
        // (endless play, value 0, is what is left).
        let root = ex.rank() == 0;
        let mut outputs = if root {
            let values = TableWriter::create(&self.db, self.rules, n, TableKind::Values, write)?;
            let rounds = self
                .distances_level
                .map(|level| {
                    let write = WriteOptions {
                        zstd_level: level,
                        ..write
                    };
                    TableWriter::create(&self.db, self.rules, n, TableKind::Distances, write)
                })
                .transpose()?;
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
        // A range's entries are read (every threshold's run by its own task) while the
        // previous range is gathered, compressed and written.
        let mut placed = take_tables_range(&mut cursors, 0, size)?;
        let mut base = 0u64;
        while base < size {
            let len = PART.min(size - base) as usize;
            let end = base + len as u64;
            let (written, next) = rayon::join(
                || -> Result<(), StoreError> {
                    let (values, rounds) = (&mut values[..len], &mut rounds[..len]);
                    values.fill(0);
                    rounds.fill(0);
                    for &(i, value, round) in placed.iter().flatten() {
                        values[i as usize] = value;
                        rounds[i as usize] = round;
                    }
                    if ex.ranks() > 1 {
                        self.gather_range(values, rounds, ex)?;
                    }
                    if let Some((values_out, rounds_out)) = &mut outputs {
                        for &v in values.iter() {
                            histogram[store::histogram_bucket(v as i8)] += 1;
                        }
                        let (r, v) = rayon::join(
                            || rounds_out.as_mut().map_or(Ok(()), |out| out.append(rounds)),
                            || values_out.append(values),
                        );
                        r?;
                        v?;
                    }
                    Ok(())
                },
                || {
                    if end < size {
                        take_tables_range(&mut cursors, end, size)
                    } else {
                        Ok(Vec::new())
                    }
                },
            );
            written?;
            placed = next?;
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
        // The distances first: a values file marks a finished layer.
        match rounds_out {
            Some(out) => out.finish(summary.clone())?,
            None => store::write_without_entries(
                &self.db,
                self.rules,
                TableKind::Distances,
                summary.clone(),
                write,
            )?,
        };
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

/// Writes a range's entries ([`Pass::take_range`]) in index order: placed in `slots`,
/// then read back through `groups`, a bit for each group of 16 slots, set when one is
/// filled, so a sparse range (most ranges of most thresholds) costs its entries rather
/// than a scan of its 2^20 slots. Leaves `slots` and `groups` empty.
fn emit_range(
    placed: &[Vec<(u32, u16)>],
    base: u64,
    slots: &mut [u16],
    groups: &mut [u64],
    w: &mut RunWriter,
) -> Result<(), StoreError> {
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
                    w.push(Entry {
                        settled: Settled::from_key(base + (16 * g + j) as u64, *s & 2 != 0),
                        round: (*s >> 2) as u8,
                    })?;
                    *s = 0;
                }
            }
        }
    }
    Ok(())
}

/// A threshold's run being read by the final merge: the threshold, the run, its file.
type ThresholdCursor<'a> = (i8, runs::Peek<'a>, PathBuf);
/// A threshold's entries of a range of the final merge: offset in the range, value, round.
type TablesPart = Vec<(u32, u8, u8)>;

/// Every threshold's entries of the range of [`PART`] positions from `base` (of a layer
/// of `size`), each as its offset in the range, its value and its round, read in
/// parallel.
fn take_tables_range(
    cursors: &mut [ThresholdCursor],
    base: u64,
    size: u64,
) -> Result<Vec<TablesPart>, StoreError> {
    let end = (base + PART).min(size);
    cursors
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
        .collect()
}
