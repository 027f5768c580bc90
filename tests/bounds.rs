//! Proof of the bounds (`awari::solve::bounds`), by two independent programs that
//! share nothing with the solver beyond the rules (`Rules::turn`, `Board`):
//!
//! * a brute-force search of the *real* game, in which the first repetition of a position
//!   (or, in a second run, the third occurrence) ends the game with each side keeping the
//!   seeds of its own row: the result depends on the path, and it must lie within
//!   `[low, high]` for every position of the smallest layers;
//! * a slow, simple solver of the bound semantics, written from the definition by another
//!   route (the antagonist's Büchi game, a greatest fixpoint of least fixpoints, by whole-
//!   graph sweeps, every threshold from scratch), which must agree with the solver on every
//!   position of layers `0..=8` for every preset.
//!
//! Plus the local checks `verify` makes: `low ≤ high`, and each bound is the best over the
//! moves of the matching bound of the child.

use awari::index;
use awari::solve::bounds::{solve_all_bounds, BoundsLayer};
use awari::{Board, Rules, Turn};
use std::collections::HashMap;

mod common;
use common::boards_of_layer;
use common::real_game::{own_row, RealGame};

fn pair(layers: &[BoundsLayer], pits: &[u8; 12]) -> (i32, i32) {
    let b = Board::new(*pits).unwrap();
    let l = &layers[b.seeds() as usize];
    let i = index::rank(&b) as usize;
    (i32::from(l.low[i]), i32::from(l.high[i]))
}

fn check_real_game(rules: Rules, max_n: u32, ends_at: usize) {
    let layers = solve_all_bounds(rules, max_n);
    let mut game = RealGame::new(rules, ends_at);
    for n in 0..=max_n {
        let started = std::time::Instant::now();
        for pits in boards_of_layer(n) {
            let (low, high) = pair(&layers, &pits);
            assert!(
                game.at_least(pits, low),
                "{rules}, {pits:?}: the real game (ends at occurrence {ends_at}) scores below low = {low}"
            );
            assert!(
                !game.at_least(pits, high + 1),
                "{rules}, {pits:?}: the real game (ends at occurrence {ends_at}) scores above high = {high}"
            );
        }
        eprintln!(
            "{rules} layer {n} (ends at occurrence {ends_at}): {:?}",
            started.elapsed()
        );
    }
}

/// Layers whose every position is searched exhaustively, first repetition ending the game.
const REAL_GAME_LAYERS: u32 = 3;

#[test]
fn real_game_first_repetition_lies_within_bounds() {
    for rules in Rules::ALL {
        check_real_game(rules, REAL_GAME_LAYERS, 2);
    }
}

#[test]
fn real_game_third_occurrence_lies_within_bounds() {
    for rules in Rules::ALL {
        check_real_game(rules, 2, 3);
    }
}

// ---------------------------------------------------------------------------------------
// A slow, simple solver of the bound semantics.

