//! Values with don't-cares ([`Codec::DontCares`]): what such a file keeps, and how a probe
//! restores what it dropped.
//!
//! Where a capture among a position's moves gives its value, the file may keep any value up
//! to it (the one kept before it, where not larger: it codes cheapest). The true value is
//! then `max(stored, best capture)`, a capture being worth `captured − value(child)` with
//! the child in a lower layer. Every stored value is at most the true one, so
//! `captured − stored(child)` bounds a capture from above: a child whose bound cannot beat
//! the position's stored value needs no restoring itself. That keeps a probe to about two
//! lookups (docs/measurements.md, "Values a third smaller").

use super::{Database, ProbeError};
use crate::board::{from_bits, to_bits, Board, MAX_SEEDS, ROW};
use crate::index;
use crate::rules::{captures_nothing, Rules};
use crate::store::{self, Codec, LayerFile, LayerSummary, StoreError, WriteOptions, WrittenLayer};
use rayon::prelude::*;
use std::sync::Arc;

/// Positions of a layer restored or coded at once: their captures' children are looked up
/// in one batch.
const CHUNK: u64 = 1 << 22;

/// A lookup of a batch ([`Database::resolve`]) waiting for its layer: the board, its
/// number in the batch (the batch's own boards first, then the captures' children as they
/// are asked for), and the stored value below which it must be restored (`i8::MAX` for the
/// batch's own boards): the stored value `s` of a child that a capture of `c` seeds reaches
/// from a position stored as `p` can only raise it if `c − s > p`.
struct Asked {
    board: Board,
    id: usize,
    restore_below: i8,
}

/// A capture among a position's moves: the position's place in its batch, the seeds it
/// takes, and the child.
struct Capture {
    at: usize,
    captured: i8,
    child: Board,
}

/// The captures of `boards[at]` for every `at` that `wanted` takes, in parallel (from the
/// packed turn: no list of moves is made for a position).
fn captures_of(
    rules: Rules,
    boards: &[Board],
    wanted: impl Fn(usize) -> bool + Sync,
) -> Vec<Capture> {
    boards
        .par_iter()
        .enumerate()
        .filter(|&(at, _)| wanted(at))
        .map(|(at, board)| (at, to_bits(board)))
        .filter(|&(_, bits)| !captures_nothing(bits))
        .flat_map_iter(|(at, bits)| {
            let turn = rules.packed_turn(bits);
            let goes_on = turn.over.is_none();
            (0..ROW)
                .filter(move |&pit| {
                    goes_on && turn.legal & (1 << pit) != 0 && turn.captured[pit] > 0
                })
                .map(move |pit| Capture {
                    at,
                    captured: turn.captured[pit] as i8,
                    child: from_bits(turn.children[pit]),
                })
        })
        .collect()
}

/// The best capture of each of the `len` positions of layer `n` from index `start` (None
/// where no move captures), the children's true values from `lookup`, which answers a
/// batch of boards in their order.
fn best_captures<E>(
    rules: Rules,
    n: u32,
    start: u64,
    len: usize,
    lookup: &mut impl FnMut(&[Board]) -> Result<Vec<i8>, E>,
) -> Result<Vec<Option<i8>>, E> {
    const PART: u64 = 1 << 16;
    let end = start + len as u64;
    let boards: Vec<Board> = (start..end)
        .step_by(PART as usize)
        .collect::<Vec<_>>()
        .into_par_iter()
        .flat_map_iter(|from| {
            index::walk_bits(n, from, (from + PART).min(end)).map(|(_, b)| from_bits(b))
        })
        .collect();
    let captures = captures_of(rules, &boards, |_| true);
    let children: Vec<Board> = captures.iter().map(|c| c.child).collect();
    let mut best: Vec<Option<i8>> = vec![None; len];
    for (c, v) in captures.iter().zip(lookup(&children)?) {
        let worth = c.captured - v;
        best[c.at] = Some(best[c.at].map_or(worth, |b| b.max(worth)));
    }
    Ok(best)
}

