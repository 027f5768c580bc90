//! Sorted runs of settled positions: the lean pass's frontiers and its log of what settled
//! when.
//!
//! An entry is a [`Settled`] position (its key orders positions as their indices do) and
//! the round in which it settled. A run holds entries in increasing key order, each
//! written as a varint of `(key − previous key) << 1 | lost` followed by the round byte,
//! in chunks of [`chunks`](super::chunks) of [`CHUNK_ENTRIES`] entries. Within a round's
//! run the round byte is the same everywhere and compresses away; the threshold's merged
//! run keeps each entry's round.
//!
//! Each chunk decodes on its own (its first key is coded from 0), so a writer encodes
//! and compresses a group of chunks in parallel, and a reader that reads ahead decodes a
//! group of chunks in parallel: the pass's serial steps (a round's run written while the
//! other threads wait, a frontier read back) then use every thread.

use super::chunks::{ChunkReader, ChunkWriter, Packed};
use crate::solve::Settled;
use crate::store::{varint, StoreError};
use rayon::prelude::*;
use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};

/// Entries per chunk: small, since a merge holds one decoded chunk of every run it reads
/// (64 KiB of entries, 44 KiB raw at most).
const CHUNK_ENTRIES: usize = 1 << 12;
/// Bytes of the longest encoded entry: a 10-byte varint and the round.
const ENTRY_MAX: usize = 11;
/// Runs merged at once, at least and at most; more are merged in several passes.
const MERGE_FAN_IN: (usize, usize) = (64, 512);
/// Memory a run being merged holds: a decoded chunk, its packed and raw bytes, and the
/// file's read buffer.
const MERGE_BYTES_PER_RUN: u64 = 96 << 10;

/// How many runs a merge of a layer of `positions` reads at once: one for every 2^21
/// positions (0.05 bytes a position), within [`MERGE_FAN_IN`]. Each file merged in
/// a stage before is read and written once more, so a big layer, whose thresholds have
/// the most rounds and spills, reads them all at once.
pub(crate) fn merge_fan_in(positions: u64) -> usize {
    ((positions >> 21) as usize).clamp(MERGE_FAN_IN.0, MERGE_FAN_IN.1)
}

/// The memory a merge of `fan_in` runs holds.
pub(crate) fn merge_bytes(fan_in: usize) -> u64 {
    fan_in as u64 * MERGE_BYTES_PER_RUN
}

/// Chunks a writer or a reader of a single run handles together, in parallel.
pub(crate) const GROUP: usize = 16;

/// An entry of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub settled: Settled,
    pub round: u8,
}

/// One chunk's raw bytes: `entries` (increasing keys), the first key coded from 0, each
/// with its round unless the run is `keys_only` (the exits files: no round to keep).
fn encode_chunk(entries: &[Entry], keys_only: bool) -> Vec<u8> {
    let mut raw = Vec::with_capacity(entries.len() * 4 + ENTRY_MAX);
    let mut last = 0u64;
    for e in entries {
        let key = e.settled.key();
        varint::push(&mut raw, ((key - last) << 1) | u64::from(e.settled.lost()));
        if !keys_only {
            raw.push(e.round);
        }
        last = key;
    }
    raw
}

/// The entries of one chunk's raw bytes (round 0 if `keys_only`); None if they do not
/// decode.
fn decode_chunk(raw: &[u8], keys_only: bool) -> Option<Vec<Entry>> {
    let mut out = Vec::with_capacity(raw.len() / 2);
    let mut at = 0usize;
    let mut last = 0u64;
    while at < raw.len() {
        let v = varint::read(raw, &mut at)?;
        let round = if keys_only {
            0
        } else {
            at += 1;
            *raw.get(at - 1)?
        };
        let key = last.wrapping_add(v >> 1);
        if key >= Settled::LOST {
            return None;
        }
        last = key;
        out.push(Entry {
            settled: Settled::from_key(key, v & 1 == 1),
            round,
        });
    }
    Some(out)
}

/// Writes one run; entries must come in increasing key order.
pub(crate) struct RunWriter {
    out: ChunkWriter,
    pending: Vec<Entry>,
    /// Chunks encoded together once their entries are in.
    group: usize,
    keys_only: bool,
    entries: u64,
    /// The last key pushed (for the order check of debug builds).
    last: Option<u64>,
}

impl RunWriter {
    /// A writer that encodes one chunk at a time (for many writers open at once).
    pub fn create(path: &Path) -> Result<RunWriter, StoreError> {
        RunWriter::grouped(path, 1)
    }

