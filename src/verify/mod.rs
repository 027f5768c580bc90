//! Independent re-check of stored layers: every value must equal the best over its legal
//! moves, computed from the stored values of the children with the rules alone.
//!
//! The bounds tables are checked the same way ([`verify_bounds`]).
//!
//! This uses the files (read back through the store) and the move generator, never the
//! solver. Local consistency is necessary, not sufficient: inside a cycle of non-capturing
//! moves several assignments can satisfy it, which is why the solver's exactness is proven
//! separately by the tests against an independent naive solver.

mod bounds;

pub use bounds::{verify_bounds, BoundsCheck};

use crate::index;
use crate::probe::Database;
use crate::rules::Turn;
use crate::store::{self, Incomplete, LayerState, StoreError, DISTANCE_SATURATED};
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
        rules: crate::Rules,
        /// The database folder.
        dir: std::path::PathBuf,
    },
    /// A sampled position's value could not be read.
    #[error(transparent)]
    Probe(#[from] crate::probe::ProbeError),
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
        // This checks every block of the distances too.
        require_complete(db, n, Depth::Whole)?;
    }
    let mut values: Vec<Vec<i8>> = Vec::new();
    let mut checks = Vec::new();
    for n in 0..=last {
        let file = db.layer(n).ok_or(VerifyError::Missing(n))?;
        values.push(file.read_all()?);
        if n < first {
            continue;
        }
        let distances = db
            .distances_file(n)
            .map(|d| d.read_all_bytes())
            .transpose()?;
        let check = check_layer(db.rules(), n, &values, distances.as_deref());
        on_layer(&check);
        checks.push(check);
    }
    Ok(checks)
}

/// Checks `count` positions of each layer `first..=last`, spread evenly over its index
/// range (every position of a layer with fewer), against their moves, as [`verify`] does
/// for whole layers: for layers too large to hold in memory. Each value is read through
/// the database's block cache, so memory stays small whatever the layer.
///
/// # Errors
///
/// A layer missing, or a file that cannot be read or is damaged (blocks are checked as
/// they are read; this does not check every block of a layer).
pub fn verify_sampled(
    db: &Database,
    first: u32,
    last: u32,
    count: u64,
    mut on_layer: impl FnMut(&LayerCheck),
) -> Result<Vec<LayerCheck>, VerifyError> {
    let mut checks = Vec::new();
    for n in first..=last {
        db.layer(n).ok_or(VerifyError::Missing(n))?;
        require_complete(db, n, Depth::Present)?;
        let size = index::size(n);
        let picks = count.min(size);
        let has_distances = db.distances_file(n).is_some();
        let results: Vec<Sampled> = (0..picks)
            .into_par_iter()
            .map(|k| {
                // Evenly spread, ends included.
                let i = if picks == size {
                    k
                } else {
                    k * (size - 1) / (picks - 1).max(1)
                };
                check_position(db, &index::unrank(n, i), has_distances)
            })
            .collect::<Result<_, VerifyError>>()?;
        let check = LayerCheck {
            seeds: n,
            positions: picks,
            mismatches: results.iter().map(|r| r.0).sum(),
            distances_checked: has_distances,
            distance_faults: results.iter().map(|r| r.1).sum(),
            examples: results
                .into_iter()
                .filter_map(|r| r.2)
                .take(EXAMPLES)
                .collect(),
        };
        on_layer(&check);
        checks.push(check);
    }
    Ok(checks)
}

/// One sampled position against its moves: whether its value mismatches (and how),
/// whether its round breaks the promise of the distances.
type Sampled = (u64, u64, Option<Mismatch>);

/// Checks one position of a sampled check, reading every value through the block cache.
fn check_position(
    db: &Database,
    board: &crate::Board,
    has_distances: bool,
) -> Result<Sampled, VerifyError> {
    let board = *board;
    let stored = db.value(&board)?;
    let moves = match db.rules().turn(&board) {
        Turn::GameOver { value } => {
            let fault = has_distances && db.distance(&board)? != Some(0);
            let bad = stored != value;
            return Ok((
                u64::from(bad),
                u64::from(fault),
                bad.then_some(Mismatch {
                    board,
                    stored,
                    expected: value,
                }),
            ));
        }
        Turn::Moves(moves) => moves,
    };
    let mut worths = Vec::with_capacity(moves.len());
    for m in &moves {
        worths.push(m.captured as i8 - db.value(&m.child)?);
    }
    let expected = *worths
        .iter()
        .max()
        .expect("a position that is not over has a move");
    let fault = match db.distance(&board)? {
        Some(round) if has_distances => round_fault(db, stored, round, &moves, &worths)?,
        _ => false,
    };
    let bad = stored != expected;
    Ok((
        u64::from(bad),
        u64::from(fault),
        bad.then_some(Mismatch {
            board,
            stored,
            expected,
        }),
    ))
}