/// Restores a whole layer `n` in place: `stored` (every position, in index order) becomes
/// the true values, the captures' children looked up through `lookup` (true values).
pub(crate) fn restore_layer<E>(
    rules: Rules,
    n: u32,
    stored: &mut [i8],
    mut lookup: impl FnMut(&[Board]) -> Result<Vec<i8>, E>,
) -> Result<(), E> {
    for (k, chunk) in stored.chunks_mut(CHUNK as usize).enumerate() {
        let best = best_captures(rules, n, k as u64 * CHUNK, chunk.len(), &mut lookup)?;
        chunk.par_iter_mut().zip(best).for_each(|(s, b)| {
            if let Some(b) = b {
                *s = (*s).max(b);
            }
        });
    }
    Ok(())
}

/// The values of `boards` from whole layers held in memory (`layers[n]`: every position
/// of layer `n`, true values), for [`restore_layer`] where the layers below are all held.
pub(crate) fn held_values(layers: &[Vec<i8>], boards: &[Board]) -> Vec<i8> {
    boards
        .iter()
        .map(|b| layers[b.seeds() as usize][index::rank(b) as usize])
        .collect()
}

/// Checks the restored values of `file` (a layer with don't-cares) against the counts in
/// its header, which its writer took from the true values: a stored value above the true
/// one, or a layer below that changed, shows there.
pub(crate) fn check_restored(file: &LayerFile, values: &[i8]) -> Result<(), StoreError> {
    if LayerSummary::from_values(file.seeds(), values) == *file.summary() {
        return Ok(());
    }
    Err(StoreError::Corrupted {
        path: file.path().to_path_buf(),
        what: "its restored values disagree with the counts in its header".into(),
    })
}

/// What a file with don't-cares keeps for layer `n`'s true `values`, block by block
/// (`block_size` positions, the file's): where the best capture gives the value, the value
/// kept just before it in the block if not larger, else the value itself.
pub(crate) fn dont_care_values<E>(
    rules: Rules,
    n: u32,
    values: &[i8],
    block_size: u32,
    mut lookup: impl FnMut(&[Board]) -> Result<Vec<i8>, E>,
) -> Result<Vec<i8>, E> {
    let block = block_size as usize;
    let chunk = (CHUNK as usize / block).max(1) * block;
    let mut stored = values.to_vec();
    for (k, (out, true_values)) in stored
        .chunks_mut(chunk)
        .zip(values.chunks(chunk))
        .enumerate()
    {
        let best = best_captures(rules, n, (k * chunk) as u64, out.len(), &mut lookup)?;
        out.par_chunks_mut(block)
            .zip(true_values.par_chunks(block))
            .zip(best.par_chunks(block))
            .for_each(|((out, true_values), best)| {
                let mut before: Option<i8> = None;
                for ((kept, &value), &capture) in out.iter_mut().zip(true_values).zip(best) {
                    if capture == Some(value) {
                        *kept = before.map_or(value, |b| b.min(value));
                    }
                    before = Some(*kept);
                }
            });
    }
    Ok(stored)
}

/// Which layers a batch must restore: those whose file keeps don't-cares and that are not
/// held in memory (held layers are true values), as seen once for the whole batch.
pub(super) type Held = Vec<Option<Arc<Vec<i8>>>>;

impl Database {
    /// The true value of `board`, stored as `stored` in a layer with don't-cares: the
    /// larger of it and the best capture, each capture's child restored in turn where its
    /// bound could beat `stored`.
    pub(super) fn restored(&self, board: &Board, stored: i8) -> Result<i8, ProbeError> {
        let mut best = stored;
        for m in self
            .rules()
            .legal_moves(board)
            .iter()
            .filter(|m| m.captured > 0)
        {
            let file = self.layer_or_missing(m.child.seeds())?;
            let kept = self.cached_byte(file, &m.child)? as i8;
            let captured = m.captured as i8;
            let child = if file.dont_cares() && captured - kept > stored {
                self.restored(&m.child, kept)?
            } else {
                kept
            };
            best = best.max(captured - child);
        }
        Ok(best)
    }

    /// Whether a batch reading layer `seeds` with `held` in memory reads stored
    /// don't-cares.
    fn must_restore(&self, held: &Held, seeds: u32) -> bool {
        held[seeds as usize].is_none() && self.layer(seeds).is_some_and(|f| f.dont_cares())
    }

