//! The rules of docs/overview.md ("The game and the rules"), one test per statement, each
//! on a worked board.
//!
//! Boards are written mover-relative: pits 0..=5 are the side to move's, 6..=11 the
//! opponent's, sowing 0 → 1 → … → 11 → 0. A `Move.child` is the board after the move with
//! its two rows swapped (the opponent moves next). Every expected value below is worked out
//! by hand in the comment beside it.

use awari::rules::{capture, sow};
use awari::{Board, Move, Rules, RulesError, Turn};
use proptest::prelude::*;

mod common;
use common::any_board;

fn b(text: &str) -> Board {
    text.parse()
        .unwrap_or_else(|e| panic!("test board {text:?}: {e}"))
}

/// The legal moves, failing the test if the game is over.
fn moves(rules: Rules, board: &Board) -> Vec<Move> {
    match rules.turn(board) {
        Turn::Moves(list) => {
            assert!(!list.is_empty(), "{rules}: Turn::Moves must never be empty");
            list.iter().copied().collect()
        }
        Turn::GameOver { value } => {
            panic!("{rules}: {board:?} should have moves, got GameOver {{ value: {value} }}")
        }
    }
}

fn pits_of(ms: &[Move]) -> Vec<u8> {
    ms.iter().map(|m| m.pit).collect()
}

fn the_move(ms: &[Move], pit: u8) -> Move {
    *ms.iter()
        .find(|m| m.pit == pit)
        .unwrap_or_else(|| panic!("no legal move from pit {pit} in {ms:?}"))
}

fn game_over(rules: Rules, board: &Board) -> i8 {
    match rules.turn(board) {
        Turn::GameOver { value } => value,
        Turn::Moves(list) => panic!("{rules}: {board:?} should be over, got moves {list:?}"),
    }
}

/// Sowing as the rule states it, one seed at a time, stepping over the origin pit.
fn naive_sow(pits: [u8; 12], pit: usize) -> ([u8; 12], usize) {
    let mut pits = pits;
    let mut seeds = pits[pit];
    pits[pit] = 0;
    let mut p = pit;
    while seeds > 0 {
        p = (p + 1) % 12;
        if p == pit {
            continue;
        }
        pits[p] += 1;
        seeds -= 1;
    }
    (pits, p)
}

// ---------------------------------------------------------------------------------------
// Sowing
// ---------------------------------------------------------------------------------------

#[test]
fn a_move_sows_the_seeds_of_one_pit_one_by_one_into_the_following_pits() {
    // Pit 2 holds 3: one seed each into pits 3, 4, 5; the last falls in pit 5 (own row).
    let board = b("0 0 3 0 0 0  1 1 1 1 1 1");
    let (sown, last) = sow(&board, 2);
    assert_eq!(sown, b("0 0 0 1 1 1  1 1 1 1 1 1"));
    assert_eq!(last, 5);

    // Pit 5 holds 8: pits 6..=11 (6 seeds), then around to pits 0 and 1; last is pit 1.
    let (sown, last) = sow(&b("0 0 0 0 0 8  0 0 0 0 0 0"), 5);
    assert_eq!(sown, b("1 1 0 0 0 0  1 1 1 1 1 1"));
    assert_eq!(last, 1);

    // Through Rules::turn: the only move (pit 2) captures nothing (last seed in own pit 5)
    // and the child is the sown board with the rows swapped.
    for rules in Rules::ALL {
        let ms = moves(rules, &board);
        assert_eq!(pits_of(&ms), vec![2], "{rules}");
        assert_eq!(ms[0].captured, 0, "{rules}");
        assert_eq!(ms[0].child, b("1 1 1 1 1 1  0 0 0 1 1 1"), "{rules}");
    }
}

#[test]
fn only_non_empty_mover_pits_are_moves() {
    // Mover pits 1 and 4 hold seeds, the opponent holds plenty: moves 1 and 4 only, in pit
    // order. Pit 1 (2 seeds) sows pits 2, 3; pit 4 (2 seeds) sows 5, 6 and pit 6 goes 1 → 2,
    // a capture of 2 that leaves the opponent 5 seeds in pits 7..=11.
    let board = b("0 2 0 0 2 0  1 1 1 1 1 1");
    for rules in Rules::ALL {
        let ms = moves(rules, &board);
        assert_eq!(pits_of(&ms), vec![1, 4], "{rules}");
        assert_eq!(ms[0].captured, 0);
        assert_eq!(ms[0].child, b("1 1 1 1 1 1  0 0 1 1 2 0"));
        assert_eq!(ms[1].captured, 2);
        // After: mover "0 2 0 0 0 1", opponent "0 1 1 1 1 1"; swapped.
        assert_eq!(ms[1].child, b("0 1 1 1 1 1  0 2 0 0 0 1"));
    }
}