    /// A writer of keys and verdicts without rounds, one chunk at a time (read back by
    /// [`RunReader::keys_only`]).
    pub fn keys_only(path: &Path) -> Result<RunWriter, StoreError> {
        let mut w = RunWriter::grouped(path, 1)?;
        w.keys_only = true;
        Ok(w)
    }

    /// A writer that encodes `group` chunks at a time, in parallel.
    pub fn grouped(path: &Path, group: usize) -> Result<RunWriter, StoreError> {
        Ok(RunWriter {
            out: ChunkWriter::create(path)?,
            pending: Vec::with_capacity(CHUNK_ENTRIES * group.max(1)),
            group: group.max(1),
            keys_only: false,
            entries: 0,
            last: None,
        })
    }

    #[inline]
    pub fn push(&mut self, e: Entry) -> Result<(), StoreError> {
        // A position's two nodes (a reachability game's `W` and `L`) may share a key.
        debug_assert!(
            self.last.is_none_or(|l| l <= e.settled.key()),
            "run out of order"
        );
        self.last = Some(e.settled.key());
        self.pending.push(e);
        if self.pending.len() >= CHUNK_ENTRIES * self.group {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), StoreError> {
        let keys_only = self.keys_only;
        self.out
            .write_parallel(&self.pending, CHUNK_ENTRIES, |part| {
                Cow::Owned(encode_chunk(part, keys_only))
            })?;
        self.entries += self.pending.len() as u64;
        self.pending.clear();
        Ok(())
    }

    /// Writes the last chunks and syncs; the run's size in bytes and its entries.
    pub fn finish(mut self) -> Result<(u64, u64), StoreError> {
        self.flush()?;
        Ok((self.out.finish()?, self.entries))
    }
}

/// Writes sorted `entries` (all of round `round`) as a run at `path`, its chunks encoded
/// in parallel.
pub(crate) fn write_run(path: &Path, entries: &[Settled], round: u8) -> Result<u64, StoreError> {
    let mut out = ChunkWriter::create(path)?;
    out.write_parallel(entries, CHUNK_ENTRIES, |part| {
        let part: Vec<Entry> = part
            .iter()
            .map(|&settled| Entry { settled, round })
            .collect();
        Cow::Owned(encode_chunk(&part, false))
    })?;
    out.finish()
}

/// Reads one run's entries in order, `ahead` chunks at a time (decoded in parallel).
pub(crate) struct RunReader {
    input: ChunkReader,
    ahead: usize,
    keys_only: bool,
    decoded: Vec<Entry>,
    at: usize,
}

impl RunReader {
    /// A reader that decodes one chunk at a time (for many readers open at once).
    pub fn open(path: &Path) -> Result<RunReader, StoreError> {
        RunReader::ahead(path, 1)
    }

    /// A reader that decodes `ahead` chunks at a time, in parallel.
    pub fn ahead(path: &Path, ahead: usize) -> Result<RunReader, StoreError> {
        Ok(RunReader {
            input: ChunkReader::open(path)?,
            ahead: ahead.max(1),
            keys_only: false,
            decoded: Vec::new(),
            at: 0,
        })
    }

    /// A reader of a run written by [`RunWriter::keys_only`] (every round 0).
    pub fn keys_only(path: &Path, ahead: usize) -> Result<RunReader, StoreError> {
        let mut r = RunReader::ahead(path, ahead)?;
        r.keys_only = true;
        Ok(r)
    }

    /// The next entry; None at the end of the run.
    #[inline]
    pub fn next_entry(&mut self) -> Result<Option<Entry>, StoreError> {
        if self.at == self.decoded.len() && !self.refill()? {
            return Ok(None);
        }
        let e = self.decoded[self.at];
        self.at += 1;
        Ok(Some(e))
    }

    /// Appends up to `max` next entries to `out`; false at the end of the run.
    pub fn take(&mut self, out: &mut Vec<Entry>, max: usize) -> Result<bool, StoreError> {
        let mut left = max;
        while left > 0 {
            if self.at == self.decoded.len() && !self.refill()? {
                return Ok(false);
            }
            let take = left.min(self.decoded.len() - self.at);
            out.extend_from_slice(&self.decoded[self.at..self.at + take]);
            self.at += take;
            left -= take;
        }
        Ok(true)
    }

