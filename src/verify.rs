//! Independent re-check of stored layers: every value must equal the best over its legal
//! moves, computed from the stored values of the children with the rules alone.
//!
//! This uses the files (read back through the store) and the move generator, never the
//! solver. Local consistency is necessary, not sufficient: inside a cycle of non-capturing
//! moves several assignments can satisfy it, which is why the solver's exactness is proven
//! separately by the tests against an independent naive solver.

use crate::index;
use crate::probe::Database;
use crate::rules::Turn;
use crate::store::StoreError;
use rayon::prelude::*;

/// A stored value that disagrees with its moves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The position.
    pub board: crate::Board,
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
}

const EXAMPLES: usize = 10;

/// Checks layers `first..=last` of `db`: block checksums, then every value against its
/// moves. Layers `0..=last` are read into memory.
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
        db.layer(n).ok_or(VerifyError::Missing(n))?.check_blocks()?;
    }
    let mut values: Vec<Vec<i8>> = Vec::new();
    let mut checks = Vec::new();
    for n in 0..=last {
        let file = db.layer(n).ok_or(VerifyError::Missing(n))?;
        values.push(file.read_all()?);
        if n < first {
            continue;
        }
        let check = check_layer(db.rules(), n, &values);
        on_layer(&check);
        checks.push(check);
    }
    Ok(checks)
}

fn check_layer(rules: crate::Rules, n: u32, values: &[Vec<i8>]) -> LayerCheck {
    let size = index::size(n);
    const CHUNK: u64 = 1 << 14;
    let (mismatches, mut examples) = (0..size.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let start = c * CHUNK;
            let end = (start + CHUNK).min(size);
            let mut count = 0u64;
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
            (count, found)
        })
        .reduce(
            || (0, Vec::new()),
            |(a, mut x), (b, y)| {
                x.extend(y);
                (a + b, x)
            },
        );
    examples.truncate(EXAMPLES);
    LayerCheck {
        seeds: n,
        positions: size,
        mismatches,
        examples,
    }
}