    /// The true values of `boards` in a batch, each block read once: the lookups are
    /// taken a layer at a time from the top, since a capture's child lies in a lower layer.
    /// A position of a layer with don't-cares (not `held` in memory) asks for its
    /// captures' children, a child only where its bound beats the stored value it serves;
    /// then every answer is folded into the lookup that asked for it, children first.
    pub(super) fn resolve(&self, held: &Held, boards: &[Board]) -> Result<Vec<i8>, ProbeError> {
        let mut restores = [false; MAX_SEEDS as usize + 1];
        for (n, r) in restores.iter_mut().enumerate() {
            *r = self.must_restore(held, n as u32);
        }
        if !boards.iter().any(|b| restores[b.seeds() as usize]) {
            // Nothing to restore (plain files, or layers held): the values as they are.
            return self.stored_many(held, boards);
        }
        // Lookup `id`'s stored value, then its best; past the batch's own boards, each
        // child's asker and the seeds its capture took (`asked_by[id − boards.len()]`).
        let mut best: Vec<i8> = vec![0; boards.len()];
        let mut asked_by: Vec<(usize, i8)> = Vec::new();
        let mut pending: Vec<Vec<Asked>> = (0..held.len()).map(|_| Vec::new()).collect();
        for (id, &board) in boards.iter().enumerate() {
            pending[board.seeds() as usize].push(Asked {
                board,
                id,
                restore_below: i8::MAX,
            });
        }
        for layer in (0..pending.len()).rev() {
            let asked = std::mem::take(&mut pending[layer]);
            if asked.is_empty() {
                continue;
            }
            if !self.has_layer(layer as u32) {
                self.layer_or_missing(layer as u32)?;
            }
            let layer_boards: Vec<Board> = asked.iter().map(|a| a.board).collect();
            let stored = self.stored_many(held, &layer_boards)?;
            for (a, &v) in asked.iter().zip(&stored) {
                best[a.id] = v;
            }
            if !restores[layer] {
                continue;
            }
            let wanted = |j: usize| stored[j] < asked[j].restore_below;
            for c in captures_of(self.rules(), &layer_boards, wanted) {
                pending[c.child.seeds() as usize].push(Asked {
                    board: c.child,
                    id: best.len(),
                    restore_below: c.captured - stored[c.at],
                });
                best.push(0);
                asked_by.push((asked[c.at].id, c.captured));
            }
        }
        // A child comes after the lookup that asked for it: backwards, each is whole before
        // it is folded. A child left as stored has `captured − stored ≤` the stored value
        // of its asker: folding it in changes nothing.
        for (id, &(asker, captured)) in asked_by.iter().enumerate().rev() {
            let id = boards.len() + id;
            best[asker] = best[asker].max(captured - best[id]);
        }
        best.truncate(boards.len());
        Ok(best)
    }

    /// The true values of positions `start..start + len` of layer `seeds`, read from their
    /// blocks (each checked as read) and restored where the file keeps don't-cares.
    pub(crate) fn true_span(
        &self,
        seeds: u32,
        start: u64,
        len: u64,
    ) -> Result<Vec<i8>, ProbeError> {
        let file = self.layer_or_missing(seeds)?;
        if file.dont_cares() {
            let boards: Vec<Board> = index::walk(seeds, start, start + len)
                .map(|(_, b)| b)
                .collect();
            // Nothing counted as held: these values come from the files, whatever is loaded.
            let from_files: Held = vec![None; self.loaded.read().len()];
            return self.resolve(&from_files, &boards);
        }
        Ok(file
            .stored_span(start, len)?
            .into_iter()
            .map(|b| b as i8)
            .collect())
    }

    /// The true values of layer `seeds`, every position in index order: a copy of the
    /// layer held in memory, else read whole, and for a file with don't-cares restored through [`Database::values_many`] (fast where
    /// the layers below are held in memory) and checked against its header's counts.
    pub(crate) fn true_layer(&self, seeds: u32) -> Result<Vec<i8>, ProbeError> {
        let file = self.layer_or_missing(seeds)?;
        if let Some(held) = self.loaded.read()[seeds as usize].clone() {
            return Ok(held.to_vec());
        }
        let mut values = file.read_all_stored()?;
        if file.dont_cares() {
            restore_layer(self.rules(), seeds, &mut values, |boards| {
                self.values_many(boards)
            })?;
            check_restored(file, &values)?;
        }
        Ok(values)
    }

