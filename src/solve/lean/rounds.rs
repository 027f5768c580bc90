//! The rounds of a threshold: round 0 from the exits file, each later round from the
//! previous one's runs by un-sowing to the parents, and the buffer that keeps a round's
//! settled positions in memory or spills them as sorted runs.
use super::exchange::{self, Exchange};
use super::nibbles::{Nibbles, Update};
use super::runs::{self, Entry, RunReader};
use super::{
    damaged_run, exits, number_of_bits, LeanObserver, Pass, Run, RunFile, ENTRY_BYTES,
    FRONTIER_BATCH, SPILL_SLACK,
};
use crate::board::swap_rows;
use crate::index;
use crate::solve::settled::{self, Settled};
use crate::solve::{unsow_bits, PREFETCH_BATCH};
use crate::store::{StoreError, DISTANCE_SATURATED};
use rayon::prelude::*;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

impl Pass<'_> {
    /// Round 0 of threshold `t`: the positions its exits file lists, a best exit of `t`
    /// settling `W` and one of `−t` marking a low exit (and settling `L` when no in-layer
    /// move is left).
    pub(super) fn round_zero(
        &self,
        t: u32,
        nib: &Nibbles,
        held: &AtomicU64,
    ) -> Result<Vec<Run>, StoreError> {
        let n = self.n;
        let spill = Spiller::new(self, t, 0, held);
        let path = self.dir.join(exits::exits_file(t));
        let mut reader = RunReader::keys_only(&path, runs::GROUP)?;
        let mut batch: Vec<Entry> = Vec::with_capacity(FRONTIER_BATCH);
        loop {
            reader.take(&mut batch, FRONTIER_BATCH)?;
            if batch.is_empty() {
                break;
            }
            let found: Vec<Vec<Settled>> = batch
                .par_chunks(4096)
                .map(|chunk| -> Result<Vec<Settled>, StoreError> {
                    let mut found = Vec::new();
                    let mut boards = index::Cursor::new(n);
                    for e in chunk {
                        let q = e.settled.key();
                        if !(self.lo..self.hi).contains(&q) {
                            return Err(damaged_run(&path));
                        }
                        let local = q - self.lo;
                        let lost = e.settled.lost();
                        let update = if lost {
                            nib.mark_low_exit(local)
                        } else {
                            nib.settle(local)
                        };
                        if update == Update::Settled {
                            // Entries are sorted, so most boards are a step or a few from the last.
                            let key = settled::key_of_bits(swap_rows(boards.bits_at(q)));
                            found.push(Settled::from_key(key, lost));
                        }
                    }
                    Ok(found)
                })
                .collect::<Result<_, _>>()?;
            spill.push_all(found, self.observer)?;
            batch.clear();
        }
        spill.finish()
    }

    /// Round `round` of threshold `t`: the parents that the positions of `frontier`
    /// decide. Parents in another rank's share are sent to it, a batch of the frontier at
    /// a time (`batches` in all, the same on every rank), and this rank applies what the
    /// others send.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn propagate(
        &self,
        t: u32,
        round: u32,
        frontier: &[Run],
        batches: u64,
        nib: &Nibbles,
        held: &AtomicU64,
        ex: &dyn Exchange,
    ) -> Result<Vec<Run>, StoreError> {
        let spill = Spiller::new(self, t, round, held);
        let ranks = ex.ranks();
        let mut feed = Feed {
            dir: &self.dir,
            runs: frontier,
            next: 0,
            at: 0,
            reader: None,
        };
        let mut batch: Vec<Settled> = Vec::with_capacity(FRONTIER_BATCH);
        for _ in 0..batches {
            feed.fill(&mut batch, FRONTIER_BATCH)?;
            let results: Vec<(Vec<Settled>, Vec<Vec<u64>>)> = batch
                .par_chunks(4096)
                .map(|chunk| self.parents(chunk, nib, ranks))
                .collect();
            let mut outgoing = vec![Vec::new(); ranks];
            for (found, out) in results {
                self.observer.advance(found.len() as u64);
                spill.push(found)?;
                for (to, o) in outgoing.iter_mut().zip(out) {
                    to.extend(o);
                }
            }
            if ranks > 1 {
                let incoming = ex.all_to_all(&outgoing);
                let found: Vec<Vec<Settled>> = incoming
                    .par_chunks(4096)
                    .map(|c| self.apply_sent(c, nib))
                    .collect::<Result<_, _>>()?;
                spill.push_all(found, self.observer)?;
            }
            batch.clear();
        }
        spill.finish()
    }

    /// Writes the rounds held in memory to files (for a checkpoint), and lists every
    /// round's files.
    pub(super) fn to_files(
        &self,
        t: u32,
        rounds: &mut [Vec<Run>],
        held: &AtomicU64,
    ) -> Result<Vec<Vec<RunFile>>, StoreError> {
        let mut listed = Vec::with_capacity(rounds.len());
        for (r, runs) in rounds.iter_mut().enumerate() {
            let mut files = Vec::new();
            for (k, run) in runs.iter_mut().enumerate() {
                if let Run::Memory(entries) = run {
                    let file = format!("{}-m{k:03}.run", round_prefix(t, r as u32));
                    let round = r.min(usize::from(DISTANCE_SATURATED)) as u8;
                    runs::write_run(&self.dir.join(&file), entries, round)?;
                    held.fetch_sub(entries.len() as u64, Relaxed);
                    *run = Run::File(RunFile {
                        file,
                        entries: entries.len() as u64,
                    });
                }
                if let Run::File(f) = run {
                    files.push(f.clone());
                }
            }
            listed.push(files);
        }
        Ok(listed)
    }

    /// The parents that `children` settle in this rank's share, and the updates for the
    /// other ranks' shares (each the parent's number in the pass's numbering, times two,
    /// plus one when the child lost: the numbers of a share are denser than its keys, so
    /// a sorted batch of them packs smaller on the wire). A batch of parents' numbers is gathered and their nibbles
    /// prefetched before any is updated, as in the in-memory pass.
    pub(super) fn parents(
        &self,
        children: &[Settled],
        nib: &Nibbles,
        ranks: usize,
    ) -> (Vec<Settled>, Vec<Vec<u64>>) {
        let mut found = Vec::new();
        let mut out = vec![Vec::new(); ranks];
        let mut batch: Vec<(u64, u128, bool)> = Vec::with_capacity(PREFETCH_BATCH + 64);
        for &child in children {
            let lost = child.lost();
            unsow_bits(self.rules, settled::bits_of(child.key()), |parent| {
                let q = number_of_bits(parent);
                if (self.lo..self.hi).contains(&q) {
                    nib.prefetch(q - self.lo);
                    batch.push((q - self.lo, parent, lost));
                } else {
                    let to = exchange::owner(&self.bounds, q);
                    out[to].push(q << 1 | u64::from(lost));
                }
            });
            if batch.len() >= PREFETCH_BATCH {
                apply_updates(&mut batch, nib, &mut found);
            }
        }
        apply_updates(&mut batch, nib, &mut found);
        (found, out)
    }

    /// Applies updates another rank sent (see [`Pass::parents`]), each rank's sorted (their
    /// boards found a step from the last, mostly).
    pub(super) fn apply_sent(
        &self,
        sent: &[u64],
        nib: &Nibbles,
    ) -> Result<Vec<Settled>, StoreError> {
        let mut found = Vec::new();
        let mut batch: Vec<(u64, u128, bool)> = Vec::with_capacity(PREFETCH_BATCH + 64);
        let mut boards = index::Cursor::new(self.n);
        for &update in sent {
            let (q, lost) = (update >> 1, update & 1 != 0);
            if !(self.lo..self.hi).contains(&q) {
                return Err(StoreError::Corrupted {
                    path: self.dir.clone(),
                    what: "another rank sent a position outside this rank's share".into(),
                });
            }
            let bits = swap_rows(boards.bits_at(q));
            nib.prefetch(q - self.lo);
            batch.push((q - self.lo, bits, lost));
            if batch.len() >= PREFETCH_BATCH {
                apply_updates(&mut batch, nib, &mut found);
            }
        }
        apply_updates(&mut batch, nib, &mut found);
        Ok(found)
    }
}