#[test]
fn kroo_of_12_seeds_skips_the_origin_pit() {
    // 12 seeds from pit 0: pits 1..=11 get one each (11 seeds), pit 0 is skipped, and the
    // 12th seed lands in pit 1 again, which ends with 2. Without the skip pit 0 would hold 1
    // and the last seed would be in pit 0.
    let (sown, last) = sow(&b("12 0 0 0 0 0  0 0 0 0 0 0"), 0);
    assert_eq!(sown, b("0 2 1 1 1 1  1 1 1 1 1 1"));
    assert_eq!(last, 1);

    // 12 seeds from pit 5: pits 6..=11 (6), pits 0..=4 (5), skip pit 5, the 12th lands in
    // pit 6 which then holds 2.
    let board = b("0 0 0 0 0 12  0 0 0 0 0 0");
    let (sown, last) = sow(&board, 5);
    assert_eq!(sown, b("1 1 1 1 1 0  2 1 1 1 1 1"));
    assert_eq!(last, 6);

    // Through Rules::turn (same for every preset): the opponent is empty and this is the only
    // move; it feeds, and the last seed in pit 6 (2 seeds) is captured; the chain then meets
    // pit 5, the mover's own row, and stops. Captured 2, the opponent keeps pits 7..=11.
    // After: "1 1 1 1 1 0 | 0 1 1 1 1 1", swapped for the child.
    for rules in Rules::ALL {
        let ms = moves(rules, &board);
        assert_eq!(pits_of(&ms), vec![5], "{rules}");
        assert_eq!(ms[0].captured, 2, "{rules}");
        assert_eq!(ms[0].child, b("0 1 1 1 1 1  1 1 1 1 1 0"), "{rules}");
    }
}

#[test]
fn kroo_of_23_seeds_skips_the_origin_pit_on_every_lap() {
    // 23 seeds from pit 3 with one opponent seed in pit 8: two full laps of the other 11 pits
    // (22 seeds, pit 3 skipped both times) give every other pit 2, the 23rd goes to pit 4
    // (3 seeds). Pit 8 ends 1 + 2 = 3. The last seed is in pit 4.
    let board = b("0 0 0 23 0 0  0 0 1 0 0 0");
    let (sown, last) = sow(&board, 3);
    assert_eq!(sown, b("2 2 2 0 3 2  2 2 3 2 2 2"));
    assert_eq!(last, 4);
    assert_eq!(sown.seeds(), 24);

    // Through Rules::turn: every opponent pit holds 2 or 3, but the last seed fell in the
    // mover's own pit 4, so nothing is captured.
    for rules in Rules::ALL {
        let ms = moves(rules, &board);
        assert_eq!(pits_of(&ms), vec![3], "{rules}");
        assert_eq!(ms[0].captured, 0, "{rules}");
        assert_eq!(ms[0].child, b("2 2 3 2 2 2  2 2 2 0 3 2"), "{rules}");
    }
}

