//! The own-row values re-checked layer by layer: what holds of a stored pair whatever the
//! history, from the files, the bounds and the rules ([`check_own_row`], and
//! [`check_own_row_sampled`] for a layer too large to read whole).

use super::sample::{run_length, sample_runs};
use super::VerifyError;
use crate::board::Board;
use crate::probe::{OwnRowTables, ProbeError};
use crate::rules::Rules;
use crate::solve::own_row::proof_search::Leaves;
use crate::store::LayerFile;
use rayon::prelude::*;

/// One layer of own-row values, read whole and checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnRowLayerCheck {
    /// The layer.
    pub seeds: u32,
    /// Its positions.
    pub positions: u64,
    /// Positions whose value is exact (low = high).
    pub exact: u64,
    /// Bytes of its two files.
    pub bytes: u64,
    /// Positions that fail a check (see [`check_own_row`]).
    pub faults: u64,
    /// The first of them, and why.
    pub first_fault: Option<String>,
}

/// Reads layer `seeds` of the own-row values whole (every block's checksum, a block at a
/// time a thread) and checks what holds whatever the history: `low ≤ high`, both within
/// the bounds (when the bounds layer is there), a finished game's value, a position whose
/// every move captures (its pair is the best over its captures of the children's pairs),
/// that no capture proves more than the high end, and that the pair meets the best of its
/// moves' intervals: a capture's `captured − [high, low]` of its child, a quiet move's
/// child's pair widened by the position's own-row difference (where the game from the
/// child stops if it comes back). The lower layers and the layer itself are read as needed.
/// `None` when the layer is not built. The positions are checked in parallel, on the rayon
/// pool of the caller.
///
/// # Errors
///
/// A file that cannot be read or is damaged, or a lower layer missing.
pub fn check_own_row(
    tables: &OwnRowTables<'_>,
    seeds: u32,
) -> Result<Option<OwnRowLayerCheck>, VerifyError> {
    let Some((low_file, high_file)) = tables.layer(seeds) else {
        return Ok(None);
    };
    let mut check = OwnRowLayerCheck {
        seeds,
        positions: low_file.positions(),
        exact: 0,
        bytes: low_file.bytes() + high_file.bytes(),
        faults: 0,
        first_fault: None,
    };
    // Block by block, in parallel (a layer of 36 seeds is 35 GB of pairs), the blocks'
    // results taken in order so that the first fault named is the first in the layer,
    // however the threads ran.
    let runs: Vec<Tally> = (0..low_file.blocks())
        .into_par_iter()
        .map(|block| check_block(tables, seeds, (low_file, high_file), block))
        .collect::<Result<_, ProbeError>>()?;
    for (exact, faults, first) in runs {
        check.exact += exact;
        check.faults += faults;
        if check.first_fault.is_none() {
            check.first_fault = first;
        }
    }
    Ok(Some(check))
}

/// A block's exact positions, its faults and the first of them.
type Tally = (u64, u64, Option<String>);

/// Checks block `block` of the pair `(low_file, high_file)` of layer `seeds` (see
/// [`check_own_row`]).
fn check_block(
    tables: &OwnRowTables<'_>,
    seeds: u32,
    (low_file, high_file): (&LayerFile, &LayerFile),
    block: u64,
) -> Result<Tally, ProbeError> {
    let db = tables.database();
    let bounds = db.layer(seeds);
    let start = block * u64::from(low_file.block_size());
    let (low, high) = (low_file.read_block(block)?, high_file.read_block(block)?);
    // The bounds' blocks where they line up with the pair's, else one at a time.
    let bounds_block = match bounds {
        Some((bl, bh)) if bl.block_size() == low_file.block_size() => {
            Some((bl.read_block(block)?, bh.read_block(block)?))
        }
        _ => None,
    };
    let mut tally = (0u64, 0u64, None);
    let end = start + low.len() as u64;
    for (i, board) in crate::index::walk(seeds, start, end) {
        let j = (i - start) as usize;
        let pair = (low[j], high[j]);
        tally.0 += u64::from(pair.0 == pair.1);
        let bounds = match (&bounds_block, bounds) {
            (Some((bl, bh)), _) => Some((bl[j], bh[j])),
            (None, Some(_)) => {
                let b = db.bounds(&board)?;
                Some((b.low, b.high))
            }
            (None, None) => None,
        };
        if let Some(why) = local_fault(tables.rules(), &board, pair, tables, bounds)? {
            tally.1 += 1;
            tally.2.get_or_insert(format!("{board}: {why}"));
        }
    }
    Ok(tally)
}

