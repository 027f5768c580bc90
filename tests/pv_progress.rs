//! The principal variation makes progress: for every position of layers
//! 0..=8, and an evenly spaced sample of layers 9 and 10, whose value is not 0, perfect
//! play as `Database::principal_variation` plays it reaches a capture or the end of the
//! game; it never goes round in the starting layer while the value says a capture is
//! coming. And every step plays a best move: the step's value is the stored value of its
//! board and the value of the move it plays.
//!
//! (The speed of `pv` is measured by a benchmark, not here.)

mod common;

use awari::{Board, Database, Rules};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const TOP: u8 = 10;
const MAX_PLIES: usize = 500;

/// Layers 0..=TOP of `awari`, built with the CLI once per test binary.
fn db() -> &'static Path {
    static DB: OnceLock<PathBuf> = OnceLock::new();
    DB.get_or_init(|| {
        common::build_fixture(&common::scratch_root("awari-pv-progress-tests"), TOP.into())
    })
}

/// What is wrong with the principal variation of `board`, if anything.
fn check(db: &Database, rules: Rules, board: &Board) -> Result<(), String> {
    let value = db.value(board).map_err(|e| e.to_string())?;
    if value == 0 {
        return Ok(());
    }
    let pv = db
        .principal_variation(board, MAX_PLIES)
        .map_err(|e| e.to_string())?;
    let mut here = *board;
    let mut captured = false;
    for (ply, step) in pv.steps.iter().enumerate() {
        if step.board != here {
            return Err(format!(
                "ply {ply}: step board {} is not {here}",
                step.board
            ));
        }
        let stored = db.value(&step.board).map_err(|e| e.to_string())?;
        let played = rules
            .legal_moves(&step.board)
            .iter()
            .find(|m| m.pit == step.pit)
            .copied()
            .ok_or_else(|| format!("ply {ply}: pit {} is not a legal move", step.pit + 1))?;
        let move_value = i32::from(played.captured)
            - i32::from(db.value(&played.child).map_err(|e| e.to_string())?);
        if i32::from(step.value) != i32::from(stored) || move_value != i32::from(stored) {
            return Err(format!(
                "ply {ply} from {}: step value {}, stored value {stored}, the move played \
                 (pit {}) is worth {move_value}",
                step.board,
                step.value,
                step.pit + 1
            ));
        }
        if played.captured != step.captured {
            return Err(format!(
                "ply {ply}: step says it captures {}",
                step.captured
            ));
        }
        captured |= played.captured > 0;
        here = played.child;
    }
    if pv.last != here {
        return Err(format!("the last board {} is not {here}", pv.last));
    }
    let end = format!("{:?}", pv.end);
    if end.starts_with("GameOver") {
        Ok(())
    } else if end.starts_with("Repetition") && captured {
        // Perfect play may go round in a lower layer after a capture (a drawn remainder).
        Ok(())
    } else {
        Err(format!(
            "value {value}, the line ends in {end} after {} plies without a capture",
            pv.steps.len()
        ))
    }
}

/// Layers checked position by position; above them, an evenly spaced sample.
const EXHAUSTIVE: u8 = 8;
/// Positions sampled from each of the layers EXHAUSTIVE+1..=TOP.
const SAMPLE: usize = 1500;
/// A guard against a run that would take the suite hostage (before the distance tables,
/// `pv` spent seconds on some boards): past this, the test fails saying how far it got.
/// Not a speed test (the benchmark is); a correct, reasonably fast `pv` finishes in a small
/// fraction of it.
const GUARD: std::time::Duration = std::time::Duration::from_secs(90);

#[test]
fn every_principal_variation_of_a_decided_position_reaches_a_capture_or_the_end() {
    let rules = Rules::AWARI;
    let db = Database::open(db(), rules).unwrap();
    let started = std::time::Instant::now();
    let mut failures = Vec::new();
    let mut checked = 0usize;
    for n in 0..=TOP {
        let layer_started = std::time::Instant::now();
        let all = common::every_board(n);
        let boards: Vec<Board> = if n <= EXHAUSTIVE {
            all
        } else {
            let step = all.len().div_ceil(SAMPLE);
            all.into_iter().step_by(step).collect()
        };
        let halves: Vec<&[Board]> = boards.chunks(boards.len().div_ceil(2)).collect();
        let found: Vec<Vec<String>> = std::thread::scope(|s| {
            let handles: Vec<_> = halves
                .iter()
                .map(|part| {
                    let db = &db;
                    s.spawn(move || {
                        let mut errors = Vec::new();
                        for b in part.iter() {
                            if started.elapsed() > GUARD {
                                errors.push(format!("gave up: over {GUARD:?} in all"));
                                break;
                            }
                            if let Err(e) = check(db, rules, b) {
                                errors.push(format!("{b}: {e}"));
                                if errors.len() >= 5 {
                                    break;
                                }
                            }
                        }
                        errors
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let found: Vec<String> = found.into_iter().flatten().collect();
        eprintln!(
            "layer {n}: {} positions in {:.2?}, {} wrong",
            boards.len(),
            layer_started.elapsed(),
            found.len()
        );
        failures.extend(found);
        checked += boards.len();
        if started.elapsed() > GUARD {
            failures.push(format!(
                "stopped in layer {n}: the variations took over {GUARD:?}"
            ));
            break;
        }
    }
    assert!(
        failures.is_empty(),
        "{} problem(s) (at most 5 per half layer) in {checked} positions:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