#[test]
fn sowing_never_puts_a_seed_in_the_origin_pit() {
    // 35 seeds from pit 2: three laps (33 seeds) give the 11 other pits 3 each, the last two
    // go to pits 3 and 4 (4 each). Last seed in pit 4. Pit 2 stays empty.
    let (sown, last) = sow(&b("0 0 35 0 0 0  0 0 0 0 0 0"), 2);
    assert_eq!(sown, b("3 3 0 4 4 3  3 3 3 3 3 3"));
    assert_eq!(last, 4);

    // 48 seeds from pit 0: 48 = 4 * 11 + 4, so pits 1..=4 get 5 and pits 5..=11 get 4
    // (4 * 5 + 7 * 4 = 48). Last seed in pit 4.
    let (sown, last) = sow(&b("48 0 0 0 0 0  0 0 0 0 0 0"), 0);
    assert_eq!(sown, b("0 5 5 5 5 4  4 4 4 4 4 4"));
    assert_eq!(last, 4);

    // 22 seeds from pit 5 (exactly two laps): every other pit gets 2 and the last seed falls
    // in pit 4, the pit just before the origin.
    let (sown, last) = sow(&b("0 0 0 0 0 22  0 0 0 0 0 0"), 5);
    assert_eq!(sown, b("2 2 2 2 2 0  2 2 2 2 2 2"));
    assert_eq!(last, 4);

    // Every pit, every count up to the whole game, with other seeds about: the origin ends
    // empty and the result is the one-seed-at-a-time sowing of the rule.
    for pit in 0..6 {
        for seeds in 1..=48u8 {
            let mut pits = [0u8; 12];
            pits[pit] = seeds;
            // Spread up to 48 - seeds other seeds over the other pits, a fixed pattern.
            let mut spare = 48 - seeds;
            for (p, count) in pits.iter_mut().enumerate() {
                if p != pit && spare > 0 {
                    let k = ((p as u8 * 7 + seeds) % 3).min(spare);
                    *count = k;
                    spare -= k;
                }
            }
            let board = Board::new(pits).unwrap();
            let (sown, last) = sow(&board, pit);
            let (want, want_last) = naive_sow(pits, pit);
            assert_eq!(sown.pit(pit), 0, "pit {pit}, {seeds} seeds");
            assert_eq!(*sown.pits(), want, "pit {pit}, {seeds} seeds");
            assert_eq!(last, want_last, "pit {pit}, {seeds} seeds");
            assert_eq!(sown.seeds(), board.seeds());
        }
    }
}

// ---------------------------------------------------------------------------------------
// Captures
// ---------------------------------------------------------------------------------------

#[test]
fn capture_takes_a_last_pit_of_2_or_3_only() {
    // capture() on an already sown board: last pit 9 holding 2 → taken; 3 → taken; 1 or 4
    // → nothing taken even though pit 8 before it holds 2.
    let (after, taken) = capture(&b("1 0 0 0 0 0  0 0 2 2 0 0"), 9);
    assert_eq!((after, taken), (b("1 0 0 0 0 0  0 0 0 0 0 0"), 4)); // 9 (2) then 8 (2), then 7 (0) stops
    let (after, taken) = capture(&b("1 0 0 0 0 0  0 0 0 3 0 1"), 9);
    assert_eq!((after, taken), (b("1 0 0 0 0 0  0 0 0 0 0 1"), 3));
    for last_count in [1u8, 4, 5] {
        let mut pits = [1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0];
        pits[9] = last_count;
        let board = Board::new(pits).unwrap();
        assert_eq!(
            capture(&board, 9),
            (board, 0),
            "last pit holds {last_count}"
        );
    }
    // A last seed in the mover's own row captures nothing, whatever that pit holds.
    let board = b("0 0 2 3 0 0  2 2 2 2 2 2");
    assert_eq!(capture(&board, 3), (board, 0));
    assert_eq!(capture(&board, 2), (board, 0));
}

#[test]
fn capture_chain_of_three_pits() {
    // Pit 4 holds 5: sows pits 5, 6, 7, 8, 9; last seed in pit 9.
    // Opponent before: 6:0 7:1 8:2 9:1 → after: 6:1 7:2 8:3 9:2.
    // Chain: 9 (2), 8 (3), 7 (2) captured = 7; pit 6 holds 1 and stops it.
    let board = b("0 0 0 0 5 0  0 1 2 1 0 1");
    let (sown, last) = sow(&board, 4);
    assert_eq!(sown, b("0 0 0 0 0 1  1 2 3 2 0 1"));
    assert_eq!(last, 9);
    let (after, taken) = capture(&sown, last);
    assert_eq!(after, b("0 0 0 0 0 1  1 0 0 0 0 1"));
    assert_eq!(taken, 7);

    // The opponent keeps pits 6 and 11, so it is no grand slam: the same under every preset.
    for rules in Rules::ALL {
        let ms = moves(rules, &board);
        assert_eq!(pits_of(&ms), vec![4], "{rules}");
        assert_eq!(ms[0].captured, 7, "{rules}");
        assert_eq!(ms[0].child, b("1 0 0 0 0 1  0 0 0 0 0 1"), "{rules}");
        // Seeds are conserved: 10 on the board = 7 captured + 3 in the child.
        assert_eq!(ms[0].child.seeds() + 7, board.seeds());
    }
}

