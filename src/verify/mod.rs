//! Independent re-check of stored layers: every value must equal the best over its legal
//! moves, computed from the stored values of the children with the rules alone.
//!
//! The bounds tables are checked the same way ([`verify_bounds`]); the own-row values by
//! what holds of a pair whatever the history ([`check_own_row`]). A layer too large to hold
//! is checked on a sample drawn at random ([`verify_sampled`], in `sample.rs`).
//!
//! This uses the files (read back through the store) and the move generator, never the
//! solver. Local consistency is necessary, not sufficient: inside a cycle of non-capturing
//! moves several assignments can satisfy it, which is why the solver's exactness is proven
//! separately by the tests against an independent naive solver.

mod bounds;
mod own_row;
mod sample;
#[cfg(test)]
mod tests;

pub use bounds::{verify_bounds, verify_bounds_sampled, BoundsCheck};
pub use own_row::{check_own_row, check_own_row_sampled, OwnRowLayerCheck};
pub use sample::verify_sampled;

use crate::index;
use crate::probe::Database;
use crate::rules::Turn;
use crate::store::{self, Incomplete, LayerState, StoreError, DISTANCE_SATURATED};
use rayon::prelude::*;

/// A stored value that disagrees with its moves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The position.
    pub board: crate::board::Board,
    /// Its stored value.
    pub stored: i8,
    /// The best over its moves.
    pub expected: i8,
}

/// The result of checking one layer.
#[derive(Clone, Debug)]
pub struct LayerCheck {
    /// The layer.
    pub seeds: u32,
    /// Positions checked.
    pub positions: u64,
    /// Positions whose value is not the best over their moves.
    pub mismatches: u64,
    /// Whether the layer keeps its distances, checked too (false for a layer built
    /// without them).
    pub distances_checked: bool,
    /// Positions whose stored round breaks the promise of the distances (see
    /// [`crate::store::TableKind::Distances`]): a won position with no best move that
    /// captures or leads to a lower round, a lost one with a best move that does neither,
    /// or an endless-play position with a round other than 0.
    pub distance_faults: u64,
    /// The first few mismatches, in index order.
    pub examples: Vec<Mismatch>,
}

/// Why a check could not run.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// A layer the check needs is missing.
    #[error("layer {0} is missing; verify needs every layer from 0 up to the last one checked")]
    Missing(u32),
    /// A file could not be read, or is damaged.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A layer has its values but not every table a finished layer has (see
    /// [`crate::store::layer_state`]).
    #[error("layer {seeds} is incomplete ({why})")]
    Incomplete {
        /// The layer.
        seeds: u32,
        /// What is missing or damaged.
        why: Incomplete,
        /// The rule set.
        rules: crate::rules::Rules,
        /// The database folder.
        dir: std::path::PathBuf,
    },
    /// A sampled position's value could not be read.
    #[error(transparent)]
    Probe(#[from] crate::probe::ProbeError),
}

const EXAMPLES: usize = 10;

/// Checks layers `first..=last` of `db`: block checksums, then every value against its
/// moves (and every stored round against its best moves, where the layer keeps its
/// distances). Layers `0..=last` are read into memory. `on_layer` is called with each
/// layer's check as it is done.
///
/// # Errors
///
/// A layer of `0..=last` missing ([`VerifyError::Missing`]), a layer checked without every
/// table a finished layer has ([`VerifyError::Incomplete`]), or a file that cannot be read
/// or is damaged ([`VerifyError::Store`]). Every layer checked is first read through once
/// for its checksums, so a missing or damaged one fails before any layer is checked.
pub fn verify(
    db: &Database,
    first: u32,
    last: u32,
    mut on_layer: impl FnMut(&LayerCheck),
) -> Result<Vec<LayerCheck>, VerifyError> {
    // A missing layer or a damaged block fails here, in seconds, before minutes of
    // loading and checking; reading the layers back below checks the blocks again, which
    // costs little next to the value check.
    for n in first..=last {
        check_before_loading(db, n)?;
    }
    let mut values: Vec<Vec<i8>> = Vec::new();
    let mut checks = Vec::new();
    for n in first..=last {
        let check = check_whole(db, n, &mut values)?;
        on_layer(&check);
        checks.push(check);
    }
    Ok(checks)
}

/// Layer `n` present, every block of its values sound, and every table beside them whole.
fn check_before_loading(db: &Database, n: u32) -> Result<(), VerifyError> {
    db.layer(n).ok_or(VerifyError::Missing(n))?.check_blocks()?;
    // This checks every block of the distances too.
    require_complete(db, n, Depth::Whole)
}

