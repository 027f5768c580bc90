//! Every position of layers 0, 1 and 2 checked against values derived by hand.
//!
//! Nothing here comes from running a solver: the expected values are the function
//! [`by_hand`], and the argument for each class of positions is written next to it. The
//! positions are enumerated by nested loops, so every one of the 1 + 12 + 78 positions is
//! checked, and the class counts are checked too (so no class can silently be empty).
//!
//! Notation: pits 0..=5 are the mover's, 6..=11 the opponent's, sowing 0→1→…→11→0. In
//! layer 2 with one seed on each side, `a` is the pit of the mover's seed (0..=5) and `b` the
//! opponent's seed counted in the opponent's row (the seed is in pit `6 + b`).
//!
//! Facts used throughout (src/rules.rs; docs/overview.md, "The game and the rules"):
//! * A side with no seeds cannot move: the game is over and the other side takes the rest.
//! * Under `awari`, a move that leaves the opponent with no seeds is illegal unless every
//!   move does; then it is played, and the starved opponent cannot move and loses the rest.
//! * Under `abapa` and `grand-slam-captures`, if the opponent is empty the mover must play a
//!   move that reaches it; with no such move the game ends and the mover takes its seeds.
//! * With at most 2 seeds on the board a capture needs one seed landing on an opponent pit
//!   that holds exactly 1, making 2. That only happens in layer 2 with a = 5, b = 0 (below).
//!
//! The value of the 12-seed opening `1 1 1 1 1 1 1 1 1 1 1 1` is not derived by hand: it is
//! computed by the independent naive solver in tests/naive_solver.rs
//! (`opening_with_one_seed_per_pit`) and compared with `solve_all` there.

use awari::{Board, Rules};

/// The hand-derived value of a position of layer 0, 1 or 2 under `rules`.
fn by_hand(rules: Rules, pits: &[u8; 12]) -> i8 {
    let n: u8 = pits.iter().sum();
    let mover: u8 = pits[..6].iter().sum();
    let opponent: u8 = pits[6..].iter().sum();
    match n {
        // Layer 0: the empty board. The mover has no seeds, the game is over, and there is
        // nothing left to take: 0.
        0 => 0,
        1 => layer_one(pits),
        2 => {
            if mover == 0 {
                // Class A (21 positions): the mover has no seeds. Game over, the opponent
                // takes both: −2, under every rule set.
                -2
            } else if opponent == 0 {
                both_with_mover(pits)
            } else {
                let a = pits[..6].iter().position(|&s| s == 1).unwrap();
                let b = pits[6..].iter().position(|&s| s == 1).unwrap();
                one_each(rules, a, b)
            }
        }
        _ => unreachable!("only layers 0..=2 are derived by hand"),
    }
}

/// Layer 1 (12 positions), the same under every rule set. No capture is possible (a capture
/// needs 2 seeds in a pit).
///
/// * Seed in the opponent's row (pits 6..=11, 6 positions): the mover has no seeds, the
///   game is over, the opponent takes it: −1.
/// * Seed in mover pit p ≤ 4 (5 positions): its only move sows it into p + 1, still in the
///   mover's row. `awari`: that move starves the opponent but is the only move, so it is
///   played; the opponent then has no seeds, the game is over, the mover takes the seed:
///   +1. `abapa` / `grand-slam-captures`: the opponent is empty and no move reaches it, so
///   the game ends at once and the mover takes the seed on its side: +1.
/// * Seed in mover pit 5 (1 position): its only move puts the seed in opponent pit 6 (it
///   feeds, so it is legal everywhere; 1 seed, no capture). Now the opponent holds one seed
///   in its own pit 0 and the mover none: the previous case with the roles swapped, worth
///   +1 to the opponent: −1.
///
/// Histogram: +1 × 5, −1 × 7.
fn layer_one(pits: &[u8; 12]) -> i8 {
    let p = pits.iter().position(|&s| s == 1).unwrap();
    if p <= 4 {
        1
    } else {
        -1
    }
}