/// Applies a batch of (nibble, packed parent, child lost) updates, emptying it: a child in `L`
/// puts its parent in `W`; a child in `W` counts its parent down, and the last way out
/// with a low exit puts it in `L`.
pub(super) fn apply_updates(
    batch: &mut Vec<(u64, u128, bool)>,
    nib: &Nibbles,
    found: &mut Vec<Settled>,
) {
    for &(i, parent, child_lost) in batch.iter() {
        let (update, lost) = if child_lost {
            (nib.settle(i), false)
        } else {
            (nib.count_down(i), true)
        };
        if update == Update::Settled {
            found.push(Settled::from_key(settled::key_of_bits(parent), lost));
        }
    }
    batch.clear();
}

/// Reads a round's runs, a batch at a time.
pub(super) struct Feed<'a> {
    dir: &'a Path,
    runs: &'a [Run],
    /// The run being read, and where in it (for a run in memory).
    next: usize,
    at: usize,
    reader: Option<RunReader>,
}

impl Feed<'_> {
    /// Appends up to `max − batch.len()` next entries to `batch`.
    pub(super) fn fill(&mut self, batch: &mut Vec<Settled>, max: usize) -> Result<(), StoreError> {
        while batch.len() < max && self.next < self.runs.len() {
            match &self.runs[self.next] {
                Run::Memory(entries) => {
                    let take = (max - batch.len()).min(entries.len() - self.at);
                    batch.extend_from_slice(&entries[self.at..self.at + take]);
                    self.at += take;
                    if self.at == entries.len() {
                        self.next += 1;
                        self.at = 0;
                    }
                }
                Run::File(f) => {
                    if self.reader.is_none() {
                        let path = self.dir.join(&f.file);
                        self.reader = Some(RunReader::ahead(&path, runs::GROUP)?);
                    }
                    let reader = self.reader.as_mut().expect("just opened");
                    while batch.len() < max {
                        match reader.next_entry()? {
                            Some(e) => batch.push(e.settled),
                            None => {
                                self.reader = None;
                                self.next += 1;
                                break;
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// The order of a run's entries: by key, and a position's `W` node before its `L` node
/// (the two nodes of a reachability game share a key; in the values keys are unique).
#[inline]
fn order(s: Settled) -> u64 {
    s.0.rotate_left(1)
}

/// The prefix of the files of round `round` of threshold `t`.
pub(super) fn round_prefix(t: u32, round: u32) -> String {
    format!("t{t:02}-r{round:04}")
}

/// Collects the positions a round settles, sorted into runs: kept in memory while the
/// threshold's runs fit in the buffer, written to a file when they do not.
pub(super) struct Spiller<'a> {
    dir: &'a Path,
    prefix: String,
    round: u8,
    /// Entries the buffer holds: the threshold's runs kept in memory and this round's
    /// entries not yet sorted.
    budget: u64,
    /// Entries of the threshold's runs kept in memory.
    held: &'a AtomicU64,
    buffer: Mutex<Vec<Settled>>,
    runs: Mutex<Vec<Run>>,
    next_file: AtomicU64,
}

impl<'a> Spiller<'a> {
    pub(super) fn new(pass: &'a Pass, t: u32, round: u32, held: &'a AtomicU64) -> Spiller<'a> {
        Spiller {
            dir: &pass.dir,
            prefix: round_prefix(t, round),
            round: round.min(u32::from(DISTANCE_SATURATED)) as u8,
            budget: (pass.plan.buffer_bytes / ENTRY_BYTES).max(2),
            held,
            buffer: Mutex::new(Vec::new()),
            runs: Mutex::new(Vec::new()),
            next_file: AtomicU64::new(0),
        }
    }

    pub(super) fn push(&self, mut found: Vec<Settled>) -> Result<(), StoreError> {
        let full = {
            let mut buffer = self.buffer.lock().unwrap_or_else(|e| e.into_inner());
            if buffer.capacity() == 0 {
                // Its quarter of the budget and room for one more batch's entries, once:
                // grown by doubling, the buffer would reach twice its budget.
                buffer.reserve((self.budget / 4) as usize + SPILL_SLACK);
            }
            buffer.append(&mut found);
            // A quarter of the budget: the next entries fill another quarter while a run
            // is written, and the runs kept in memory take the other half.
            if (buffer.len() as u64) < (self.budget / 4).max(1) {
                return Ok(());
            }
            std::mem::take(&mut *buffer)
        };
        self.write(full)
    }

    /// Pushes each task's settled positions, counting them as progress.
    pub(super) fn push_all(
        &self,
        found: Vec<Vec<Settled>>,
        observer: &dyn LeanObserver,
    ) -> Result<(), StoreError> {
        for f in found {
            observer.advance(f.len() as u64);
            self.push(f)?;
        }
        Ok(())
    }

    pub(super) fn write(&self, mut entries: Vec<Settled>) -> Result<(), StoreError> {
        if entries.is_empty() {
            return Ok(());
        }
        entries.par_sort_unstable_by_key(|s| order(*s));
        let k = self.next_file.fetch_add(1, Relaxed);
        let file = format!("{}-{k:05}.run", self.prefix);
        runs::write_run(&self.dir.join(&file), &entries, self.round)?;
        let run = Run::File(RunFile {
            file,
            entries: entries.len() as u64,
        });
        self.runs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(run);
        Ok(())
    }

    pub(super) fn finish(self) -> Result<Vec<Run>, StoreError> {
        let mut rest = std::mem::take(&mut *self.buffer.lock().unwrap_or_else(|e| e.into_inner()));
        let len = rest.len() as u64;
        if len > 0 && self.held.load(Relaxed) + len <= self.budget / 2 {
            rest.par_sort_unstable_by_key(|s| order(*s));
            // Kept for the rest of the threshold: only its entries, not the reserve.
            rest.shrink_to_fit();
            self.held.fetch_add(len, Relaxed);
            self.runs
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(Run::Memory(rest));
        } else {
            self.write(rest)?;
        }
        Ok(self.runs.into_inner().unwrap_or_else(|e| e.into_inner()))
    }
}
