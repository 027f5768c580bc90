//! An independent, deliberately naive solver, used to prove `awari::solve::solve_all` exact.
//!
//! It shares nothing with the real solver beyond the rules (`Rules::turn`, `Move`, `Board`):
//! no `awari::index` (a layer is enumerated by its own recursion and indexed by a
//! `HashMap<[u8; 12], usize>`), no un-sowing, no predecessor lists, no counters. It only
//! plays moves forward and sweeps whole layers until nothing changes.
//!
//! # Why the method is exact
//!
//! `value(P) = max over legal moves m of (m.captured − value(m.child))`; a finished game has
//! the value the rules give it; endless play (cycling for ever without a capture) scores 0.
//! A capture lowers the seed count, so within layer `n` every capturing move is an *exit*
//! whose value `captured − value(child)` is already known from the lower layers, and every
//! non-capturing move stays in the layer. Inside a layer the game is therefore a graph game
//! whose only payoffs sit on exits and finished positions, and whose infinite plays pay 0.
//!
//! For a threshold `t ≥ 1`, infinite play (0) is neither `≥ t` nor `≤ −t`, so "the mover can
//! force a result `≥ t`" is a reachability game: the mover must *reach* an exit or end worth
//! `≥ t` (from its own point of view). Its winning region is the least fixpoint
//!
//! * `P ∈ W_t` iff P is over with value `≥ t`, or some exit of P is worth `≥ t`, or some
//!   in-layer child of P is in `L_t` (the opponent, to move there, gets `≤ −t` whatever it
//!   does, i.e. the mover gets `≥ t`);
//! * `P ∈ L_t` iff P is over with value `≤ −t`, or P has moves, every exit is worth `≤ −t` and
//!   every in-layer child is in `W_t` (the opponent can force `≥ t` after any move).
//!
//! Least fixpoints matter: a position that can only be "held" in the set by going round a
//! cycle never reaches anything, and infinite play is worth 0 < t. Reachability games are
//! determined, so outside `W_t` the opponent can hold the mover to `≤ t − 1`, and outside
//! `L_t` the mover can secure `≥ −t + 1`. Hence, with integer values:
//! `value(P) = max{t : P ∈ W_t}` if P ∈ W_1, else `−max{t : P ∈ L_t}` if P ∈ L_1, else 0
//! (neither side can force a nonzero result: the mover secures `≥ 0`, the opponent `≤ 0`).
//! `W_1` and `L_1` are disjoint, and `W_t ⊆ W_1`, `L_t ⊆ L_1`, so the three cases never clash.
//!
//! Each least fixpoint is computed by Gauss–Seidel sweeps from the empty set: membership is
//! only ever added, each addition is justified by members already found (so the set stays
//! inside the least fixpoint), and a sweep that adds nothing proves a fixpoint, which then
//! is the least one. Nothing is carried over from one `t` to the next: the naive way.

use awari::{Board, Rules, Turn};
use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::Instant;

mod common;
use common::boards_of_layer;

/// Layers the exhaustive comparison covers. Layers `0..=10` (646,646 positions per preset)
/// take about 3 s of naive solving per preset at opt-level 3 on the 2-core dev machine;
/// `0..=12` (2,704,156 per preset) take 14–17 s, and are needed anyway for the value of the
/// 12-seed opening, so every position of every layer up to 12 is compared.
const MAX_N: u32 = 12;

/// One solved layer of the naive solver.
pub struct NaiveLayer {
    pub boards: Vec<[u8; 12]>,
    pub index: HashMap<[u8; 12], usize>,
    pub values: Vec<i8>,
}

impl NaiveLayer {
    pub fn value_of(&self, pits: &[u8; 12]) -> i8 {
        self.values[self.index[pits]]
    }
}