/// Checks every position of layer `n` with layers `0..=n` in memory: `values` holds the
/// layers read so far (from 0 up), and is extended to `n`.
fn check_whole(
    db: &Database,
    n: u32,
    values: &mut Vec<Vec<i8>>,
) -> Result<LayerCheck, VerifyError> {
    while values.len() <= n as usize {
        let seeds = values.len() as u32;
        let file = db.layer(seeds).ok_or(VerifyError::Missing(seeds))?;
        if file.dont_cares() {
            // Restored from the layers below, already here; the check below then proves
            // the restored values, as it proves any layer's.
            let mut layer = file.read_all_stored()?;
            let below = &values[..];
            crate::probe::restore_layer(db.rules(), seeds, &mut layer, |boards| {
                Ok::<_, std::convert::Infallible>(crate::probe::held_values(below, boards))
            })
            .unwrap_or_else(|never| match never {});
            crate::probe::check_restored(file, &layer)?;
            values.push(layer);
            continue;
        }
        values.push(file.read_all()?);
    }
    let distances = db
        .distances_file(n)
        .map(|d| d.read_all_bytes())
        .transpose()?;
    Ok(check_layer(
        db.rules(),
        n,
        &values[..=n as usize],
        distances.as_deref(),
    ))
}

/// How closely [`require_complete`] looks at the tables beside the values.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Depth {
    /// Present, header and every block checksum sound.
    Whole,
    /// Present: a sampled check reads only some blocks of a layer (each checked as read).
    Present,
}

/// Fails layer `n` unless its distances ([`store::Tables::companion`]) are beside its
/// values: whole, as [`store::layer_state`] checks them, or (for a sampled check) present.
fn require_complete(db: &Database, n: u32, depth: Depth) -> Result<(), VerifyError> {
    let incomplete = |why| VerifyError::Incomplete {
        seeds: n,
        why,
        rules: db.rules(),
        dir: db.dir().to_path_buf(),
    };
    if depth == Depth::Present {
        let kind = store::Tables::Values.companion();
        let path = store::table_path(db.dir(), db.rules(), n, kind);
        if std::fs::symlink_metadata(&path).is_err() {
            return Err(incomplete(Incomplete::Missing { kind, path }));
        }
        return Ok(());
    }
    match store::layer_state(db.dir(), db.rules(), store::Tables::Values, n)? {
        LayerState::Incomplete(why) => Err(incomplete(why)),
        LayerState::Missing => Err(VerifyError::Missing(n)),
        LayerState::Complete => Ok(()),
    }
}

/// Whether the round of a position agrees with its moves: along best play the rounds fall
/// until a capture (see [`crate::store::TableKind::Distances`]).
fn round_keeps_its_promise(
    rules: crate::rules::Rules,
    board: &crate::board::Board,
    value: i8,
    round: u8,
    layers: &[Vec<i8>],
    distances: &[u8],
) -> bool {
    if value == 0 {
        return round == 0;
    }
    let Turn::Moves(moves) = rules.turn(board) else {
        return round == 0;
    };
    if round == DISTANCE_SATURATED {
        return true;
    }
    let n = board.seeds();
    // For each best move: whether it makes progress (captures, or leads to a lower round).
    let mut best = moves.iter().filter_map(|m| {
        let child_layer = &layers[(n - u32::from(m.captured)) as usize];
        let at = index::rank(&m.child) as usize;
        let worth = m.captured as i8 - child_layer[at];
        (worth == value).then(|| m.captured > 0 || distances[at] < round)
    });
    if value > 0 {
        best.any(|progress| progress)
    } else {
        best.all(|progress| progress)
    }
}

fn check_layer(
    rules: crate::rules::Rules,
    n: u32,
    values: &[Vec<i8>],
    distances: Option<&[u8]>,
) -> LayerCheck {
    let size = index::size(n);
    const CHUNK: u64 = 1 << 14;
    let (mismatches, faults, mut examples) = (0..size.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let start = c * CHUNK;
            let end = (start + CHUNK).min(size);
            let mut count = 0u64;
            let mut faults = 0u64;
            let mut found = Vec::new();
            for (i, board) in index::walk(n, start, end) {
                let expected = match rules.turn(&board) {
                    Turn::GameOver { value } => value,
                    Turn::Moves(moves) => moves
                        .iter()
                        .map(|m| {
                            let child_seeds = n - u32::from(m.captured);
                            let child =
                                values[child_seeds as usize][index::rank(&m.child) as usize];
                            m.captured as i8 - child
                        })
                        .max()
                        .expect("a position that is not over has a move"),
                };
                let stored = values[n as usize][i as usize];
                if let Some(d) = distances {
                    if !round_keeps_its_promise(rules, &board, stored, d[i as usize], values, d) {
                        faults += 1;
                    }
                }
                if stored != expected {
                    count += 1;
                    if found.len() < EXAMPLES {
                        found.push(Mismatch {
                            board,
                            stored,
                            expected,
                        });
                    }
                }
            }
            (count, faults, found)
        })
        .reduce(
            || (0, 0, Vec::new()),
            |(a, f, mut x), (b, g, y)| {
                x.extend(y);
                (a + b, f + g, x)
            },
        );
    examples.truncate(EXAMPLES);
    LayerCheck {
        seeds: n,
        positions: size,
        mismatches,
        distances_checked: distances.is_some(),
        distance_faults: faults,
        examples,
    }
}
