//! Principal variations add up: for every position of the small layers, the seeds captured
//! along the line plus the end of the game (or an equal share at a repetition) give exactly
//! the stored value of the start. Value-only tables do not say which best move makes
//! progress; this is the test that the line the library prints really realises the value.

use awari::build::{build, BuildOptions};
use awari::probe::PvEnd;
use awari::{index, Database, Rules};

/// Layers 0..=6 (18,564 positions per preset); a whole PV per position is slow-ish, since
/// each may run a local search. Layers 0..=8 passed too (about 12 minutes).
const MAX_N: u32 = 6;

fn realised_value(db: &Database, board: &awari::Board) -> (i32, PvEnd) {
    let pv = db.principal_variation(board, 10_000).expect("pv");
    let mut diff = 0i32;
    for (ply, step) in pv.steps.iter().enumerate() {
        let c = i32::from(step.captured);
        diff += if ply % 2 == 0 { c } else { -c };
    }
    if let PvEnd::GameOver { value } = pv.end {
        // The end value belongs to the side to move in the last position.
        let v = i32::from(value);
        diff += if pv.steps.len().is_multiple_of(2) {
            v
        } else {
            -v
        };
    }
    (diff, pv.end)
}

fn check(rules: Rules) {
    let dir = tempfile::tempdir().expect("temp dir");
    let opts = BuildOptions::new(dir.path(), rules, MAX_N);
    build(&opts, &awari::solve::Quiet).expect("build");
    let db = Database::open(dir.path(), rules).expect("open");
    let mut bad = Vec::new();
    let mut total = 0u64;
    for n in 0..=MAX_N {
        for (_, board) in index::walk(n, 0, index::size(n)) {
            total += 1;
            let value = i32::from(db.value(&board).expect("value"));
            let (got, end) = realised_value(&db, &board);
            if got != value || matches!(end, PvEnd::Limit) {
                bad.push(format!(
                    "{board}: value {value:+}, line gives {got:+} ({end:?})"
                ));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{rules}: {} of {total} lines do not realise their value, e.g.\n{}",
        bad.len(),
        bad.iter().take(10).cloned().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn every_line_realises_its_value_awari() {
    check(Rules::AWARI);
}

#[test]
fn every_line_realises_its_value_abapa() {
    check(Rules::ABAPA);
}