    /// Re-writes the values of layer `seeds` with `opts`, in place (written aside, then
    /// renamed over the old file, so a run cut short leaves the old file whole): the
    /// way to [`Codec::DontCares`] and back, and [`store::recode_layer`] for the other
    /// codecs. Values with don't-cares, on either side, are worked out from the layers
    /// below, best held in memory first ([`Database::load`]). This database keeps reading
    /// the layer as it was opened (the same values); open it again to read the new file.
    ///
    /// # Errors
    ///
    /// A layer missing or damaged, this one or one below that a capture reaches; restored
    /// values that disagree with the header's counts; the new file cannot be written
    /// (nothing is renamed then).
    pub fn recode_layer(&self, seeds: u32, opts: WriteOptions) -> Result<WrittenLayer, ProbeError> {
        let (dir, rules) = (self.dir(), self.rules());
        let file = self.layer_or_missing(seeds)?;
        if !file.dont_cares() && opts.codec != Codec::DontCares {
            return Ok(store::recode_layer(dir, rules, seeds, opts)?);
        }
        let values = self.true_layer(seeds)?;
        let summary = LayerSummary::from_values(seeds, &values);
        if opts.codec != Codec::DontCares {
            return Ok(store::write_layer(dir, rules, seeds, &values, opts)?);
        }
        let stored = dont_care_values(rules, seeds, &values, opts.block_size, |boards| {
            self.values_many(boards)
        })?;
        Ok(store::write_dont_cares(dir, rules, &stored, summary, opts)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::{build, BuildOptions};
    use std::convert::Infallible;

    /// What a file keeps is at most each true value, equal to it wherever no capture gives
    /// it, and restores to it; a kept value above the true one (which no writer here makes)
    /// is caught by the header's counts, by a loaded layer and by `verify`.
    #[test]
    fn kept_values_stay_below_and_a_value_above_is_caught() {
        const N: u32 = 8;
        let rules = Rules::AWARI;
        let dir = tempfile::tempdir().unwrap();
        build(&BuildOptions::new(dir.path(), rules, N), &crate::Quiet).unwrap();
        let db = Database::open(dir.path(), rules).unwrap();
        let layers: Vec<Vec<i8>> = (0..=N).map(|n| db.true_layer(n).unwrap()).collect();
        let lookup = |boards: &[Board]| Ok::<_, Infallible>(held_values(&layers, boards));
        let values = &layers[N as usize];
        let kept = dont_care_values(rules, N, values, 64, lookup).unwrap();
        let best = best_captures(rules, N, 0, values.len(), &mut { lookup }).unwrap();
        let mut freed = 0;
        for i in 0..values.len() {
            assert!(kept[i] <= values[i], "position {i}");
            if best[i] != Some(values[i]) {
                assert_eq!(kept[i], values[i], "position {i}: no capture gives it");
            }
            freed += usize::from(kept[i] != values[i]);
        }
        assert!(
            freed > values.len() / 20,
            "{freed} of {} kept otherwise",
            values.len()
        );
        let mut restored = kept.clone();
        restore_layer(rules, N, &mut restored, lookup).unwrap();
        assert_eq!(&restored, values);
        // One kept value raised above its true one, written behind sound checksums.
        let mut bad = kept;
        let at = (0..bad.len()).find(|&i| values[i] < 20).unwrap();
        bad[at] = values[at] + 1;
        let opts = WriteOptions {
            block_size: 64,
            ..WriteOptions::default()
        };
        let summary = LayerSummary::from_values(N, values);
        store::write_dont_cares(dir.path(), rules, &bad, summary, opts).unwrap();
        let db = Database::open(dir.path(), rules).unwrap();
        let err = db.true_layer(N).unwrap_err().to_string();
        assert!(err.contains("restored values disagree"), "{err}");
        assert!(db.load(&[N]).is_err());
        let err = crate::verify(&db, 0, N, |_| {}).unwrap_err().to_string();
        assert!(err.contains("restored values disagree"), "{err}");
    }
}