/// Layer 2, class B (21 positions): both seeds in the mover's row, the opponent empty.
/// Same values under every rule set. A move reaches the opponent's row only from pit 5
/// (1 seed, or 2 seeds) or from pit 4 holding 2 seeds; no capture is possible (the empty
/// opponent row gets at most 1 seed per pit).
///
/// * B1, nothing can feed (14 positions: single seeds in two distinct pits of 0..=4, 10;
///   both seeds in one pit 0..=3, 4). `awari`: every move starves, so any is played and the
///   opponent, still empty, loses both: +2. `abapa` / `grand-slam-captures`: the opponent
///   is empty and nothing feeds it: the game ends, the mover takes both: +2.
/// * B2, {i, 5} with i ≤ 4 (one seed in pit i, one in pit 5; 5 positions). The pit-i move
///   stays in the mover's row (starves, so illegal under `awari` since pit 5 feeds; not a
///   feeding move under the others): the move is forced, pit 5 → opponent pit 6. The
///   opponent then moves with its seed in its pit 0 and ours in pit i: one-each position
///   (a, b) = (0, i) seen by the opponent, worth V(0, i) to it (see [`one_each`]):
///   i = 0 or 1 lie on the forced cycle (V = 0), so {0,5} and {1,5} are 0; i = 2, 3, 4 have
///   b − a ≥ 2 (V = +2), so {2,5}, {3,5}, {4,5} are −2.
/// * B3, two seeds in pit 4: forced, sows pits 5 and 6. The opponent has its pit 0, we have
///   pit 5: (a, b) = (0, 5) for the opponent, b − a = 5 ≥ 2, +2 to it: −2.
/// * B4, two seeds in pit 5: forced, sows opponent pits 6 and 7 (1 each, no capture). The
///   opponent holds its pits 0 and 1 and we hold nothing: B1 for the opponent, +2 to it: −2.
fn both_with_mover(pits: &[u8; 12]) -> i8 {
    match (pits[4], pits[5]) {
        (2, 0) => -2, // B3
        (0, 2) => -2, // B4
        (_, 1) => {
            // B2: the other seed's pit i.
            let i = pits[..5].iter().position(|&s| s == 1).unwrap();
            if i <= 1 {
                0
            } else {
                -2
            }
        }
        _ => 2, // B1
    }
}

/// Layer 2, class C (36 positions): one seed each, the mover's in pit `a`, the opponent's in
/// pit `6 + b`.
///
/// While each side holds one seed every move is forced: the side to move advances its own
/// seed by one pit (legal everywhere: the other side keeps its seed, so nobody is starved,
/// and a seed landing in its own row captures nothing). Hence `(a, b) → (b, a + 1)` seen by
/// the next mover, for a ≤ 4. Something happens only when a seed is played from pit 5 and
/// crosses. The mover plays at plies 1, 3, 5, …, the opponent at 2, 4, 6, …; the mover's seed
/// crosses on its (6 − a)-th move (ply 11 − 2a), the opponent's on its (6 − b)-th (ply
/// 12 − 2b). So the mover's seed crosses first iff a ≥ b.
///
/// * a ≥ b: when the mover's seed crosses, the opponent's seed has made 5 − a steps and is
///   at c = b + 5 − a of its row.
///   - c = 0, i.e. (a, b) = (5, 0) (1 position): our seed lands on opponent pit 6, which
///     holds 1, making 2: a capture that leaves the opponent empty, a grand slam.
///     `awari`: it is the only move, so it is played and counts: +2, board empty (value
///     0): +2. `grand-slam-captures`: captures both: +2. `abapa`: captures nothing, the two
///     seeds stay in the opponent's pit 0 and we have none; the opponent's only move sows
///     its pits 1 and 2, which does not reach us, so the game ends and it takes its two
///     seeds: −2. This is the only layer-2 position where the presets differ.
///   - 1 ≤ c ≤ 4, i.e. 1 ≤ a − b ≤ 4 (14 positions): our seed lands in the opponent's pit 0
///     (empty, 1 seed, no capture). The opponent now holds both, in its pits 0 and c ≤ 4, and
///     we have none: class B1 for it, +2 to it: −2.
///   - c = 5, i.e. a = b (6 positions): the opponent ends up with {0, 5}: the forced cycle
///     below: 0.
/// * a < b: the opponent's seed crosses first; our seed has then made 6 − b steps and is at
///   d = a + 6 − b ≥ 1 of our row, so the opponent's seed lands in our empty pit 0 (no
///   capture) and we hold {0, d}, to move.
///   - d ≤ 4, i.e. b − a ≥ 2 (10 positions): class B1 for us: +2.
///   - d = 5, i.e. b = a + 1 (5 positions): we hold {0, 5}: the forced cycle: 0.
///
/// The forced cycle (12 plies, every move the only legal one under every rule set):
/// (0,0) → (0,1) → (1,1) → (1,2) → (2,2) → (2,3) → (3,3) → (3,4) → (4,4) → (4,5) → (5,5)
/// → the next mover holds {0, 5} with the other side empty (B2, forced pit 5 → pit 6)
/// → (0,0). No capture ever happens on it (from (5,5) our seed lands on the empty pit 6, the
/// opponent's seed being in pit 11), so the game never ends: endless play, 0 for the 11
/// one-each positions a = b or b = a + 1 and for B2 {0,5}. (B2 {1,5} is not on the cycle but
/// enters it at once: its forced move leads to (0,1).)
///
/// Layer 2 histograms: `awari` and `grand-slam-captures` +2 × 25 (14 B1 + 1 (5,0) + 10),
/// 0 × 13 (2 B2 + 11 one-each), −2 × 40 (21 A + 5 B2/B3/B4 + 14 one-each); `abapa` moves the
/// (5,0) position from +2 to −2: +2 × 24, 0 × 13, −2 × 41.
fn one_each(rules: Rules, a: usize, b: usize) -> i8 {
    if a == 5 && b == 0 {
        return if rules == Rules::ABAPA { -2 } else { 2 };
    }
    if a >= b {
        if a == b {
            0
        } else {
            -2 // 1 ≤ a − b ≤ 4
        }
    } else if b == a + 1 {
        0
    } else {
        2 // b − a ≥ 2
    }
}