#[test]
fn capture_chain_stops_at_a_pit_of_4() {
    // Pit 4 holds 5: sows 5..=9. Opponent before 6:0 7:1 8:3 9:1 → after 6:1 7:2 8:4 9:2.
    // Chain: pit 9 (2) captured; pit 8 holds 4 and stops the chain, so pit 7 keeps its 2
    // even though 2 is a capturable count. Captured 2.
    let board = b("0 0 0 0 5 0  0 1 3 1 0 1");
    let (sown, last) = sow(&board, 4);
    assert_eq!(sown, b("0 0 0 0 0 1  1 2 4 2 0 1"));
    assert_eq!(last, 9);
    assert_eq!(capture(&sown, last), (b("0 0 0 0 0 1  1 2 4 0 0 1"), 2));
    for rules in Rules::ALL {
        let ms = moves(rules, &board);
        assert_eq!(pits_of(&ms), vec![4], "{rules}");
        assert_eq!(ms[0].captured, 2, "{rules}");
        assert_eq!(ms[0].child, b("1 2 4 0 0 1  0 0 0 0 0 1"), "{rules}");
    }
}

#[test]
fn capture_chain_never_enters_the_movers_row() {
    // Pit 3 holds 4: sows pits 4, 5, 6, 7; last seed in pit 7.
    // Before: 4:2 5:1 6:1 7:2 → after: 4:3 5:2 6:2 7:3.
    // Chain: 7 (3), 6 (2) captured = 5; it then reaches pit 5, which holds 2 but is the
    // mover's own pit, so it stops there (and pit 4 with 3 is not touched either).
    let board = b("0 0 0 4 2 1  1 2 0 0 0 1");
    let (sown, last) = sow(&board, 3);
    assert_eq!(sown, b("0 0 0 0 3 2  2 3 0 0 0 1"));
    assert_eq!(last, 7);
    let (after, taken) = capture(&sown, last);
    assert_eq!(after, b("0 0 0 0 3 2  0 0 0 0 0 1"));
    assert_eq!(taken, 5);
    // The opponent keeps pit 11 (1 seed): no grand slam, the same under every preset.
    for rules in Rules::ALL {
        let ms = moves(rules, &board);
        // Pits 3, 4, 5 hold seeds. Pit 4 (2) sows 5, 6: pit 6 → 2 captured (chain stops at
        // pit 5); pit 5 (1) sows 6 → 2 captured. Both leave pits 7 and 11: all legal.
        assert_eq!(pits_of(&ms), vec![3, 4, 5], "{rules}");
        let m = the_move(&ms, 3);
        assert_eq!(m.captured, 5, "{rules}");
        assert_eq!(m.child, b("0 0 0 0 0 1  0 0 0 0 3 2"), "{rules}");
        let m = the_move(&ms, 4);
        assert_eq!(m.captured, 2, "{rules}");
        // After: "0 0 0 4 0 2 | 0 2 0 0 0 1".
        assert_eq!(m.child, b("0 2 0 0 0 1  0 0 0 4 0 2"), "{rules}");
        let m = the_move(&ms, 5);
        assert_eq!(m.captured, 2, "{rules}");
        // After: "0 0 0 4 2 0 | 0 2 0 0 0 1".
        assert_eq!(m.child, b("0 2 0 0 0 1  0 0 0 4 2 0"), "{rules}");
    }
}

#[test]
fn capture_chain_that_reaches_pit_6_stops_there() {
    // capture() alone: opponent pits 6..=9 hold 2, 3, 2, 3 and the mover's pit 5 holds 2.
    // From last pit 9 the chain takes 9, 8, 7, 6 (3 + 2 + 3 + 2 = 10) and stops before pit 5.
    let board = b("0 0 0 3 2 2  2 3 2 3 0 1");
    let (after, taken) = capture(&board, 9);
    assert_eq!(after, b("0 0 0 3 2 2  0 0 0 0 0 1"));
    assert_eq!(taken, 10);
}

// ---------------------------------------------------------------------------------------
// The grand slam, per preset
// ---------------------------------------------------------------------------------------

/// Pit 0 (1 seed) sows pit 1: no capture, the opponent keeps 2 seeds — an ordinary move.
/// Pit 5 (2 seeds) sows pits 6, 7 which go 1 → 2 each; the chain takes 7 and 6 (4 seeds) and
/// stops at pit 5: the opponent is left with nothing — a grand slam.
const GRAND_SLAM_BOARD: &str = "1 0 0 0 0 2  1 1 0 0 0 0";