    /// Decodes the next chunks; false at the end of the run.
    fn refill(&mut self) -> Result<bool, StoreError> {
        let mut packed: Vec<Packed> = Vec::with_capacity(self.ahead);
        while packed.len() < self.ahead {
            match self.input.next_packed()? {
                Some(p) => packed.push(p),
                None => break,
            }
        }
        let (path, keys_only) = (self.input.path(), self.keys_only);
        let parts: Vec<Vec<Entry>> = if packed.len() == 1 {
            vec![decode_packed(&packed[0], path, keys_only)?]
        } else {
            packed
                .par_iter()
                .map(|p| decode_packed(p, path, keys_only))
                .collect::<Result<_, _>>()?
        };
        self.decoded.clear();
        self.at = 0;
        for p in parts {
            self.decoded.extend_from_slice(&p);
        }
        Ok(!self.decoded.is_empty())
    }
}

/// A chunk's entries; a chunk that does not decode, or holds none (writers never write
/// one), is damage.
fn decode_packed(packed: &Packed, path: &Path, keys_only: bool) -> Result<Vec<Entry>, StoreError> {
    let entries = decode_chunk(&packed.unpack(path)?, keys_only).filter(|e| !e.is_empty());
    entries.ok_or_else(|| StoreError::Corrupted {
        path: path.to_path_buf(),
        what: "a run entry does not decode".to_string(),
    })
}

/// Where a merge reads a run from.
pub(crate) enum Source<'a> {
    /// A run file.
    File(PathBuf),
    /// Sorted entries held in memory, all of one round.
    Memory(&'a [Settled], u8),
}

/// A run being read.
pub(crate) enum Cursor<'a> {
    File(RunReader),
    Memory {
        entries: &'a [Settled],
        at: usize,
        round: u8,
    },
}

impl Cursor<'_> {
    pub fn open<'a>(source: &Source<'a>) -> Result<Cursor<'a>, StoreError> {
        Ok(match source {
            Source::File(p) => Cursor::File(RunReader::open(p)?),
            &Source::Memory(entries, round) => Cursor::Memory {
                entries,
                at: 0,
                round,
            },
        })
    }

    #[inline]
    pub fn next_entry(&mut self) -> Result<Option<Entry>, StoreError> {
        match self {
            Cursor::File(r) => r.next_entry(),
            Cursor::Memory { entries, at, round } => {
                let e = entries.get(*at).map(|&settled| Entry {
                    settled,
                    round: *round,
                });
                *at += 1;
                Ok(e)
            }
        }
    }
}

/// A cursor that can look at its next entry: a merge by ranges takes the entries below
/// a bound and leaves the rest for the next range.
pub(crate) struct Peek<'a> {
    cursor: Cursor<'a>,
    head: Option<Entry>,
}

impl<'a> Peek<'a> {
    pub fn open(source: &Source<'a>) -> Result<Peek<'a>, StoreError> {
        let mut cursor = Cursor::open(source)?;
        let head = cursor.next_entry()?;
        Ok(Peek { cursor, head })
    }

    /// Calls `f` with every next entry whose key is below `bound`.
    #[inline]
    pub fn take_below(
        &mut self,
        bound: u64,
        mut f: impl FnMut(Entry) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        while let Some(e) = self.head {
            if e.settled.key() >= bound {
                break;
            }
            f(e)?;
            self.head = self.cursor.next_entry()?;
        }
        Ok(())
    }

    /// Whether every entry was taken.
    pub fn is_done(&self) -> bool {
        self.head.is_none()
    }
}

/// Merges the runs of `inputs` (disjoint keys) into increasing key order, calling `emit`
/// with each entry and the number of the input it came from.
pub(crate) fn merge_tagged(
    inputs: &[Source],
    mut emit: impl FnMut(usize, Entry) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let mut cursors = inputs
        .iter()
        .map(Cursor::open)
        .collect::<Result<Vec<_>, _>>()?;
    let mut heads: Vec<Option<Entry>> = Vec::with_capacity(cursors.len());
    let mut heap = BinaryHeap::with_capacity(cursors.len());
    for (i, c) in cursors.iter_mut().enumerate() {
        let head = c.next_entry()?;
        if let Some(e) = head {
            heap.push(Reverse((e.settled.key(), i)));
        }
        heads.push(head);
    }
    while let Some(Reverse((_, i))) = heap.pop() {
        let e = heads[i].take().expect("a head for every heap entry");
        emit(i, e)?;
        if let Some(next) = cursors[i].next_entry()? {
            heap.push(Reverse((next.settled.key(), i)));
            heads[i] = Some(next);
        }
    }
    Ok(())
}

/// Brings `inputs` down to at most `fan_in` files, so that a merge never holds
/// too many files open: groups of files are merged into files named after `stem`. Returns
/// the sources to merge and the files made (for the caller to remove).
pub(crate) fn reduce<'a>(
    inputs: &[Source<'a>],
    stem: &Path,
    fan_in: usize,
) -> Result<(Vec<Source<'a>>, Vec<PathBuf>), StoreError> {
    let (mut files, memory): (Vec<Source>, Vec<Source>) = inputs
        .iter()
        .map(copy_source)
        .partition(|s| matches!(s, Source::File(_)));
    let mut made = Vec::new();
    let mut stage = 0;
    let fan_in = fan_in.max(2);
    while files.len() > fan_in {
        let mut next = Vec::new();
        for group in files.chunks(fan_in) {
            let path = stem.with_extension(format!("stage{stage}-{}", next.len()));
            merge_to_file(group, &path)?;
            made.push(path.clone());
            next.push(Source::File(path));
        }
        files = next;
        stage += 1;
    }
    files.extend(memory);
    Ok((files, made))
}

fn copy_source<'a>(s: &Source<'a>) -> Source<'a> {
    match s {
        Source::File(p) => Source::File(p.clone()),
        &Source::Memory(e, r) => Source::Memory(e, r),
    }
}