/// Every position of layers 0..=2, by nested loops over where the seeds are.
fn positions_up_to_two() -> Vec<[u8; 12]> {
    let mut out = vec![[0u8; 12]];
    for p in 0..12 {
        let mut pits = [0u8; 12];
        pits[p] = 1;
        out.push(pits);
    }
    for p in 0..12 {
        for q in p..12 {
            let mut pits = [0u8; 12];
            pits[p] += 1;
            pits[q] += 1;
            out.push(pits);
        }
    }
    out
}

fn check(rules: Rules) {
    let solved = awari::solve::solve_all(rules, 2);
    assert!(
        solved.len() >= 3,
        "{rules}: solve_all returned {} layers",
        solved.len()
    );
    let positions = positions_up_to_two();
    assert_eq!(positions.len(), 1 + 12 + 78);
    let mut wrong = Vec::new();
    for pits in &positions {
        let board = Board::new(*pits).unwrap();
        let n = board.seeds() as usize;
        let got = solved[n][awari::index::rank(&board) as usize];
        let expected = by_hand(rules, pits);
        if got != expected {
            wrong.push(format!(
                "  layer {n}: [{board}] by hand {expected}, solve_all {got}"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{rules}: {} positions differ from the hand derivation:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn awari_layers_0_to_2_match_the_hand_derivation() {
    check(Rules::AWARI);
}

#[test]
fn abapa_layers_0_to_2_match_the_hand_derivation() {
    check(Rules::ABAPA);
}

/// Not asked for, but free: in layers ≤ 2 the only grand slam is (a, b) = (5, 0), where
/// `grand-slam-captures` agrees with `awari` (+2), and its "opponent empty and unfed"
/// end gives the same +2 as `abapa`'s, so its table is `awari`'s.
#[test]
fn grand_slam_captures_layers_0_to_2_match_the_hand_derivation() {
    check(Rules::GRAND_SLAM_CAPTURES);
}

/// The classes of the derivation have the sizes the comments claim, and the table's
/// histograms are the ones stated there.
#[test]
fn hand_table_classes_and_histograms() {
    let positions = positions_up_to_two();
    let layer = |n: u8| positions.iter().filter(move |p| p.iter().sum::<u8>() == n);
    let count = |rules: Rules, n: u8, v: i8| layer(n).filter(|p| by_hand(rules, p) == v).count();
    assert_eq!(layer(0).count(), 1);
    assert_eq!(layer(1).count(), 12);
    assert_eq!(layer(2).count(), 78);
    let mover = |p: &[u8; 12]| p[..6].iter().sum::<u8>();
    assert_eq!(layer(2).filter(|p| mover(p) == 0).count(), 21); // A
    assert_eq!(layer(2).filter(|p| mover(p) == 2).count(), 21); // B
    assert_eq!(layer(2).filter(|p| mover(p) == 1).count(), 36); // C
    assert_eq!(
        (count(Rules::AWARI, 1, 1), count(Rules::AWARI, 1, -1)),
        (5, 7)
    );
    for (rules, w, d, l) in [
        (Rules::AWARI, 25, 13, 40),
        (Rules::GRAND_SLAM_CAPTURES, 25, 13, 40),
        (Rules::ABAPA, 24, 13, 41),
    ] {
        assert_eq!(
            (count(rules, 2, 2), count(rules, 2, 0), count(rules, 2, -2)),
            (w, d, l),
            "{rules}"
        );
    }
    // Class C split as claimed: a = b (6), b = a + 1 (5), 1 ≤ a − b ≤ 4 (14), (5, 0) (1),
    // b − a ≥ 2 (10).
    let mut split = [0; 5];
    for a in 0..6i32 {
        for b in 0..6i32 {
            let k = match b - a {
                0 => 0,
                1 => 1,
                -4..=-1 => 2,
                -5 => 3,
                _ => 4,
            };
            split[k] += 1;
        }
    }
    assert_eq!(split, [6, 5, 14, 1, 10]);
}

/// A few positions written out, as a reader would type them, with the line that decides them.
#[test]
fn worked_examples() {
    let cases: [(&str, Rules, i8); 8] = [
        // 3 → 4, 7 → 8, 4 → 5, 8 → 9, 5 → 6: the opponent holds its pits 0 and 3, we nothing.
        ("0 0 0 1 0 0 0 1 0 0 0 0", Rules::AWARI, -2),
        // 1 → 2, 10 → 11, 2 → 3, 11 → 0: we hold pits 0 and 3 and the opponent nothing.
        ("0 1 0 0 0 0 0 0 0 0 1 0", Rules::AWARI, 2),
        // On the forced cycle (absolute pits): 2 → 3, 9 → 10, 3 → 4, 10 → 11, 4 → 5, 11 → 0,
        // 5 → 6 (forced: 0 → 1 would starve), 6 → 7, 0 → 1, 7 → 8, … twelve plies a lap.
        ("0 0 1 0 0 0 0 0 0 1 0 0", Rules::AWARI, 0),
        // The one grand slam of layer 2.
        ("0 0 0 0 0 1 1 0 0 0 0 0", Rules::AWARI, 2),
        ("0 0 0 0 0 1 1 0 0 0 0 0", Rules::ABAPA, -2),
        ("0 0 0 0 0 1 1 0 0 0 0 0", Rules::GRAND_SLAM_CAPTURES, 2),
        // Must feed from pit 5: 5 → 6; then (absolute pits) 6 → 7, 3 → 4, 7 → 8, 4 → 5,
        // 8 → 9, 5 → 6: our seed crosses first, and the opponent holds pits 6 and 9, we none.
        ("0 0 0 1 0 1 0 0 0 0 0 0", Rules::AWARI, -2),
        // Must feed: 4 → 5, 6; then 6 → 7, 5 → 6: the opponent holds pits 6 and 7, we none.
        ("0 0 0 0 2 0 0 0 0 0 0 0", Rules::ABAPA, -2),
    ];
    for (text, rules, value) in cases {
        let board: Board = text.parse().unwrap();
        assert_eq!(
            by_hand(rules, board.pits()),
            value,
            "{rules}: [{text}] (table)"
        );
        let solved = awari::solve::solve_all(rules, 2);
        let n = board.seeds() as usize;
        assert_eq!(
            solved[n][awari::index::rank(&board) as usize],
            value,
            "{rules}: [{text}] (solve_all)"
        );
    }
}