/// Child of the ordinary move: after "0 1 0 0 0 2 | 1 1 0 0 0 0", swapped.
const ORDINARY_CHILD: &str = "1 1 0 0 0 0  0 1 0 0 0 2";

#[test]
fn grand_slam_is_illegal_under_awari_when_another_move_exists() {
    let board = b(GRAND_SLAM_BOARD);
    let ms = moves(Rules::AWARI, &board);
    assert_eq!(pits_of(&ms), vec![0]);
    assert_eq!(ms[0].captured, 0);
    assert_eq!(ms[0].child, b(ORDINARY_CHILD));
}

#[test]
fn grand_slam_is_legal_but_captures_nothing_under_abapa() {
    let board = b(GRAND_SLAM_BOARD);
    let ms = moves(Rules::ABAPA, &board);
    assert_eq!(pits_of(&ms), vec![0, 5]);
    assert_eq!(the_move(&ms, 0).child, b(ORDINARY_CHILD));
    let slam = the_move(&ms, 5);
    assert_eq!(slam.captured, 0);
    // The sown seeds stay: "1 0 0 0 0 0 | 2 2 0 0 0 0", swapped.
    assert_eq!(slam.child, b("2 2 0 0 0 0  1 0 0 0 0 0"));
    assert_eq!(slam.child.seeds(), 5);
}

#[test]
fn grand_slam_is_legal_and_captures_everything_under_grand_slam_captures() {
    let board = b(GRAND_SLAM_BOARD);
    let rules = Rules::GRAND_SLAM_CAPTURES;
    let ms = moves(rules, &board);
    assert_eq!(pits_of(&ms), vec![0, 5]);
    assert_eq!(the_move(&ms, 0).child, b(ORDINARY_CHILD));
    let slam = the_move(&ms, 5);
    assert_eq!(slam.captured, 4);
    // After: "1 0 0 0 0 0 | 0 0 0 0 0 0"; the new mover has nothing and the 1 seed left goes
    // to the side that played the grand slam: the child is over at -1.
    assert_eq!(slam.child, b("0 0 0 0 0 0  1 0 0 0 0 0"));
    assert_eq!(rules.game_over_value(&slam.child), Some(-1));
}

#[test]
fn forced_grand_slam_is_played_and_captures_under_awari() {
    // Both moves are grand slams:
    // pit 4 (3 seeds) sows 5, 6, 7: 6 and 7 go 1 → 2, chain 7, 6 takes 4, stops at pit 5;
    //   after "0 0 0 0 0 3 | 0 0 0 0 0 0".
    // pit 5 (2 seeds) sows 6, 7 → 2 each, captures 4; after "0 0 0 0 3 0 | 0 0 0 0 0 0".
    // Under awari every legal move is a grand slam, so both are played, capturing.
    let board = b("0 0 0 0 3 2  1 1 0 0 0 0");
    let rules = Rules::AWARI;
    let ms = moves(rules, &board);
    assert_eq!(pits_of(&ms), vec![4, 5]);
    let m4 = the_move(&ms, 4);
    assert_eq!(m4.captured, 4);
    assert_eq!(m4.child, b("0 0 0 0 0 0  0 0 0 0 0 3"));
    // The starved opponent cannot move: the 3 seeds left go to the grand slammer.
    assert_eq!(rules.game_over_value(&m4.child), Some(-3));
    let m5 = the_move(&ms, 5);
    assert_eq!(m5.captured, 4);
    assert_eq!(m5.child, b("0 0 0 0 0 0  0 0 0 0 3 0"));
    assert_eq!(rules.game_over_value(&m5.child), Some(-3));

    // The same board under the other presets, for contrast: abapa keeps the sown seeds,
    // grand-slam-captures takes them.
    let ms = moves(Rules::ABAPA, &board);
    assert_eq!(pits_of(&ms), vec![4, 5]);
    assert_eq!(the_move(&ms, 4).captured, 0);
    // Sown "0 0 0 0 0 3 | 2 2 0 0 0 0", swapped.
    assert_eq!(the_move(&ms, 4).child, b("2 2 0 0 0 0  0 0 0 0 0 3"));
    let ms = moves(Rules::GRAND_SLAM_CAPTURES, &board);
    assert_eq!(pits_of(&ms), vec![4, 5]);
    assert_eq!(the_move(&ms, 4).captured, 4);
    assert_eq!(the_move(&ms, 4).child, b("0 0 0 0 0 0  0 0 0 0 0 3"));
}

