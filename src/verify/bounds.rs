//! The bounds tables re-checked from their files and the rules alone, as [`super::verify`]
//! re-checks the values.

use super::sample::{run_length, sample_runs};
use super::{VerifyError, EXAMPLES};
use crate::board::Board;
use crate::index;
use crate::probe::{Bounds, BoundsDatabase, ProbeError};
use crate::rules::Turn;
use crate::solve::bounds::BoundsLayer;
use crate::store::{LayerSummary, StoreError};
use rayon::prelude::*;

/// The result of checking one bounds layer, whole or sampled.
#[derive(Clone, Debug)]
pub struct BoundsCheck {
    /// The layer.
    pub seeds: u32,
    /// Positions checked (the layer's size, unless sampled).
    pub positions: u64,
    /// Positions checked whose pair is exact.
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
/// over). Layers `0..=last` are read into memory. `on_layer` hears of each layer as it is
/// checked.
///
/// # Errors
///
/// A missing layer, or a file that cannot be read or is damaged.
pub fn verify_bounds(
    db: &BoundsDatabase,
    first: u32,
    last: u32,
    mut on_layer: impl FnMut(&BoundsCheck),
) -> Result<Vec<BoundsCheck>, VerifyError> {
    let mut layers: Vec<BoundsLayer> = Vec::new();
    let mut checks = Vec::new();
    for n in first..=last {
        load_up_to(db, n, &mut layers)?;
        let check = check_layer(db, n, &layers);
        on_layer(&check);
        checks.push(check);
    }
    Ok(checks)
}

/// Checks `count` positions of each bounds layer `first..=last`, in runs drawn at random
/// as the values' sampled check draws them ([`super::verify_sampled`]), each against its
/// moves as [`verify_bounds`] checks it, the children's pairs read through the block
/// cache. A layer of at most `count` positions is checked whole, as [`verify_bounds`]
/// checks it. The memory stays flat (the cache's blocks), whatever the sample.
///
/// # Errors
///
/// A missing layer, or a file that cannot be read or is damaged (blocks are checked as
/// they are read; a sampled layer's blocks that no lookup needs are not read).
pub fn verify_bounds_sampled(
    db: &BoundsDatabase,
    first: u32,
    last: u32,
    count: u64,
    mut on_layer: impl FnMut(&BoundsCheck),
) -> Result<Vec<BoundsCheck>, VerifyError> {
    let mut layers: Vec<BoundsLayer> = Vec::new();
    let mut checks = Vec::new();
    for n in first..=last {
        db.layer_or_missing(n)?;
        let check = if count >= index::size(n) {
            load_up_to(db, n, &mut layers)?;
            check_layer(db, n, &layers)
        } else {
            // Layers grow with their seeds: once one is sampled, so are those above it.
            layers = Vec::new();
            check_sample(db, n, count)?
        };
        on_layer(&check);
        checks.push(check);
    }
    Ok(checks)
}

/// Reads layers up to `n` into `layers` (which holds those below the first it lacks),
/// each checked against its header's histogram.
fn load_up_to(
    db: &BoundsDatabase,
    n: u32,
    layers: &mut Vec<BoundsLayer>,
) -> Result<(), VerifyError> {
    while layers.len() <= n as usize {
        let seeds = layers.len() as u32;
        let (low, high) = db.layer_or_missing(seeds)?;
        let pair = BoundsLayer {
            low: low.read_all()?,
            high: high.read_all()?,
        };
        for (file, values) in [(low, &pair.low), (high, &pair.high)] {
            if LayerSummary::from_values(seeds, values) != *file.summary() {
                return Err(StoreError::Corrupted {
                    path: file.path().to_path_buf(),
                    what: "the header histogram does not match the stored values".into(),
                }
                .into());
            }
        }
        layers.push(pair);
    }
    Ok(())
}

/// The pair the moves of `board` give: the end value when the game is over, else the best
/// over the moves of the capture minus the child's matching bound (`child` gives a
/// child's pair).
fn pair_of_moves<E>(
    rules: crate::rules::Rules,
    board: &Board,
    mut child: impl FnMut(&Board) -> Result<Bounds, E>,
) -> Result<Bounds, E> {
    Ok(match rules.turn(board) {
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
                let c = child(&m.child)?;
                let cap = m.captured as i8;
                want.low = want.low.max(cap - c.high);
                want.high = want.high.max(cap - c.low);
            }
            want
        }
    })
}

/// Whether a stored pair is wrong: not the pair its moves give, or upside down.
fn wrong(stored: Bounds, want: Bounds) -> bool {
    stored != want || stored.low > stored.high
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
            let Ok(want) = pair_of_moves(rules, &board, |child| {
                let layer = &layers[child.seeds() as usize];
                let c = index::rank(child) as usize;
                Ok::<_, std::convert::Infallible>(Bounds {
                    low: layer.low[c],
                    high: layer.high[c],
                })
            });
            wrong(stored, want).then_some((i, board, stored, want))
        })
        .collect();
    BoundsCheck {
        seeds: n,
        positions: size,
        exact: layer.exact(),
        mismatches: bad.len() as u64,
        examples: bad
            .iter()
            .take(EXAMPLES)
            .map(|&(_, b, s, w)| (b, s, w))
            .collect(),
    }
}

/// Checks `picks` positions of layer `n` (fewer than the layer holds), in runs drawn at
/// random, reading every pair through the block cache.
fn check_sample(db: &BoundsDatabase, n: u32, picks: u64) -> Result<BoundsCheck, VerifyError> {
    let (low, _) = db.layer_or_missing(n)?;
    let runs = sample_runs(n, picks, run_length(low.block_size(), picks));
    let rules = db.rules();
    type Found = (u64, Vec<(Board, Bounds, Bounds)>, u64);
    let found: Vec<Found> = runs
        .par_iter()
        .map(|&(start, len)| -> Result<Found, ProbeError> {
            let (mut exact, mut bad, mut count) = (0, Vec::new(), 0);
            for (_, board) in index::walk(n, start, start + len) {
                let stored = db.bounds(&board)?;
                let want = pair_of_moves(rules, &board, |child| db.bounds(child))?;
                exact += u64::from(stored.exact());
                if wrong(stored, want) {
                    count += 1;
                    if bad.len() < EXAMPLES {
                        bad.push((board, stored, want));
                    }
                }
            }
            Ok((exact, bad, count))
        })
        .collect::<Result<_, _>>()?;
    let mut check = BoundsCheck {
        seeds: n,
        positions: picks,
        exact: 0,
        mismatches: 0,
        examples: Vec::new(),
    };
    for (exact, bad, count) in found {
        check.exact += exact;
        check.mismatches += count;
        let room = EXAMPLES - check.examples.len().min(EXAMPLES);
        check.examples.extend(bad.into_iter().take(room));
    }
    Ok(check)
}
