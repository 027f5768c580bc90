//! The bounds tables re-checked from their files and the rules alone, as [`super::verify`]
//! re-checks the values.

use super::VerifyError;
use crate::board::Board;
use crate::index;
use crate::probe::{Bounds, BoundsDatabase};
use crate::rules::Turn;
use crate::solve::bounds::BoundsLayer;
use crate::store::{LayerSummary, StoreError};
use rayon::prelude::*;

/// The result of checking one bounds layer.
#[derive(Clone, Debug)]
pub struct BoundsCheck {
    /// The layer.
    pub seeds: u32,
    /// Positions checked.
    pub positions: u64,
    /// Positions whose pair is exact.
    pub exact: u64,
    /// Positions with `low > high`, or a bound that is not the best over the moves of the
    /// child's matching bound.
    pub mismatches: u64,
    /// The first few of them: board, stored pair, pair the moves give.
    pub examples: Vec<(Board, Bounds, Bounds)>,
}

/// Checks bounds layers `first..=last`: every block's checksum, the header histograms,
/// `low ≤ high`, and that `low(P) = max over moves of captured − high(child)` and
/// `high(P) = max over moves of captured − low(child)` (the end value when the game is
/// over). Layers `0..=last` are read into memory.
///
/// # Errors
///
/// A missing layer, or a file that cannot be read or is damaged.
pub fn verify_bounds(
    db: &BoundsDatabase,
    first: u32,
    last: u32,
) -> Result<Vec<BoundsCheck>, VerifyError> {
    let mut layers: Vec<BoundsLayer> = Vec::new();
    let mut checks = Vec::new();
    for n in 0..=last {
        let (low, high) = db.layer_or_missing(n)?;
        let pair = BoundsLayer {
            low: low.read_all()?,
            high: high.read_all()?,
        };
        for (file, values) in [(low, &pair.low), (high, &pair.high)] {
            if LayerSummary::from_values(n, values) != *file.summary() {
                return Err(StoreError::Corrupted {
                    path: file.path().to_path_buf(),
                    what: "the header histogram does not match the stored values".into(),
                }
                .into());
            }
        }
        layers.push(pair);
        if n >= first {
            checks.push(check_layer(db, n, &layers));
        }
    }
    Ok(checks)
}

/// Checks layer `n` against its moves; `layers` holds layers `0..=n`.
fn check_layer(db: &BoundsDatabase, n: u32, layers: &[BoundsLayer]) -> BoundsCheck {
    const CHUNK: u64 = 1 << 14;
    let layer = &layers[n as usize];
    let rules = db.rules();
    let size = index::size(n);
    let bad: Vec<(u64, Board, Bounds, Bounds)> = (0..size.div_ceil(CHUNK))
        .into_par_iter()
        .flat_map_iter(|c| index::walk(n, c * CHUNK, ((c + 1) * CHUNK).min(size)))
        .filter_map(|(i, board)| {
            let stored = Bounds {
                low: layer.low[i as usize],
                high: layer.high[i as usize],
            };
            let want = match rules.turn(&board) {
                Turn::GameOver { value } => Bounds {
                    low: value,
                    high: value,
                },
                Turn::Moves(moves) => {
                    let mut want = Bounds {
                        low: i8::MIN,
                        high: i8::MIN,
                    };
                    for m in moves.iter() {
                        let child = &layers[m.child.seeds() as usize];
                        let c = index::rank(&m.child) as usize;
                        let cap = m.captured as i8;
                        want.low = want.low.max(cap - child.high[c]);
                        want.high = want.high.max(cap - child.low[c]);
                    }
                    want
                }
            };
            (stored != want || stored.low > stored.high).then_some((i, board, stored, want))
        })
        .collect();
    BoundsCheck {
        seeds: n,
        positions: size,
        exact: layer.exact(),
        mismatches: bad.len() as u64,
        examples: bad.iter().take(10).map(|&(_, b, s, w)| (b, s, w)).collect(),
    }
}