#[test]
fn forced_single_grand_slam_empties_the_board_under_awari() {
    // Only move: pit 5 (2) sows 6, 7 (1 → 2 each), captures all 4; nothing is left, and the
    // child, the empty board, is over at 0.
    let board = b("0 0 0 0 0 2  1 1 0 0 0 0");
    let ms = moves(Rules::AWARI, &board);
    assert_eq!(pits_of(&ms), vec![5]);
    assert_eq!(ms[0].captured, 4);
    assert_eq!(ms[0].child, Board::default());
    assert_eq!(Rules::AWARI.game_over_value(&ms[0].child), Some(0));
}

#[test]
fn kroo_grand_slam_while_feeding() {
    // The opponent is empty. Pit 0 holds 22: two laps give every other pit 2, the last seed
    // lands in pit 11; the chain then takes 11, 10, …, 6 (12 seeds) and stops at pit 5.
    // It gives the opponent seeds but would leave it none. Pit 5 (1 seed) sows pit 6: an
    // ordinary feeding move; after "22 0 0 0 0 0 | 1 0 0 0 0 0".
    let board = b("22 0 0 0 0 1  0 0 0 0 0 0");
    let (sown, last) = sow(&board, 0);
    assert_eq!(sown, b("0 2 2 2 2 3  2 2 2 2 2 2"));
    assert_eq!(last, 11);
    assert_eq!(capture(&sown, last), (b("0 2 2 2 2 3  0 0 0 0 0 0"), 12));

    // Awari: the grand slam is illegal, pit 5 exists.
    let ms = moves(Rules::AWARI, &board);
    assert_eq!(pits_of(&ms), vec![5]);
    assert_eq!(ms[0].child, b("1 0 0 0 0 0  22 0 0 0 0 0"));

    // Abapa: legal and it feeds; it captures nothing, so the opponent keeps its 12 seeds.
    let ms = moves(Rules::ABAPA, &board);
    assert_eq!(pits_of(&ms), vec![0, 5]);
    assert_eq!(the_move(&ms, 0).captured, 0);
    assert_eq!(the_move(&ms, 0).child, b("2 2 2 2 2 2  0 2 2 2 2 3"));
}

// ---------------------------------------------------------------------------------------
// Feeding
// ---------------------------------------------------------------------------------------

#[test]
fn feeding_when_the_opponent_is_empty_only_feeding_moves_are_legal() {
    // Opponent empty. Pit 0 (1) sows pit 1: gives nothing. Pit 4 (3) sows 5, 6, 7: feeds
    // (pits 6, 7 get 1 each, no capture). Pit 5 (1) sows 6: feeds. Legal: 4 and 5 only.
    let board = b("1 0 0 0 3 1  0 0 0 0 0 0");
    for rules in Rules::ALL {
        let ms = moves(rules, &board);
        assert_eq!(pits_of(&ms), vec![4, 5], "{rules}");
        let m4 = the_move(&ms, 4);
        assert_eq!(m4.captured, 0, "{rules}");
        // After "1 0 0 0 0 2 | 1 1 0 0 0 0".
        assert_eq!(m4.child, b("1 1 0 0 0 0  1 0 0 0 0 2"), "{rules}");
        let m5 = the_move(&ms, 5);
        assert_eq!(m5.captured, 0, "{rules}");
        // After "1 0 0 0 3 0 | 1 0 0 0 0 0".
        assert_eq!(m5.child, b("1 0 0 0 0 0  1 0 0 0 3 0"), "{rules}");
    }
}

#[test]
fn no_feeding_move_under_awari_the_mover_plays_on_and_the_opponent_starves() {
    // Opponent empty; pit 0 (1) sows pit 1, pit 1 (2) sows pits 2, 3: neither reaches the
    // opponent. Under awari both are played (every move "starves"); each child has the new
    // mover with no seeds, so it is over at -3 (the board holds 3 seeds).
    let board = b("1 2 0 0 0 0  0 0 0 0 0 0");
    let rules = Rules::AWARI;
    let ms = moves(rules, &board);
    assert_eq!(pits_of(&ms), vec![0, 1]);
    let m0 = the_move(&ms, 0);
    assert_eq!(m0.captured, 0);
    assert_eq!(m0.child, b("0 0 0 0 0 0  0 3 0 0 0 0"));
    assert_eq!(rules.game_over_value(&m0.child), Some(-3));
    let m1 = the_move(&ms, 1);
    assert_eq!(m1.captured, 0);
    assert_eq!(m1.child, b("0 0 0 0 0 0  1 0 1 1 0 0"));
    assert_eq!(rules.game_over_value(&m1.child), Some(-3));
}

