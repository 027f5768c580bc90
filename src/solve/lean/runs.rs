//! Sorted runs of settled positions: the lean pass's frontiers and its log of what settled
//! when.
//!
//! An entry is a [`Settled`] position (its key orders positions as their indices do) and
//! the round in which it settled. A run holds entries in increasing key order, each
//! written as a varint of `(key − previous key) << 1 | lost` followed by the round byte,
//! in chunks of [`chunks`](super::chunks). Within a round's run the round byte is the same
//! everywhere and compresses away; the threshold's merged run keeps each entry's round.

use super::chunks::{ChunkReader, ChunkWriter};
use crate::solve::Settled;
use crate::store::StoreError;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};

/// Raw bytes per chunk: small, since a merge holds one chunk of every run it reads.
const CHUNK_RAW: usize = 1 << 16;
/// Bytes of the longest encoded entry: a 10-byte varint and the round.
const ENTRY_MAX: usize = 11;
/// Runs merged at once; more are merged in several passes.
pub(crate) const MERGE_FAN_IN: usize = 64;

/// An entry of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub settled: Settled,
    pub round: u8,
}

/// Writes one run; entries must come in increasing key order.
pub(crate) struct RunWriter {
    out: ChunkWriter,
    raw: Vec<u8>,
    last_key: u64,
    entries: u64,
}

impl RunWriter {
    pub fn create(path: &Path) -> Result<RunWriter, StoreError> {
        Ok(RunWriter {
            out: ChunkWriter::create(path)?,
            raw: Vec::with_capacity(CHUNK_RAW + ENTRY_MAX),
            last_key: 0,
            entries: 0,
        })
    }

    pub fn push(&mut self, e: Entry) -> Result<(), StoreError> {
        let key = e.settled.key();
        debug_assert!(self.entries == 0 || key > self.last_key, "run out of order");
        let mut v = ((key - self.last_key) << 1) | u64::from(e.settled.lost());
        while v >= 0x80 {
            self.raw.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.raw.push(v as u8);
        self.raw.push(e.round);
        self.last_key = key;
        self.entries += 1;
        if self.raw.len() >= CHUNK_RAW {
            self.flush_chunk()?;
        }
        Ok(())
    }

    fn flush_chunk(&mut self) -> Result<(), StoreError> {
        if !self.raw.is_empty() {
            self.out.write(&self.raw)?;
            self.raw.clear();
            // Each chunk decodes on its own.
            self.last_key = 0;
        }
        Ok(())
    }

    /// Writes the last chunk and syncs; the run's size in bytes and its entries.
    pub fn finish(mut self) -> Result<(u64, u64), StoreError> {
        self.flush_chunk()?;
        Ok((self.out.finish()?, self.entries))
    }
}

/// Writes sorted `entries` (all of round `round`) as a run at `path`.
pub(crate) fn write_run(path: &Path, entries: &[Settled], round: u8) -> Result<u64, StoreError> {
    let mut w = RunWriter::create(path)?;
    for &settled in entries {
        w.push(Entry { settled, round })?;
    }
    Ok(w.finish()?.0)
}

/// Reads one run's entries in order.
pub(crate) struct RunReader {
    input: ChunkReader,
    raw: Vec<u8>,
    at: usize,
    last_key: u64,
}

impl RunReader {
    pub fn open(path: &Path) -> Result<RunReader, StoreError> {
        Ok(RunReader {
            input: ChunkReader::open(path)?,
            raw: Vec::new(),
            at: 0,
            last_key: 0,
        })
    }

    /// The next entry; None at the end of the run.
    pub fn next_entry(&mut self) -> Result<Option<Entry>, StoreError> {
        if self.at >= self.raw.len() {
            match self.input.next_chunk()? {
                Some(raw) => {
                    self.raw = raw;
                    self.at = 0;
                    self.last_key = 0;
                }
                None => return Ok(None),
            }
        }
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let Some(&b) = self.raw.get(self.at) else {
                return Err(self.damaged());
            };
            self.at += 1;
            if shift > 63 {
                return Err(self.damaged());
            }
            v |= u64::from(b & 0x7F) << shift;
            if b & 0x80 == 0 {
                break;
            }
            shift += 7;
        }
        let Some(&round) = self.raw.get(self.at) else {
            return Err(self.damaged());
        };
        self.at += 1;
        let key = self.last_key.wrapping_add(v >> 1);
        if key >= Settled::LOST {
            return Err(self.damaged());
        }
        self.last_key = key;
        Ok(Some(Entry {
            settled: Settled::from_key(key, v & 1 == 1),
            round,
        }))
    }

    fn damaged(&self) -> StoreError {
        StoreError::Corrupted {
            path: self.input.path().to_path_buf(),
            what: "a run entry does not decode".to_string(),
        }
    }
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

/// Brings `inputs` down to at most [`MERGE_FAN_IN`] files, so that a merge never holds
/// too many files open: groups of files are merged into files named after `stem`. Returns
/// the sources to merge and the files made (for the caller to remove).
pub(crate) fn reduce<'a>(
    inputs: &[Source<'a>],
    stem: &Path,
) -> Result<(Vec<Source<'a>>, Vec<PathBuf>), StoreError> {
    let (mut files, memory): (Vec<Source>, Vec<Source>) = inputs
        .iter()
        .map(copy_source)
        .partition(|s| matches!(s, Source::File(_)));
    let mut made = Vec::new();
    let mut stage = 0;
    while files.len() > MERGE_FAN_IN {
        let mut next = Vec::new();
        for group in files.chunks(MERGE_FAN_IN) {
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