/// As [`check_own_row`], for `count` positions of layer `seeds` in runs drawn at random as
/// the values' sampled check draws them ([`super::verify_sampled`]), each pair read through
/// the block cache (its blocks checked as they are read); a sample at least the layer's
/// size is the whole check. `positions` and `exact` count the sample.
///
/// # Errors
///
/// As [`check_own_row`].
pub fn check_own_row_sampled(
    tables: &OwnRowTables<'_>,
    seeds: u32,
    count: u64,
) -> Result<Option<OwnRowLayerCheck>, VerifyError> {
    if count >= crate::index::size(seeds) {
        return check_own_row(tables, seeds);
    }
    let Some((low_file, high_file)) = tables.layer(seeds) else {
        return Ok(None);
    };
    let db = tables.database();
    let run = run_length(low_file.block_size(), count);
    let has_bounds = db.layer(seeds).is_some();
    let mut check = OwnRowLayerCheck {
        seeds,
        positions: count,
        exact: 0,
        bytes: low_file.bytes() + high_file.bytes(),
        faults: 0,
        first_fault: None,
    };
    for (start, len) in sample_runs(seeds, count, run) {
        for (_, board) in crate::index::walk(seeds, start, start + len) {
            let (l, h) = db.cache().pair(low_file, high_file, &board)?;
            let (l, h) = (l as i8, h as i8);
            check.exact += u64::from(l == h);
            let bounds = if has_bounds {
                let b = db.bounds(&board)?;
                Some((b.low, b.high))
            } else {
                None
            };
            if let Some(why) = local_fault(tables.rules(), &board, (l, h), tables, bounds)? {
                check.faults += 1;
                check.first_fault.get_or_insert(format!("{board}: {why}"));
            }
        }
    }
    Ok(Some(check))
}

/// What is wrong with one position's pair `(l, h)`, by the checks of
/// [`check_own_row`].
fn local_fault(
    rules: Rules,
    board: &Board,
    (l, h): (i8, i8),
    leaves: &OwnRowTables<'_>,
    bounds: Option<(i8, i8)>,
) -> Result<Option<String>, ProbeError> {
    if l > h {
        return Ok(Some(format!("low {l} above high {h}")));
    }
    if let Some((bl, bh)) = bounds {
        if l < bl || h > bh {
            return Ok(Some(format!("[{l}, {h}] outside the bounds [{bl}, {bh}]")));
        }
    }
    let turn = rules.packed_turn(crate::board::to_bits(board));
    if let Some(value) = turn.over {
        return Ok((l != value || h != value)
            .then(|| format!("[{l}, {h}] for a finished game worth {value}")));
    }
    let quiet = (0..6).any(|p| turn.legal & (1 << p) != 0 && turn.captured[p] == 0);
    let n = board.seeds();
    let bits = crate::board::to_bits(board);
    // The mover's own-row difference: where the game from a quiet move's child stops if it
    // comes back to this position (the one position of its history).
    let here = crate::solve::own_row::proof_search::own_row_bits(bits) as i8;
    // The first capture whose sure gain is above `h`, by pit.
    let mut above: Option<(usize, i8)> = None;
    let mut captures: Option<(i8, i8)> = None;
    let moves = crate::solve::own_row::best_of_moves(&turn, |pit, c, child| {
        if c == 0 {
            // A quiet move: its child's fresh pair, widened by this position's own-row
            // difference (for the child's mover, `-here`), holds for the child reached
            // from here: the two games are one until the play comes back here, where
            // (under either repetition) it may stop.
            let (yl, yh) = leaves.fresh(child, n)?;
            return Ok::<_, ProbeError>(Some((yl.min(-here), yh.max(-here))));
        }
        let (cl, ch) = leaves.fresh(child, n - u32::from(c))?;
        let sure = c as i8 - ch;
        if sure > h && above.is_none() {
            above = Some((pit, sure));
        }
        let (gain_low, gain_high) = (sure, c as i8 - cl);
        captures = Some(captures.map_or((gain_low, gain_high), |(bl, bh)| {
            (bl.max(gain_low), bh.max(gain_high))
        }));
        Ok(Some((cl, ch)))
    })?;
    if let Some((pit, sure)) = above {
        return Ok(Some(format!(
            "pit {} captures a sure {sure}, above high {h}",
            pit + 1
        )));
    }
    if let Some(best) = captures.filter(|&best| !quiet && best != (l, h)) {
        return Ok(Some(format!(
            "[{l}, {h}] where its captures give [{}, {}]",
            best.0, best.1
        )));
    }
    // The value is its best move's: the moves' intervals, met, must meet the pair.
    Ok(match moves {
        Some((ml, mh)) if ml > h || mh < l => {
            Some(format!("[{l}, {h}] where its moves give [{ml}, {mh}]"))
        }
        _ => None,
    })
}