#[test]
fn no_feeding_move_under_abapa_and_grand_slam_captures_ends_the_game_for_the_mover() {
    // Same board: nobody can feed, the game ends and the mover takes the 3 seeds of its row.
    let board = b("1 2 0 0 0 0  0 0 0 0 0 0");
    for rules in [Rules::ABAPA, Rules::GRAND_SLAM_CAPTURES] {
        assert_eq!(game_over(rules, &board), 3, "{rules}");
        assert_eq!(rules.game_over_value(&board), Some(3), "{rules}");
        assert!(rules.legal_moves(&board).is_empty(), "{rules}");
    }
    // A bigger one: 5 + 3 + 1 = 9 seeds; pit 0 (5) ends in pit 5, pit 2 (3) ends in pit 5,
    // pit 4 (1) ends in pit 5 — nobody crosses into pit 6. Value +9.
    let board = b("5 0 3 0 1 0  0 0 0 0 0 0");
    for rules in [Rules::ABAPA, Rules::GRAND_SLAM_CAPTURES] {
        assert_eq!(game_over(rules, &board), 9, "{rules}");
    }
    // Under awari the same board is played on: three moves.
    assert_eq!(pits_of(&moves(Rules::AWARI, &board)), vec![0, 2, 4]);
}

// ---------------------------------------------------------------------------------------
// End of the game
// ---------------------------------------------------------------------------------------

#[test]
fn mover_with_no_seeds_loses_the_rest() {
    // The mover's row is empty; the opponent holds 1 + 2 + 4 = 7: over at -7.
    let board = b("0 0 0 0 0 0  1 2 0 0 0 4");
    for rules in Rules::ALL {
        assert_eq!(game_over(rules, &board), -7, "{rules}");
        assert_eq!(rules.game_over_value(&board), Some(-7), "{rules}");
        assert!(rules.legal_moves(&board).is_empty(), "{rules}");
    }
    // All 48 seeds on the opponent's side: -48.
    let board = b("0 0 0 0 0 0  8 8 8 8 8 8");
    for rules in Rules::ALL {
        assert_eq!(game_over(rules, &board), -48, "{rules}");
    }
}

#[test]
fn empty_board_is_over_at_zero() {
    for rules in Rules::ALL {
        assert_eq!(game_over(rules, &Board::default()), 0, "{rules}");
        assert_eq!(
            game_over(rules, &b("0 0 0 0 0 0 0 0 0 0 0 0")),
            0,
            "{rules}"
        );
    }
}

#[test]
fn a_position_with_moves_is_not_over() {
    // The opening with 4 seeds per pit: six moves for every preset, none capturing
    // (pit 5 sows 6..=9 which go 4 → 5).
    let board = Board::opening(4).unwrap();
    for rules in Rules::ALL {
        assert_eq!(rules.game_over_value(&board), None, "{rules}");
        let ms = moves(rules, &board);
        assert_eq!(pits_of(&ms), vec![0, 1, 2, 3, 4, 5], "{rules}");
        assert!(ms.iter().all(|m| m.captured == 0));
        // Pit 0 sows 1..=4: after "0 5 5 5 5 4 | 4 4 4 4 4 4".
        assert_eq!(ms[0].child, b("4 4 4 4 4 4  0 5 5 5 5 4"));
    }
}

// ---------------------------------------------------------------------------------------
// Presets: names and file codes
// ---------------------------------------------------------------------------------------

#[test]
fn preset_names_parse() {
    assert_eq!("awari".parse::<Rules>(), Ok(Rules::AWARI));
    assert_eq!("abapa".parse::<Rules>(), Ok(Rules::ABAPA));
    assert_eq!(
        "grand-slam-captures".parse::<Rules>(),
        Ok(Rules::GRAND_SLAM_CAPTURES)
    );
    assert_eq!(Rules::default(), Rules::AWARI);
    for rules in Rules::ALL {
        assert_eq!(rules.to_string(), rules.name());
        assert_eq!(rules.name().parse::<Rules>(), Ok(rules));
    }
}