fn merge_to_file(inputs: &[Source], out: &Path) -> Result<u64, StoreError> {
    let mut w = RunWriter::create(out)?;
    merge_tagged(inputs, |_, e| w.push(e))?;
    Ok(w.finish()?.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_of_keys_only_and_grouped_runs_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        // More than a group of chunks, keys with gaps of one to many bytes.
        let entries: Vec<Entry> = (0..(GROUP * CHUNK_ENTRIES + 999) as u64)
            .map(|i| Entry {
                settled: Settled::from_key(i * i + 3 * i, i % 3 == 0),
                round: (i % 200) as u8,
            })
            .collect();
        for keys_only in [false, true] {
            let path = dir.path().join(format!("run-{keys_only}"));
            let mut w = if keys_only {
                RunWriter::keys_only(&path).unwrap()
            } else {
                RunWriter::grouped(&path, GROUP).unwrap()
            };
            for &e in &entries {
                w.push(e).unwrap();
            }
            assert_eq!(w.finish().unwrap().1, entries.len() as u64);
            let mut r = if keys_only {
                RunReader::keys_only(&path, 3).unwrap()
            } else {
                RunReader::ahead(&path, GROUP).unwrap()
            };
            let mut got = Vec::new();
            while r.take(&mut got, 1000).unwrap() {}
            let want: Vec<Entry> = entries
                .iter()
                .map(|&e| Entry {
                    round: if keys_only { 0 } else { e.round },
                    ..e
                })
                .collect();
            assert_eq!(got, want, "keys only: {keys_only}");
        }
    }

    #[test]
    fn runs_round_trip_and_merge_in_key_order() {
        let dir = tempfile::tempdir().unwrap();
        let keys: Vec<u64> = (1..5000u64).map(|k| k * 7919 % 100_003 + 1).collect();
        let mut parts: Vec<Vec<Settled>> = vec![Vec::new(); 3];
        for (i, &k) in keys.iter().enumerate() {
            parts[i % 3].push(Settled::from_key(k << 4, i % 5 == 0));
        }
        let mut paths = Vec::new();
        for (r, p) in parts.iter_mut().enumerate() {
            p.sort_unstable_by_key(|s| s.key());
            let path = dir.path().join(format!("r{r}"));
            write_run(&path, p, r as u8).unwrap();
            paths.push(path);
        }
        // Two from files, one from memory.
        let sources = [
            Source::File(paths[0].clone()),
            Source::File(paths[1].clone()),
            Source::Memory(&parts[2], 2),
        ];
        let out = dir.path().join("merged");
        merge_to_file(&sources, &out).unwrap();
        let mut r = RunReader::open(&out).unwrap();
        let mut got = Vec::new();
        while let Some(e) = r.next_entry().unwrap() {
            got.push(e);
        }
        assert_eq!(got.len(), keys.len());
        assert!(got
            .windows(2)
            .all(|w| w[0].settled.key() < w[1].settled.key()));
        for e in &got {
            let r = e.round as usize;
            assert!(parts[r].contains(&e.settled));
        }
    }
}