/// The bound pairs of layer `n` by the antagonist's Büchi game, given the lower layers'
/// pairs by board.
///
/// Nodes are (position, who moves): `(p, 0)` the protagonist, `(p, 1)` the antagonist. The
/// antagonist wins threshold `d` if the play takes an exit paying the protagonist `< d`
/// (from `(p, 0)`: `captured − high(child)`; from `(p, 1)`: `low(child) − captured`; a
/// finished game pays its end value, negated at `(p, 1)`), or visits nodes of weight `< d`
/// infinitely often (weight of `(p, 0)`: own-row difference; of `(p, 1)`: its negation).
/// His winning region is `νZ. μY. (Bad ∩ Cpre(Z)) ∪ Cpre(Y)`, where `Cpre(X)` holds the
/// antagonist nodes with a bad exit or a successor in `X`, and the protagonist nodes with
/// every exit bad and every successor in `X`. `low(p)` is the largest `d` the antagonist does
/// not win at `(p, 0)`, `high(p)` minus the same at `(p, 1)`.
fn slow_layer(
    rules: Rules,
    n: u32,
    lower: &[HashMap<[u8; 12], (i32, i32)>],
) -> HashMap<[u8; 12], (i32, i32)> {
    let boards = boards_of_layer(n);
    let at: HashMap<[u8; 12], usize> = boards.iter().enumerate().map(|(i, b)| (*b, i)).collect();
    let count = boards.len();
    // Per node: exits as payoffs to the protagonist, successors, weight.
    let mut exits: Vec<Vec<i32>> = vec![Vec::new(); 2 * count];
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); 2 * count];
    let mut weight = vec![0i32; 2 * count];
    for (p, pits) in boards.iter().enumerate() {
        weight[2 * p] = own_row(pits);
        weight[2 * p + 1] = -own_row(pits);
        match rules.turn(&Board::new(*pits).unwrap()) {
            Turn::GameOver { value } => {
                exits[2 * p].push(i32::from(value));
                exits[2 * p + 1].push(-i32::from(value));
            }
            Turn::Moves(moves) => {
                for m in moves.iter() {
                    let child = *m.child.pits();
                    let c = i32::from(m.captured);
                    if m.captured == 0 {
                        succ[2 * p].push(2 * at[&child] + 1);
                        succ[2 * p + 1].push(2 * at[&child]);
                    } else {
                        let (low, high) = lower[m.child.seeds() as usize][&child];
                        exits[2 * p].push(c - high);
                        exits[2 * p + 1].push(low - c);
                    }
                }
            }
        }
    }
    let nn = n as i32;
    let mut val = vec![-nn; 2 * count];
    for d in -nn + 1..=nn {
        let cpre = |v: usize, x: &[bool]| -> bool {
            if v % 2 == 1 {
                exits[v].iter().any(|&e| e < d) || succ[v].iter().any(|&u| x[u])
            } else {
                exits[v].iter().all(|&e| e < d) && succ[v].iter().all(|&u| x[u])
            }
        };
        let mut z = vec![true; 2 * count];
        loop {
            let mut y = vec![false; 2 * count];
            let mut forward = true;
            loop {
                let mut changed = false;
                let mut visit = |v: usize, y: &mut Vec<bool>| {
                    if !y[v] && (weight[v] < d && cpre(v, &z) || cpre(v, y)) {
                        y[v] = true;
                        changed = true;
                    }
                };
                // Sweeps alternate direction, so chains in either order settle quickly.
                if forward {
                    (0..2 * count).for_each(|v| visit(v, &mut y));
                } else {
                    (0..2 * count).rev().for_each(|v| visit(v, &mut y));
                }
                forward = !forward;
                if !changed {
                    break;
                }
            }
            if y == z {
                break;
            }
            z = y;
        }
        for v in 0..2 * count {
            if !z[v] {
                val[v] = d;
            }
        }
    }
    boards
        .iter()
        .enumerate()
        .map(|(p, b)| (*b, (val[2 * p], -val[2 * p + 1])))
        .collect()
}

#[test]
fn slow_solver_agrees_on_layers_up_to_8() {
    const MAX_N: u32 = 8;
    // One thread a preset: the slow solver is slow.
    std::thread::scope(|scope| {
        for rules in Rules::ALL {
            scope.spawn(move || slow_check(rules, MAX_N));
        }
    });
}