/// Solves layer `n` given the solved layers `0..n` (`lower[m]` is layer `m`).
pub fn naive_layer(rules: Rules, n: u32, lower: &[NaiveLayer]) -> NaiveLayer {
    assert_eq!(lower.len(), n as usize);
    let boards = boards_of_layer(n);
    let index: HashMap<[u8; 12], usize> = boards.iter().enumerate().map(|(i, b)| (*b, i)).collect();
    assert_eq!(index.len(), boards.len(), "layer {n}: duplicate boards");
    let count = boards.len();

    // Per position: the end value if the game is over, else the best exit (only the best one
    // matters: "some exit ≥ t" and "every exit ≤ −t" both read the maximum) and the in-layer
    // children, stored as index lists.
    let mut over: Vec<Option<i8>> = vec![None; count];
    let mut best_exit: Vec<Option<i8>> = vec![None; count];
    let mut child_start: Vec<u32> = Vec::with_capacity(count + 1);
    let mut children: Vec<u32> = Vec::with_capacity(count * 4);
    for (p, pits) in boards.iter().enumerate() {
        child_start.push(children.len() as u32);
        let board = Board::new(*pits).expect("a valid board");
        match rules.turn(&board) {
            Turn::GameOver { value } => over[p] = Some(value),
            Turn::Moves(list) => {
                assert!(!list.is_empty(), "{board}: Moves with no move");
                for m in list.iter() {
                    let child = *m.child.pits();
                    let child_seeds = m.child.seeds();
                    assert_eq!(
                        child_seeds + u32::from(m.captured),
                        n,
                        "{board}: move from pit {} loses or makes seeds",
                        m.pit
                    );
                    if m.captured == 0 {
                        children.push(index[&child] as u32);
                    } else {
                        let exit = m.captured as i8 - lower[child_seeds as usize].value_of(&child);
                        best_exit[p] = Some(best_exit[p].map_or(exit, |e| e.max(exit)));
                    }
                }
            }
        }
    }
    child_start.push(children.len() as u32);
    let kids = |p: usize| &children[child_start[p] as usize..child_start[p + 1] as usize];

    let mut values = vec![0i8; count];
    let mut decided = vec![false; count];
    let mut win = vec![false; count];
    let mut lose = vec![false; count];
    for t in (1..=n as i8).rev() {
        win.iter_mut().for_each(|w| *w = false);
        lose.iter_mut().for_each(|l| *l = false);
        loop {
            let mut changed = false;
            for p in 0..count {
                if !win[p] {
                    let w = match over[p] {
                        Some(v) => v >= t,
                        None => {
                            best_exit[p].is_some_and(|e| e >= t)
                                || kids(p).iter().any(|&c| lose[c as usize])
                        }
                    };
                    if w {
                        win[p] = true;
                        changed = true;
                    }
                }
                if !lose[p] {
                    let l = match over[p] {
                        Some(v) => v <= -t,
                        None => {
                            best_exit[p].is_none_or(|e| e <= -t)
                                && kids(p).iter().all(|&c| win[c as usize])
                        }
                    };
                    if l {
                        lose[p] = true;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        for p in 0..count {
            assert!(
                !(win[p] && lose[p]),
                "layer {n}, t = {t}: {:?} both forced win and forced loss",
                boards[p]
            );
            if decided[p] {
                // Membership of the top threshold found stays for every lower t, on the
                // same side.
                assert!(
                    if values[p] > 0 { win[p] } else { lose[p] },
                    "layer {n}, t = {t}: {:?} left its set",
                    boards[p]
                );
            } else if win[p] {
                values[p] = t;
                decided[p] = true;
            } else if lose[p] {
                values[p] = -t;
                decided[p] = true;
            }
        }
    }
    NaiveLayer {
        boards,
        index,
        values,
    }
}

/// Layers `0..=max_n`, solved naively.
pub fn naive_solve(rules: Rules, max_n: u32) -> Vec<NaiveLayer> {
    let mut layers = Vec::new();
    for n in 0..=max_n {
        let layer = naive_layer(rules, n, &layers);
        layers.push(layer);
    }
    layers
}

/// Per-layer histogram of values: `hist[v + n]` is the number of positions of layer `n`
/// whose value is `v`, for `v` in `−n..=n`. Meant to be compared with `awari stats`
/// (wins = positive values, draws = 0, losses = negative values, for the side to move).
pub fn value_histogram(n: u32, values: &[i8]) -> Vec<u64> {
    let n = n as i32;
    let mut hist = vec![0u64; (2 * n + 1) as usize];
    for &v in values {
        let v = i32::from(v);
        assert!((-n..=n).contains(&v), "value {v} outside -{n}..={n}");
        hist[(v + n) as usize] += 1;
    }
    hist
}

/// Wins, draws and losses for the side to move, from a histogram of `value_histogram`.
pub fn wins_draws_losses(hist: &[u64]) -> (u64, u64, u64) {
    let n = (hist.len() - 1) / 2;
    let losses = hist[..n].iter().sum();
    let draws = hist[n];
    let wins = hist[n + 1..].iter().sum();
    (wins, draws, losses)
}

fn preset_slot(rules: Rules) -> usize {
    Rules::ALL
        .iter()
        .position(|r| *r == rules)
        .expect("a preset")
}

/// The naive solution of layers `0..=MAX_N`, computed once per preset per test binary.
fn naive(rules: Rules) -> &'static [NaiveLayer] {
    static CACHE: [OnceLock<Vec<NaiveLayer>>; 3] =
        [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    CACHE[preset_slot(rules)].get_or_init(|| {
        let start = Instant::now();
        let layers = naive_solve(rules, MAX_N);
        eprintln!(
            "naive solver, {rules}, layers 0..={MAX_N}: {:.2?}",
            start.elapsed()
        );
        layers
    })
}

/// `awari::solve::solve_all(rules, MAX_N)`, computed once per preset per test binary.
fn solved(rules: Rules) -> &'static [Vec<i8>] {
    static CACHE: [OnceLock<Vec<Vec<i8>>>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    CACHE[preset_slot(rules)].get_or_init(|| {
        let start = Instant::now();
        let solved = awari::solve::solve_all(rules, MAX_N);
        eprintln!(
            "solve_all, {rules}, layers 0..={MAX_N}: {:.2?}",
            start.elapsed()
        );
        solved
    })
}

/// `C(n + 11, 11)` by the multiplicative formula, independently of `awari::index`.
fn layer_size(n: u32) -> u64 {
    (1..=11u64).fold(1, |acc, k| acc * (u64::from(n) + k) / k)
}

fn compare_with_solver(rules: Rules) {
    let naive = naive(rules);
    let solved = solved(rules);
    assert!(
        solved.len() > MAX_N as usize,
        "{rules}: solve_all returned {} layers, expected at least {}",
        solved.len(),
        MAX_N + 1
    );
    let mut mismatches = Vec::new();
    let mut total = 0usize;
    for (n, layer) in naive.iter().enumerate() {
        assert_eq!(
            solved[n].len(),
            layer.boards.len(),
            "{rules}: layer {n} has {} values, expected {}",
            solved[n].len(),
            layer.boards.len()
        );
        for (pits, &expected) in layer.boards.iter().zip(&layer.values) {
            let board = Board::new(*pits).unwrap();
            let got = solved[n][awari::index::rank(&board) as usize];
            if got != expected {
                total += 1;
                if mismatches.len() < 20 {
                    mismatches.push(format!(
                        "  layer {n}: [{board}] naive {expected}, solve_all {got}"
                    ));
                }
            }
        }
    }
    assert!(
        total == 0,
        "{rules}: {total} positions differ (first {}):\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

#[test]
fn solver_matches_naive_awari() {
    compare_with_solver(Rules::AWARI);
}

#[test]
fn solver_matches_naive_abapa() {
    compare_with_solver(Rules::ABAPA);
}

#[test]
fn solver_matches_naive_grand_slam_captures() {
    compare_with_solver(Rules::GRAND_SLAM_CAPTURES);
}

/// The naive values satisfy the recurrence they were defined by: a finished game has its
/// end value, any other position the best of `captured − value(child)` over its moves. (Not
/// sufficient on its own — a cycle could hold any common value — but it catches a broken
/// fixpoint loop without trusting the real solver.)
#[test]
fn naive_values_satisfy_the_recurrence() {
    for rules in Rules::ALL {
        let naive = naive(rules);
        for (n, layer) in naive.iter().enumerate() {
            for (pits, &v) in layer.boards.iter().zip(&layer.values) {
                let board = Board::new(*pits).unwrap();
                let expected = match rules.turn(&board) {
                    Turn::GameOver { value } => value,
                    Turn::Moves(list) => list
                        .iter()
                        .map(|m| {
                            let c = m.child.seeds() as usize;
                            m.captured as i8 - naive[c].value_of(m.child.pits())
                        })
                        .max()
                        .unwrap(),
                };
                assert_eq!(v, expected, "{rules}, layer {n}: [{board}]");
            }
        }
    }
}

/// Values lie in `−n..=n`. Parity: "value ≡ n (mod 2) or value = 0" is FALSE, and this test
/// checks the true statement instead. Captures take seeds off the board, so a game that ends
/// (someone takes the rest) has captures summing to n and a difference ≡ n (mod 2). Endless
/// play leaves r seeds unshared, so the difference is ≡ n − r: the parity breaks exactly
/// when endless play leaves an odd number of seeds, and not only at 0 — capture 2, then
/// draw a 3-seed position, and a layer-5 position is worth ±2 (e.g. `0 0 0 0 0 1 0 0 0 1 2 1`
/// is −2 in every preset; the test prints how many such positions each preset has). A
/// position reached in endless play under perfect play has value 0, so r is an odd layer
/// holding a draw: r ≥ d, the smallest such layer (3 in every preset). Hence:
/// * every layer below d has exact parity (no exception, not even 0 in an odd layer);
/// * a value of the wrong parity has |value| ≤ n − d (at most n − r seeds were captured).
#[test]
fn naive_values_in_range_and_parity() {
    for rules in Rules::ALL {
        let naive = naive(rules);
        let d = naive
            .iter()
            .enumerate()
            .find(|(n, layer)| n % 2 == 1 && layer.values.contains(&0))
            .map(|(n, _)| n as i32)
            .expect("an odd layer with a draw");
        assert_eq!(d, 3, "{rules}: the first odd layer with a draw");
        let mut exceptions = 0usize;
        let mut examples = Vec::new();
        for (n, layer) in naive.iter().enumerate() {
            let n = n as i32;
            for (pits, &v) in layer.boards.iter().zip(&layer.values) {
                let v = i32::from(v);
                assert!(
                    (-n..=n).contains(&v),
                    "{rules}: {pits:?} value {v} outside ±{n}"
                );
                if (v - n).rem_euclid(2) != 0 {
                    assert!(n >= d, "{rules}: layer {n} below {d}: {pits:?} = {v}");
                    assert!(
                        v.abs() <= n - d,
                        "{rules}: layer {n}: {pits:?} = {v} breaks parity by more than \
                         endless play on {d} seeds allows"
                    );
                    exceptions += 1;
                    if v != 0 && examples.len() < 3 {
                        examples.push(format!("layer {n}: {pits:?} = {v}"));
                    }
                }
            }
        }
        eprintln!(
            "{rules}: {exceptions} positions of layers 0..={MAX_N} off the n mod 2 parity \
             (draws in odd layers included); nonzero examples: {examples:?}"
        );
    }
}

/// Per-layer histograms of the naive values (for comparison with `awari stats`): printed,
/// checked for size against C(n + 11, 11), and checked on layers 0..=2 against the counts of
/// the hand derivation in tests/hand_checked.rs.
#[test]
fn naive_histograms() {
    for rules in Rules::ALL {
        for (n, layer) in naive(rules).iter().enumerate() {
            let hist = value_histogram(n as u32, &layer.values);
            assert_eq!(hist.iter().sum::<u64>(), layer_size(n as u32));
            let (w, d, l) = wins_draws_losses(&hist);
            eprintln!("{rules} layer {n:>2}: wins {w:>7} draws {d:>7} losses {l:>7}  by value -{n}..={n}: {hist:?}");
        }
        let naive = naive(rules);
        // Layer 0: the empty board, 0. Layer 1: +1 for a seed in mover pits 0..=4, -1 otherwise.
        assert_eq!(value_histogram(0, &naive[0].values), vec![1]);
        assert_eq!(value_histogram(1, &naive[1].values), vec![7, 0, 5]);
        // Layer 2 (hand_checked.rs): 13 draws on the forced 12-ply cycle and the {0,5}/{1,5}
        // … see there; the 5-0 grand slam is the only position where the presets differ.
        let layer2 = if rules == Rules::ABAPA {
            vec![41, 0, 13, 0, 24]
        } else {
            vec![40, 0, 13, 0, 25]
        };
        assert_eq!(value_histogram(2, &naive[2].values), layer2, "{rules}");
    }
}

/// The standard opening with one seed per pit (12 seeds), by the naive solver, and the same
/// value from `solve_all`.
#[test]
fn opening_with_one_seed_per_pit() {
    let opening = [1u8; 12];
    for rules in Rules::ALL {
        let v = naive(rules)[12].value_of(&opening);
        eprintln!("{rules}: value of the opening 1 1 1 1 1 1 1 1 1 1 1 1 = {v}");
        let board = Board::new(opening).unwrap();
        assert_eq!(
            solved(rules)[12][awari::index::rank(&board) as usize],
            v,
            "{rules}: solve_all disagrees with the naive solver on the opening"
        );
    }
}

/// `awari stats --json` (the value distribution per layer) against the naive solver: for
/// every preset, build layers 0..=10 with the CLI, then every layer's histogram, wins, draws
/// and losses must equal the naive solver's, and the counts must add up to C(n+11, 11).
fn stats_match_naive(rules: Rules) {
    const STATS_N: u32 = 10;
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().to_str().expect("utf-8 path");
    let bin = assert_cmd::cargo::cargo_bin("awari");
    let status = std::process::Command::new(&bin)
        .args(["build", "-q", "--rules", rules.name(), "--db", db])
        .args(["--max-seeds", &STATS_N.to_string()])
        .output()
        .expect("run awari build");
    assert!(status.status.success(), "{status:?}");
    let out = std::process::Command::new(&bin)
        .args(["stats", "--json", "--rules", rules.name(), "--db", db])
        .output()
        .expect("run awari stats");
    assert!(out.status.success(), "{out:?}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stats --json parses");
    // Round trip: printing the parsed document and parsing it again gives the same value.
    let again: serde_json::Value =
        serde_json::from_str(&serde_json::to_string(&doc).expect("print")).expect("reparse");
    assert_eq!(doc, again);
    let layers = doc.as_array().expect("an array of layers");
    assert_eq!(layers.len(), STATS_N as usize + 1);
    let naive = naive(rules);
    for (n, layer) in layers.iter().enumerate() {
        let n32 = n as u32;
        assert_eq!(layer["seeds"], n as u64);
        let expected = value_histogram(n32, &naive[n].values);
        let hist = layer["histogram"].as_object().expect("histogram object");
        let mut got = vec![0u64; 2 * n + 1];
        for (key, count) in hist {
            let v: i32 = key.parse().expect("histogram keys are values");
            assert!(
                (-(n as i32)..=n as i32).contains(&v),
                "layer {n}: value {v}"
            );
            got[(v + n as i32) as usize] = count.as_u64().expect("count");
        }
        assert_eq!(got, expected, "{rules} layer {n} histogram");
        let total: u64 = got.iter().sum();
        assert_eq!(total, layer_size(n32), "layer {n}");
        assert_eq!(layer["positions"], layer_size(n32));
        let (w, d, l) = wins_draws_losses(&expected);
        assert_eq!(
            (
                layer["wins"].as_u64(),
                layer["draws"].as_u64(),
                layer["losses"].as_u64()
            ),
            (Some(w), Some(d), Some(l)),
            "{rules} layer {n}"
        );
    }
}

#[test]
fn stats_histograms_match_naive_awari() {
    stats_match_naive(Rules::AWARI);
}

#[test]
fn stats_histograms_match_naive_abapa() {
    stats_match_naive(Rules::ABAPA);
}

#[test]
fn stats_histograms_match_naive_grand_slam_captures() {
    stats_match_naive(Rules::GRAND_SLAM_CAPTURES);
}
