//! The merges: a threshold's rounds into one run, and every threshold's run into the
//! distances and values files.
use super::checkpoint::Checkpoint;
use super::exchange::Exchange;
use super::runs::{self, Entry, RunWriter};
use super::{damaged_run, valid_key, Pass, PART};
use crate::index;
use crate::solve::settled::{self, Settled};
use crate::store::{
    self, compress_blocks, varint, LayerSummary, PairWriter, StoreError, TableKind, TableWriter,
    WriteOptions, WrittenLayer, HISTOGRAM_LEN,
};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

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
                    // A `W` entry sets bit 0, an `L` entry bit 1: a position's two nodes
                    // (a reachability game, which keeps no rounds) share a slot.
                    let node = if e.settled.lost() { 2 } else { 1 };
                    let slot = node | u16::from(round) << 2;
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
        if ex.ranks() > 1 {
            return self.write_tables_partitioned(progress, write, ex);
        }
        let n = self.n;
        let size = index::size(n);
        let (mut values_out, mut rounds_out) = self.table_writers(write)?;
        let mut cursors = self.threshold_cursors(progress)?;
        let mut histogram = [0u64; HISTOGRAM_LEN];
        let part = PART.min(size) as usize;
        let (mut values, mut rounds) = (vec![0u8; part], vec![0u8; part]);
        // A range's entries are read (every threshold's run by its own task) while the
        // previous range is compressed and written.
        let mut placed = take_tables_range(&mut cursors, 0, part as u64)?;
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
                    for &v in values.iter() {
                        histogram[store::histogram_bucket(v as i8)] += 1;
                    }
                    let (r, v) = rayon::join(
                        || rounds_out.as_mut().map_or(Ok(()), |out| out.append(rounds)),
                        || values_out.append(values),
                    );
                    r?;
                    v?;
                    Ok(())
                },
                || {
                    if end < size {
                        take_tables_range(&mut cursors, end, (end + PART).min(size))
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
        self.finish_tables(values_out, rounds_out, histogram, write)
            .map(Some)
    }

    /// The final merge of a reachability game (`super::Game::Reach`): every threshold's
    /// run, in index order, into the layer's pair, a range of [`PART`] positions at a
    /// time: low = the `W` node's value (`t − n` for an entry of threshold `t`, `−n`
    /// without one), high = the `L` node's (`n − t`, or `n`).
    pub(super) fn write_pair_tables(
        &self,
        progress: &Checkpoint,
        write: WriteOptions,
    ) -> Result<(WrittenLayer, WrittenLayer, u64), StoreError> {
        let super::Game::Reach { high } = self.game else {
            unreachable!("the pair of a reachability game")
        };
        let n = self.n;
        let size = index::size(n);
        let mut out = PairWriter::create(&self.db, self.rules, n, high, write)?;
        let mut cursors = self.threshold_cursors(progress)?;
        let mut histograms = ([0u64; HISTOGRAM_LEN], [0u64; HISTOGRAM_LEN]);
        let mut exact = 0u64;
        let part = PART.min(size) as usize;
        let (mut low, mut high) = (vec![0u8; part], vec![0u8; part]);
        let mut placed = take_tables_range(&mut cursors, 0, part as u64)?;
        let mut base = 0u64;
        while base < size {
            let len = PART.min(size - base) as usize;
            let end = base + len as u64;
            let (written, next) = rayon::join(
                || -> Result<(), StoreError> {
                    let (low, high) = (&mut low[..len], &mut high[..len]);
                    low.fill(-(n as i8) as u8);
                    high.fill(n as u8);
                    // An entry's value is `t` for a `W` node, `−t` for an `L` node.
                    for &(i, value, _) in placed.iter().flatten() {
                        let v = i32::from(value as i8);
                        if v > 0 {
                            low[i as usize] = (v - n as i32) as i8 as u8;
                        } else {
                            high[i as usize] = (n as i32 + v) as i8 as u8;
                        }
                    }
                    for (&l, &h) in low.iter().zip(high.iter()) {
                        histograms.0[store::histogram_bucket(l as i8)] += 1;
                        histograms.1[store::histogram_bucket(h as i8)] += 1;
                        exact += u64::from(l == h);
                    }
                    out.append(low, high)
                },
                || {
                    if end < size {
                        take_tables_range(&mut cursors, end, (end + PART).min(size))
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
        let summary = |histogram| LayerSummary {
            seeds: n,
            positions: size,
            histogram,
        };
        let (low, high) = out.finish((summary(histograms.0), summary(histograms.1)))?;
        Ok((low, high, exact))
    }

    /// The writers of the layer's values file and, if it keeps them, its distances file.
    fn table_writers(
        &self,
        write: WriteOptions,
    ) -> Result<(TableWriter, Option<TableWriter>), StoreError> {
        let n = self.n;
        let values = TableWriter::create(&self.db, self.rules, n, TableKind::Values, write)?;
        let rounds = self
            .distances_level
            .map(|level| {
                TableWriter::create(
                    &self.db,
                    self.rules,
                    n,
                    TableKind::Distances,
                    distances_options(write, level),
                )
            })
            .transpose()?;
        Ok((values, rounds))
    }

    /// A cursor over each threshold's run, for the final merge.
    fn threshold_cursors(
        &self,
        progress: &Checkpoint,
    ) -> Result<Vec<ThresholdCursor<'static>>, StoreError> {
        let mut cursors = Vec::new();
        for (t, f) in &progress.thresholds {
            let source = runs::Source::File(self.dir.join(f));
            cursors.push((*t as i8, runs::Peek::open(&source)?, self.dir.join(f)));
        }
        Ok(cursors)
    }

    /// The tables' headers, from the layer's `histogram`: the distances first (a values
    /// file marks a finished layer).
    fn finish_tables(
        &self,
        values_out: TableWriter,
        rounds_out: Option<TableWriter>,
        histogram: [u64; HISTOGRAM_LEN],
        write: WriteOptions,
    ) -> Result<WrittenLayer, StoreError> {
        let summary = LayerSummary {
            seeds: self.n,
            positions: index::size(self.n),
            histogram,
        };
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
        values_out.finish(summary)
    }
}

impl Pass<'_> {
    /// The final merge of a partitioned build. The file's positions are dealt out in
    /// segments of whole blocks, about [`PART`] positions each, to the ranks in turn: a
    /// round of the merge is one segment for each rank, in file order. Every rank sends
    /// each segment's owner the positions of it that it settled (an all-to-all, packed);
    /// the owner compresses the segment's blocks, as a single process would, and sends
    /// them to rank 0, which writes them in order. So no rank receives more than its
    /// share of the settled positions, and rank 0 besides the tables as they are on disk;
    /// and the ranks compress the tables together.
    fn write_tables_partitioned(
        &self,
        progress: &Checkpoint,
        write: WriteOptions,
        ex: &dyn Exchange,
    ) -> Result<Option<WrittenLayer>, StoreError> {
        let size = index::size(self.n);
        let (me, ranks) = (ex.rank(), ex.ranks());
        let mut outputs = if me == 0 {
            Some(self.table_writers(write)?)
        } else {
            None
        };
        let mut cursors = self.threshold_cursors(progress)?;
        let segment = segment_len(write.block_size);
        let round_len = segment * ranks as u64;
        let mut histogram = [0u64; HISTOGRAM_LEN];
        let seg_len = segment.min(size) as usize;
        let (mut values, mut rounds) = (vec![0u8; seg_len], vec![0u8; seg_len]);
        let take_round = |cursors: &mut [ThresholdCursor], base: u64| {
            (0..ranks as u64)
                .map(|d| {
                    let lo = (base + d * segment).min(size);
                    take_tables_range(cursors, lo, (lo + segment).min(size))
                })
                .collect::<Result<Vec<_>, _>>()
        };
        // A round's entries are read while the previous round is exchanged, compressed and
        // written.
        let mut placed = take_round(&mut cursors, 0)?;
        let mut base = 0u64;
        while base < size {
            let end = (base + round_len).min(size);
            let (written, next) = rayon::join(
                || -> Result<(), StoreError> {
                    let lo = (base + me as u64 * segment).min(size);
                    let len = ((lo + segment).min(size) - lo) as usize;
                    let (values, rounds) = (&mut values[..len], &mut rounds[..len]);
                    self.own_segment(&placed, ex, values, rounds)?;
                    let parts = ex.gather_bytes(self.compress_segment(values, rounds, write));
                    if let Some((values_out, rounds_out)) = &mut outputs {
                        for (from, part) in parts.iter().enumerate() {
                            let lo = (base + from as u64 * segment).min(size);
                            let len = (lo + segment).min(size) - lo;
                            self.append_segment(
                                part,
                                len,
                                write.block_size,
                                values_out,
                                rounds_out.as_mut(),
                                &mut histogram,
                            )
                            .ok_or_else(|| {
                                StoreError::Corrupted {
                                    path: self.dir.clone(),
                                    what: format!(
                                        "rank {from} sent a damaged segment of the tables"
                                    ),
                                }
                            })??;
                        }
                    }
                    Ok(())
                },
                || {
                    if end < size {
                        take_round(&mut cursors, end)
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
        self.finish_tables(values_out, rounds_out, histogram, write)
            .map(Some)
    }

    /// This rank's segment of a round of the final merge, in `values` and `rounds`: the
    /// positions it settled itself (`placed[me]`) and those every other rank sends it, in
    /// exchange for theirs.
    fn own_segment(
        &self,
        placed: &[Vec<TablesPart>],
        ex: &dyn Exchange,
        values: &mut [u8],
        rounds: &mut [u8],
    ) -> Result<(), StoreError> {
        let me = ex.rank();
        let send: Vec<Vec<u8>> = placed
            .par_iter()
            .enumerate()
            .map(|(d, parts)| {
                if d == me {
                    Vec::new()
                } else {
                    pack_settled(parts)
                }
            })
            .collect();
        let got = ex.all_to_all_bytes(send);
        values.fill(0);
        rounds.fill(0);
        for &(i, value, round) in placed[me].iter().flatten() {
            values[i as usize] = value;
            rounds[i as usize] = round;
        }
        for (from, bytes) in got.iter().enumerate() {
            if from != me && unpack_settled(bytes, values, rounds).is_none() {
                return Err(StoreError::Corrupted {
                    path: self.dir.clone(),
                    what: format!("rank {from} sent a damaged part of this rank's segment"),
                });
            }
        }
        Ok(())
    }

    /// A segment of the tables as its owner sends it to rank 0: the histogram of its
    /// values, how many blocks each table has of it and their lengths, then the blocks
    /// (values, then distances if the layer keeps them), as [`compress_blocks`] makes
    /// them. Every number is 8 bytes, little-endian.
    fn compress_segment(&self, values: &[u8], rounds: &[u8], write: WriteOptions) -> Vec<u8> {
        let mut histogram = [0u64; HISTOGRAM_LEN];
        for &v in values {
            histogram[store::histogram_bucket(v as i8)] += 1;
        }
        let (v, r) = rayon::join(
            || compress_blocks(values, write),
            || {
                self.distances_level
                    .map(|level| compress_blocks(rounds, distances_options(write, level)))
                    .unwrap_or_default()
            },
        );
        let mut out = Vec::new();
        let mut put = |x: u64| out.extend_from_slice(&x.to_le_bytes());
        histogram.iter().for_each(|&h| put(h));
        put(v.len() as u64);
        put(r.len() as u64);
        v.iter().chain(&r).for_each(|b| put(b.len() as u64));
        for b in v.iter().chain(&r) {
            out.extend_from_slice(b);
        }
        out
    }

    /// Rank 0 writes a segment of `len` positions that [`Pass::compress_segment`] made,
    /// and adds its histogram to the layer's. None when `part` is not what it makes for
    /// such a segment (checked before anything is written).
    fn append_segment(
        &self,
        part: &[u8],
        len: u64,
        block_size: u32,
        values_out: &mut TableWriter,
        rounds_out: Option<&mut TableWriter>,
        histogram: &mut [u64; HISTOGRAM_LEN],
    ) -> Option<Result<(), StoreError>> {
        let mut words = part
            .chunks_exact(8)
            .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")));
        let mut got = [0u64; HISTOGRAM_LEN];
        for h in &mut got {
            *h = words.next()?;
        }
        let blocks = len.div_ceil(u64::from(block_size));
        let (nv, nr) = (words.next()?, words.next()?);
        let want_r = if rounds_out.is_some() { blocks } else { 0 };
        if nv != blocks || nr != want_r || got.iter().sum::<u64>() != len {
            return None;
        }
        let lens: Vec<usize> = (0..nv + nr)
            .map(|_| words.next().and_then(|l| usize::try_from(l).ok()))
            .collect::<Option<_>>()?;
        let mut at = 8 * (HISTOGRAM_LEN + 2 + lens.len());
        let mut cut = Vec::with_capacity(lens.len());
        for &l in &lens {
            cut.push(part.get(at..at.checked_add(l)?)?);
            at += l;
        }
        if at != part.len() {
            return None;
        }
        for (h, g) in histogram.iter_mut().zip(got) {
            *h += g;
        }
        let (v, r) = cut.split_at(nv as usize);
        Some((|| {
            values_out.append_compressed(v.iter().copied(), len)?;
            if let Some(out) = rounds_out {
                out.append_compressed(r.iter().copied(), len)?;
            }
            Ok(())
        })())
    }
}

/// The zstd level of the settled positions a rank sends a segment's owner: the fastest,
/// as for the other exchanges.
const SETTLED_LEVEL: i32 = 1;

/// A rank's settled positions of a segment (every threshold's entries: offset, value,
/// round), as it sends them to the segment's owner: sorted by offset, as three streams,
/// the offsets' differences (LEB128 varints), the values and the rounds, compressed
/// together with zstd, after the count of entries and the varints' length (8 bytes each,
/// little-endian). Apart, each stream is regular (the values and rounds of neighbours are
/// alike); as one 8-byte word an entry, packed as the updates are, they took about 1.4
/// bytes a position at layer 18. Nothing at all for no entries.
fn pack_settled(parts: &[TablesPart]) -> Vec<u8> {
    let mut entries: Vec<(u32, u8, u8)> = parts.iter().flatten().copied().collect();
    if entries.is_empty() {
        return Vec::new();
    }
    entries.sort_unstable_by_key(|e| e.0);
    let mut raw = Vec::with_capacity(4 * entries.len());
    let mut last = 0u32;
    for &(i, _, _) in &entries {
        varint::push(&mut raw, u64::from(i - last));
        last = i;
    }
    let varints = raw.len() as u64;
    raw.extend(entries.iter().map(|e| e.1));
    raw.extend(entries.iter().map(|e| e.2));
    let mut out = (entries.len() as u64).to_le_bytes().to_vec();
    out.extend(varints.to_le_bytes());
    out.extend(zstd::bulk::compress(&raw, SETTLED_LEVEL).expect("zstd compresses in memory"));
    out
}

/// Places the entries [`pack_settled`] packed in a segment of `values.len()` positions;
/// None when `bytes` are not what it makes for such a segment.
fn unpack_settled(bytes: &[u8], values: &mut [u8], rounds: &mut [u8]) -> Option<()> {
    if bytes.is_empty() {
        return Some(());
    }
    let (count, rest) = bytes.split_first_chunk::<8>()?;
    let (varints, frame) = rest.split_first_chunk::<8>()?;
    let count = usize::try_from(u64::from_le_bytes(*count)).ok()?;
    let varints = usize::try_from(u64::from_le_bytes(*varints)).ok()?;
    // An offset in a segment takes at most 5 varint bytes: no more is ever decompressed.
    if count > values.len() || varints > 5 * count {
        return None;
    }
    let len = varints + 2 * count;
    let raw = zstd::bulk::decompress(frame, len).ok()?;
    if raw.len() != len {
        return None;
    }
    let (varints, rest) = raw.split_at(varints);
    let (vals, rnds) = rest.split_at(count);
    let (mut offset, mut read, mut k) = (0u64, 0usize, 0usize);
    while read < varints.len() {
        offset = offset.checked_add(varint::read(varints, &mut read)?)?;
        let i = usize::try_from(offset).ok().filter(|&i| i < values.len())?;
        if k == count {
            return None;
        }
        values[i] = vals[k];
        rounds[i] = rnds[k];
        k += 1;
    }
    (k == count).then_some(())
}

/// Positions of a segment of a partitioned final merge: whole blocks of `block_size`,
/// [`PART`] or a little less (one block if a block is larger).
fn segment_len(block_size: u32) -> u64 {
    let block = u64::from(block_size);
    (PART / block).max(1) * block
}

/// The options of a distances table written at `level`.
fn distances_options(write: WriteOptions, level: i32) -> WriteOptions {
    WriteOptions {
        zstd_level: level,
        ..write
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
        slots[i as usize] |= slot;
        let g = i as usize / 16;
        groups[g / 64] |= 1 << (g % 64);
    }
    for (word_at, word) in groups.iter_mut().enumerate() {
        while *word != 0 {
            let g = 64 * word_at + word.trailing_zeros() as usize;
            *word &= *word - 1;
            for (j, s) in slots[16 * g..16 * g + 16].iter_mut().enumerate() {
                let key = base + (16 * g + j) as u64;
                let round = (*s >> 2) as u8;
                for (bit, lost) in [(1, false), (2, true)] {
                    if *s & bit != 0 {
                        w.push(Entry {
                            settled: Settled::from_key(key, lost),
                            round,
                        })?;
                    }
                }
                *s = 0;
            }
        }
    }
    Ok(())
}

/// A threshold's run being read by the final merge: the threshold, the run, its file.
type ThresholdCursor<'a> = (i8, runs::Peek<'a>, PathBuf);
/// A threshold's entries of a range of the final merge: offset in the range, value, round.
type TablesPart = Vec<(u32, u8, u8)>;

/// Every threshold's entries of the positions `base..end` (at most 2^32 of them), each as
/// its offset from `base`, its value and its round, read in parallel.
fn take_tables_range(
    cursors: &mut [ThresholdCursor],
    base: u64,
    end: u64,
) -> Result<Vec<TablesPart>, StoreError> {
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

#[cfg(test)]
mod tests {
    use super::{pack_settled, unpack_settled};

    /// What two thresholds settled in a segment arrives in place, whatever the order of
    /// the entries; damaged or foreign bytes are refused.
    #[test]
    fn settled_positions_unpack_in_place() {
        let a: Vec<(u32, u8, u8)> = (0..5_000u32)
            .map(|i| (7 * i + 3, 2, (i % 5) as u8))
            .collect();
        let b: Vec<(u32, u8, u8)> = (0..3_000u32).rev().map(|i| (7 * i + 5, 254, 1)).collect();
        let bytes = pack_settled(&[a.clone(), b.clone(), Vec::new()]);
        let (mut values, mut rounds) = (vec![0u8; 40_000], vec![0u8; 40_000]);
        assert_eq!(unpack_settled(&bytes, &mut values, &mut rounds), Some(()));
        let (mut want_v, mut want_r) = (vec![0u8; 40_000], vec![0u8; 40_000]);
        for &(i, v, r) in a.iter().chain(&b) {
            (want_v[i as usize], want_r[i as usize]) = (v, r);
        }
        assert_eq!((values, rounds), (want_v, want_r));
        assert!(pack_settled(&[Vec::new()]).is_empty());
        let (mut v, mut r) = (vec![0u8; 40_000], vec![0u8; 40_000]);
        assert_eq!(unpack_settled(&[], &mut v, &mut r), Some(()));
        assert_eq!(
            unpack_settled(&bytes[..bytes.len() - 1], &mut v, &mut r),
            None
        );
        assert_eq!(unpack_settled(&[1, 2, 3], &mut v, &mut r), None);
        // A segment too short for the last offset.
        let (mut v, mut r) = (vec![0u8; 30_000], vec![0u8; 30_000]);
        assert_eq!(unpack_settled(&bytes, &mut v, &mut r), None);
    }
}