#[test]
fn bad_preset_name_is_refused_naming_the_valid_presets() {
    for bad in ["oware", "", "awari2", "grand slam", "kalah"] {
        let err = bad.parse::<Rules>().unwrap_err();
        let msg = err.to_string();
        for name in ["awari", "abapa", "grand-slam-captures"] {
            assert!(msg.contains(name), "{bad:?}: {msg:?} should name {name}");
        }
        assert!(!msg.contains('\n'), "{msg:?}");
    }
    assert_eq!(
        "oware".parse::<Rules>(),
        Err(RulesError::Unknown("oware".to_string()))
    );
}

#[test]
fn score_dependent_rules_are_refused() {
    // "A grand slam captures only if it brings the player to 25" cannot be told from the
    // board: refused, with a message that still names the presets.
    let err = "grand-slam-25".parse::<Rules>().unwrap_err();
    assert!(matches!(err, RulesError::ScoreDependent(_)), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("score"), "{msg}");
    assert!(msg.contains("awari") && msg.contains("abapa"), "{msg}");
}

#[test]
fn codes_round_trip() {
    let mut codes = Vec::new();
    for rules in Rules::ALL {
        assert_eq!(Rules::from_code(rules.code()), Some(rules), "{rules}");
        codes.push(rules.code());
    }
    codes.sort_unstable();
    codes.dedup();
    assert_eq!(codes.len(), 3, "codes must be distinct");
    // 0 (a zeroed header) and anything unassigned are refused.
    let known: Vec<u8> = Rules::ALL.iter().map(|r| r.code()).collect();
    for code in 0..=255u8 {
        if !known.contains(&code) {
            assert_eq!(Rules::from_code(code), None, "code {code}");
        }
    }
    assert_eq!(Rules::from_code(0), None);
}

// ---------------------------------------------------------------------------------------
// Properties on random positions
// ---------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn moves_conserve_seeds_and_follow_the_rule(board in any_board()) {
        for rules in Rules::ALL {
            match rules.turn(&board) {
                Turn::GameOver { value } => {
                    let n = board.seeds() as i8;
                    if board.mover_seeds() == 0 {
                        prop_assert_eq!(value, -n);
                    } else {
                        // Only abapa / grand-slam-captures end a game with seeds on the
                        // mover's side: an empty opponent that cannot be fed.
                        prop_assert!(rules != Rules::AWARI);
                        prop_assert_eq!(board.opponent_seeds(), 0);
                        prop_assert_eq!(value, n);
                    }
                }
                Turn::Moves(list) => {
                    prop_assert!(!list.is_empty());
                    let mut last_pit = None;
                    for m in &list {
                        let pit = m.pit as usize;
                        prop_assert!(pit < 6 && board.pit(pit) > 0);
                        prop_assert!(last_pit < Some(m.pit), "pit order");
                        last_pit = Some(m.pit);
                        prop_assert_eq!(m.child.seeds() + u32::from(m.captured), board.seeds());
                        // Replay with the naive sowing and the capture chain.
                        let (sown, last) = naive_sow(*board.pits(), pit);
                        let sown = Board::new(sown).unwrap();
                        let (after, taken) = capture(&sown, last);
                        let slam = after.opponent_seeds() == 0;
                        if rules == Rules::ABAPA && slam && taken > 0 {
                            prop_assert_eq!(m.captured, 0);
                            prop_assert_eq!(m.child, sown.swapped());
                        } else {
                            prop_assert_eq!(m.captured, taken);
                            prop_assert_eq!(m.child, after.swapped());
                        }
                        if board.opponent_seeds() == 0 && rules != Rules::AWARI {
                            prop_assert!(sown.opponent_seeds() > 0, "must feed");
                        }
                    }
                    if rules == Rules::AWARI {
                        // Either no legal move starves the opponent, or every non-empty pit
                        // is a move (all of them starve).
                        let movable = (0..6).filter(|&p| board.pit(p) > 0).count();
                        let starving = list.iter().filter(|m| m.child.mover_seeds() == 0).count();
                        prop_assert!(starving == 0 || list.len() == movable);
                    }
                }
            }
        }
    }
}