fn slow_check(rules: Rules, max_n: u32) {
    {
        let layers = solve_all_bounds(rules, max_n);
        let mut slow: Vec<HashMap<[u8; 12], (i32, i32)>> = Vec::new();
        for n in 0..=max_n {
            let layer = slow_layer(rules, n, &slow);
            for (pits, &(low, high)) in &layer {
                assert_eq!(
                    pair(&layers, pits),
                    (low, high),
                    "{rules}, layer {n}, {pits:?}: solver (left) and slow solver (right) differ"
                );
            }
            slow.push(layer);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Local consistency, as `verify` checks it.

#[test]
fn pairs_are_ordered_and_locally_consistent() {
    for rules in Rules::ALL {
        let layers = solve_all_bounds(rules, 12);
        let mut exact = 0u64;
        let mut total = 0u64;
        for n in 0..=12u32 {
            for (i, b) in index::walk(n, 0, index::size(n)) {
                let (low, high) = pair(&layers, b.pits());
                assert_eq!(index::rank(&b), i);
                assert!(low <= high, "{rules} {b}: low {low} > high {high}");
                let (want_low, want_high) = match rules.turn(&b) {
                    Turn::GameOver { value } => (i32::from(value), i32::from(value)),
                    Turn::Moves(moves) => moves.iter().fold((i32::MIN, i32::MIN), |(l, h), m| {
                        let (cl, ch) = pair(&layers, m.child.pits());
                        let c = i32::from(m.captured);
                        (l.max(c - ch), h.max(c - cl))
                    }),
                };
                assert_eq!((low, high), (want_low, want_high), "{rules} {b}");
                total += 1;
                exact += u64::from(low == high);
            }
        }
        // Cycles are real at these sizes: some positions must have a strict range.
        assert!(
            exact < total,
            "{rules}: every position exact up to 12 seeds"
        );
    }
}

/// The passes run on many threads with compare-and-swap updates in whatever order the
/// threads take; the fixpoint, and so every byte, must not depend on it.
#[test]
fn one_thread_and_four_give_the_same_pairs() {
    let solve = |threads: usize, rules: Rules| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool")
            .install(|| solve_all_bounds(rules, 12))
    };
    for rules in Rules::ALL {
        assert!(solve(1, rules) == solve(4, rules), "{rules}");
    }
}

// ---------------------------------------------------------------------------------------
// The tables on disk: build, resume, probe, verify, and kinds that cannot be mixed up.

mod files {
    use super::*;
    use awari::build::{build, BuildOptions, LayerReport, Tables};
    use awari::solve::Quiet;
    use awari::store::{self, LayerFile, TableKind, WriteOptions};
    use awari::verify::{verify_bounds, verify_bounds_sampled};
    use awari::BoundsDatabase;

    fn options(db: &std::path::Path, max_seeds: u32) -> BuildOptions {
        BuildOptions {
            threads: Some(2),
            write: WriteOptions {
                block_size: 1000,
                zstd_level: 3,
                ..WriteOptions::default()
            },
            tables: Tables::Bounds,
            ..BuildOptions::new(db, Rules::ABAPA, max_seeds)
        }
    }

    fn build_bounds(opts: &BuildOptions) -> Vec<LayerReport> {
        build(opts, &Quiet).unwrap()
    }

    #[test]
    fn build_probe_verify_resume_and_kinds() {
        const TOP: u32 = 7;
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path();
        let reports = build_bounds(&options(db, TOP));
        assert!(reports.iter().all(|r| r.built));
        let solved = solve_all_bounds(Rules::ABAPA, TOP);

        // Every stored pair is the solver's, and the best moves maximise low, then high.
        let bdb = BoundsDatabase::open(db, Rules::ABAPA).unwrap();
        assert_eq!(bdb.complete_up_to(), Some(TOP));
        for n in 0..=TOP {
            let exact = solved[n as usize]
                .low
                .iter()
                .zip(&solved[n as usize].high)
                .filter(|(l, h)| l == h)
                .count() as u64;
            assert_eq!(reports[n as usize].exact, Some(exact));
            for (i, b) in index::walk(n, 0, index::size(n)) {
                let got = bdb.bounds(&b).unwrap();
                assert_eq!(
                    (got.low, got.high),
                    (
                        solved[n as usize].low[i as usize],
                        solved[n as usize].high[i as usize]
                    )
                );
                let moves = bdb.moves_with_bounds(&b).unwrap();
                let best = bdb.best_moves(&b).unwrap();
                if let Some(top) = moves.iter().map(|m| (m.low, m.high)).max() {
                    assert!(best.iter().all(|m| (m.low, m.high) == top));
                    assert_eq!(got.low, top.0);
                    assert_eq!(got.high, moves.iter().map(|m| m.high).max().unwrap());
                }
            }
        }
        let checks = verify_bounds(&bdb, 0, TOP, |_| {}).unwrap();
        assert!(checks.iter().all(|c| c.mismatches == 0));

        // Resume: remove the top layer's high file (the completion mark); only it is rebuilt,
        // to the same bytes.
        let root = store::bounds_dir(db);
        let high = store::table_path(&root, Rules::ABAPA, TOP, TableKind::BoundsHigh);
        let before = std::fs::read(&high).unwrap();
        std::fs::remove_file(&high).unwrap();
        let again = build_bounds(&options(db, TOP));
        let built: Vec<u32> = again.iter().filter(|r| r.built).map(|r| r.seeds).collect();
        assert_eq!(built, vec![TOP]);
        assert_eq!(std::fs::read(&high).unwrap(), before);

        // A low file is not a high file, and neither is a values file.
        let low = store::table_path(&root, Rules::ABAPA, TOP, TableKind::BoundsLow);
        assert!(LayerFile::open_kind(&low, Rules::ABAPA, TOP, TableKind::BoundsHigh).is_err());
        assert!(LayerFile::open_kind(&low, Rules::ABAPA, TOP, TableKind::Values).is_err());
        assert!(LayerFile::open_kind(&low, Rules::ABAPA, TOP, TableKind::BoundsLow).is_ok());

        // A damaged pair is reported by verify.
        let mut bytes = std::fs::read(&low).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x40;
        std::fs::write(&low, &bytes).unwrap();
        let bdb = BoundsDatabase::open(db, Rules::ABAPA).unwrap();
        assert!(verify_bounds(&bdb, 0, TOP, |_| {}).is_err());
    }

    /// The sampled check of the bounds: a sample at least a layer's size is the whole
    /// check, figure for figure; a smaller one checks that many positions; and both find
    /// pairs planted wrong (low lowered to `−n` at every 16th position where it was
    /// higher, the header's histogram kept true so that only the moves can tell).
    #[test]
    fn a_sampled_check_is_the_whole_one_or_finds_planted_pairs() {
        const TOP: u32 = 8;
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path();
        build_bounds(&options(db, TOP));
        let bdb = BoundsDatabase::open(db, Rules::ABAPA).unwrap();
        let whole = verify_bounds(&bdb, 0, TOP, |_| {}).unwrap();
        let mut heard = Vec::new();
        let sampled =
            verify_bounds_sampled(&bdb, 0, TOP, index::size(TOP), |c| heard.push(c.seeds)).unwrap();
        assert_eq!(heard, (0..=TOP).collect::<Vec<_>>());
        for (w, s) in whole.iter().zip(&sampled) {
            assert_eq!(
                (w.positions, w.exact, w.mismatches),
                (s.positions, s.exact, s.mismatches)
            );
            assert_eq!(w.mismatches, 0);
        }
        let half = index::size(TOP) / 2;
        let part = verify_bounds_sampled(&bdb, TOP, TOP, half, |_| {}).unwrap();
        assert_eq!((part[0].positions, part[0].mismatches), (half, 0));
        assert!(part[0].exact <= whole[TOP as usize].exact);

        // Plant wrong lows in the top layer.
        let root = store::bounds_dir(db);
        let low_path = store::table_path(&root, Rules::ABAPA, TOP, TableKind::BoundsLow);
        let file =
            LayerFile::open_kind(&low_path, Rules::ABAPA, TOP, TableKind::BoundsLow).unwrap();
        let mut low = file.read_all().unwrap();
        drop(file);
        let floor = -(TOP as i8);
        let mut planted = 0;
        for i in (0..low.len()).step_by(16) {
            if low[i] > floor {
                low[i] = floor;
                planted += 1;
            }
        }
        assert!(planted > 100, "{planted}");
        std::fs::remove_file(&low_path).unwrap();
        let bytes: Vec<u8> = low.iter().map(|&v| v as u8).collect();
        store::write_table(
            &root,
            Rules::ABAPA,
            TableKind::BoundsLow,
            &bytes,
            store::LayerSummary::from_values(TOP, &low),
            WriteOptions::default(),
        )
        .unwrap();
        let bdb = BoundsDatabase::open(db, Rules::ABAPA).unwrap();
        let whole = verify_bounds(&bdb, TOP, TOP, |_| {}).unwrap();
        // A lowered low is wrong at its own position (and may make a parent's high wrong
        // in the layer above, which is not built).
        assert!(
            whole[0].mismatches >= planted,
            "{} < {planted}",
            whole[0].mismatches
        );
        let part = verify_bounds_sampled(&bdb, TOP, TOP, half, |_| {}).unwrap();
        let found = part[0].mismatches;
        // About half of them, in a sample of half the layer.
        assert!(
            found > planted / 4 && found < whole[0].mismatches,
            "{found} of {planted}"
        );
        assert!(!part[0].examples.is_empty());
    }
}

// ---------------------------------------------------------------------------------------
// The command line.

mod cli {
    use super::*;
    use assert_cmd::Command;

    fn awari() -> Command {
        Command::cargo_bin("awari").unwrap()
    }

    #[test]
    fn build_probe_batch_json_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().to_str().unwrap().to_string();
        let args = [
            "--cycles",
            "bounds",
            "--rules",
            "abapa",
            "--db",
            db.as_str(),
        ];
        awari()
            .args(["build", "--max-seeds", "6", "-q"])
            .args(args)
            .assert()
            .success();
        let layers = solve_all_bounds(Rules::ABAPA, 6);
        let board = "1 0 0 2 0 0 1 0 2 0 0 0";
        let (low, high) = pair(&layers, &board.parse::<Board>().unwrap().pits().clone());

        // Batch: low and high first.
        let out = awari()
            .args(["probe", "--batch"])
            .args(args)
            .write_stdin(format!("{board}\n"))
            .assert()
            .success();
        let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
        let fields: Vec<&str> = text.split_whitespace().collect();
        assert_eq!(fields[..2], [low.to_string(), high.to_string()]);

        // A line that is not UTF-8 is an error for that line alone: the batch goes on, one
        // output line per input line, and the exit code says a line failed.
        let mut input = format!("{board}\n").into_bytes();
        input.extend_from_slice(b"\xff\xfe 1 2\n\n");
        input.extend_from_slice(format!("{board}\n").as_bytes());
        let out = awari()
            .args(["probe", "--batch"])
            .args(args)
            .write_stdin(input)
            .assert()
            .failure();
        let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert_eq!(lines[0], lines[3]);
        assert!(lines[0].starts_with(&format!("{low} {high} ")), "{text}");
        assert!(
            lines[1].starts_with("error: line 2: ") && lines[1].contains("not UTF-8"),
            "{text}"
        );
        assert_eq!(lines[2], "");
        // The same with --json: every line parses, the bad one as {"line", "error"}.
        let mut input = b"\xff\n".to_vec();
        input.extend_from_slice(format!("{board}\n").as_bytes());
        let out = awari()
            .args(["probe", "--batch", "--json"])
            .args(args)
            .write_stdin(input)
            .assert()
            .failure();
        let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
        let json: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(json.len(), 2, "{text}");
        assert_eq!(json[0]["line"], 1);
        assert_eq!(json[1]["low"], low);

        // JSON: low, high, exact, moves with pit, captured, low, high.
        let out = awari()
            .args(["probe", "--json", board])
            .args(args)
            .assert()
            .success();
        let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        assert_eq!(v["low"], low);
        assert_eq!(v["high"], high);
        assert_eq!(v["exact"], low == high);
        let b: Board = board.parse().unwrap();
        let moves = v["moves"].as_array().unwrap();
        assert_eq!(moves.len(), Rules::ABAPA.legal_moves(&b).len());
        for (m, want) in moves.iter().zip(Rules::ABAPA.legal_moves(&b).iter()) {
            let (cl, ch) = pair(&layers, want.child.pits());
            let c = i32::from(want.captured);
            assert_eq!(m["pit"], want.pit);
            assert_eq!(m["captured"], want.captured);
            assert_eq!(
                (m["low"].as_i64().unwrap(), m["high"].as_i64().unwrap()),
                (i64::from(c - ch), i64::from(c - cl))
            );
        }

        // The cycle rule's own name still selects the bounds: the same answer.
        let own_row: Vec<&str> = args
            .iter()
            .map(|&a| if a == "bounds" { "own-row" } else { a })
            .collect();
        let again = awari()
            .args(["probe", "--json", board])
            .args(&own_row)
            .assert()
            .success();
        assert_eq!(again.get_output().stdout, out.get_output().stdout);

        // Verify passes; a layer not built names the command that builds it.
        awari().arg("verify").args(args).assert().success();
        let out = awari()
            .args(["probe", "1 1 1 1 1 1 1 1 1 1 1 1"])
            .args(args)
            .assert()
            .failure();
        let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert!(
            err.starts_with("error: ") && err.contains("--cycles bounds"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1);

        // A build refused before any work: its whole stderr.
        let refused = |extra: &[&str]| {
            let out = awari()
                .arg("build")
                .args(extra)
                .args(args)
                .assert()
                .failure();
            String::from_utf8(out.get_output().stderr.clone()).unwrap()
        };
        // Above the solver's 32-bit lists.
        assert_eq!(
            refused(&["--max-seeds", "26"]).trim_end(),
            "error: layer 26 is beyond what this solver builds (at most 25 seeds)"
        );
        // The exact build's pass options are refused, not silently ignored.
        for flags in [
            &["--lean"][..],
            &["--in-memory"],
            &["--mpi"],
            &["--scratch", "/tmp"],
            &["--lean-buffer-mib", "64"],
            &["--checkpoint-minutes", "1"],
        ] {
            assert_eq!(
                refused(&[&["--max-seeds", "7"], flags].concat()).trim_end(),
                format!(
                    "error: {} is for the values' and the own-row values' builds; the bounds' build has one pass, in memory",
                    flags[0]
                )
            );
        }
    }
}