/// Whether the stored `round` of a position of value `stored` breaks the promise of the
/// distances, as [`round_keeps_its_promise`] checks it on whole layers, through the cache.
fn round_fault(
    db: &Database,
    stored: i8,
    round: u8,
    moves: &crate::MoveList,
    worths: &[i8],
) -> Result<bool, VerifyError> {
    if stored == 0 {
        return Ok(round != 0);
    }
    if round == DISTANCE_SATURATED {
        return Ok(false);
    }
    let mut progress = Vec::new();
    for (m, &w) in moves.iter().zip(worths) {
        if w == stored {
            let lower = m.captured > 0 || db.distance(&m.child)?.is_some_and(|r| r < round);
            progress.push(lower);
        }
    }
    Ok(if stored > 0 {
        !progress.iter().any(|&p| p)
    } else {
        !progress.iter().all(|&p| p)
    })
}

/// How closely [`require_complete`] looks at the tables beside the values.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Depth {
    /// Present, header and every block checksum sound.
    Whole,
    /// Present: a sampled check reads only some blocks of a layer (each checked as read).
    Present,
}

/// Fails layer `n` unless every table of [`store::companion_tables`] is beside its values:
/// whole, as [`store::layer_state`] checks it, or (for a sampled check) present.
fn require_complete(db: &Database, n: u32, depth: Depth) -> Result<(), VerifyError> {
    let incomplete = |why| VerifyError::Incomplete {
        seeds: n,
        why,
        rules: db.rules(),
        dir: db.dir().to_path_buf(),
    };
    if depth == Depth::Present {
        for &kind in store::companion_tables(db.rules(), n) {
            let path = store::table_path(db.dir(), db.rules(), n, kind);
            if std::fs::symlink_metadata(&path).is_err() {
                return Err(incomplete(Incomplete::Missing { kind, path }));
            }
        }
        return Ok(());
    }
    match store::layer_state(db.dir(), db.rules(), n)? {
        LayerState::Incomplete(why) => Err(incomplete(why)),
        LayerState::Missing => Err(VerifyError::Missing(n)),
        LayerState::Complete => Ok(()),
    }
}

/// Whether the round of a position agrees with its moves: along best play the rounds fall
/// until a capture (see [`crate::store::TableKind::Distances`]).
fn round_keeps_its_promise(
    rules: crate::Rules,
    board: &crate::Board,
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
    rules: crate::Rules,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solve::{solve_layer, Quiet};
    use crate::Rules;

    /// Layers 0..=10 of every preset, solved in memory, with their rounds.
    fn solved(rules: Rules) -> (Vec<Vec<i8>>, Vec<Vec<u8>>) {
        let (mut values, mut rounds) = (Vec::new(), Vec::new());
        for n in 0..=10 {
            let layer = solve_layer(rules, n, &values, &Quiet);
            values.push(layer.values);
            rounds.push(layer.distances);
        }
        (values, rounds)
    }

    #[test]
    fn the_rounds_of_every_small_position_lead_best_play_out_of_the_layer() {
        for rules in Rules::ALL {
            let (values, rounds) = solved(rules);
            for n in 0..=10u32 {
                let check =
                    check_layer(rules, n, &values[..=n as usize], Some(&rounds[n as usize]));
                assert_eq!(check.mismatches, 0, "{rules} layer {n}");
                assert_eq!(check.distance_faults, 0, "{rules} layer {n}");
                assert!(rounds[n as usize].iter().all(|&r| r != DISTANCE_SATURATED));
            }
        }
    }

    #[test]
    fn a_wrong_round_is_caught() {
        let rules = Rules::AWARI;
        let (values, rounds) = solved(rules);
        let n = 10u32;
        // A won position that needs in-layer moves before it captures: round 1 or more.
        let at = (0..rounds[10].len())
            .find(|&i| values[10][i] > 0 && rounds[10][i] >= 2)
            .expect("layer 10 has won positions that take a few moves to convert");
        let mut wrong = rounds[10].clone();
        wrong[at] = 0;
        let check = check_layer(rules, n, &values, Some(&wrong));
        assert!(
            check.distance_faults >= 1,
            "a won position's round set to 0"
        );
        // And a draw with a round: also wrong.
        let draw = (0..rounds[10].len()).find(|&i| values[10][i] == 0).unwrap();
        let mut wrong = rounds[10].clone();
        wrong[draw] = 3;
        assert!(check_layer(rules, n, &values, Some(&wrong)).distance_faults >= 1);
    }
}
