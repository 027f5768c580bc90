//! Games in progress: the move-list format and the rules that end a real game, on worked
//! examples (each derived by hand in its comment) and on played-out games checked against
//! an independent count of repetitions.

use awari::game::{EndReason, GameError, GameRecord, Side};
use awari::{Board, Rules};
use std::collections::HashMap;

fn board(text: &str) -> Board {
    text.parse().unwrap()
}

fn record(text: &str) -> GameRecord {
    GameRecord::parse(text, Rules::AWARI).unwrap()
}

#[test]
fn the_format_reads_headers_move_numbers_and_comments() {
    let r = record(
        "# a game\nrules abapa\nstart 1 2 3 4 5 6 0 0 0 0 0 1\nfirst north\ncaptured 3, 5\n1. 6 1  2. 2 # late\n",
    );
    assert_eq!(r.rules, Rules::ABAPA);
    assert_eq!(r.start, board("1 2 3 4 5 6 0 0 0 0 0 1"));
    assert_eq!(r.first, Side::North);
    assert_eq!(r.captured, [3, 5]);
    assert_eq!(r.moves, vec![5, 0, 1]);
    // Defaults: the 4-per-pit opening, South first, the rules given by the caller.
    let d = GameRecord::parse("3 4", Rules::GRAND_SLAM_CAPTURES).unwrap();
    assert_eq!(d.start, Board::opening(4).unwrap());
    assert_eq!(d.first, Side::South);
    assert_eq!(d.rules, Rules::GRAND_SLAM_CAPTURES);
    // What Display writes, parse reads back.
    let long = GameRecord {
        moves: (0..45).map(|i| (i % 6) as u8).collect(),
        ..r.clone()
    };
    assert_eq!(
        GameRecord::parse(&long.to_string(), Rules::AWARI).unwrap(),
        long
    );
}

#[test]
fn bad_move_lists_name_the_move() {
    let e = GameRecord::parse("1. 3 2  2. 7", Rules::AWARI).unwrap_err();
    assert_eq!(e.to_string(), "move 3 ('7'): not a pit number 1..6");
    let e = GameRecord::parse("3 x", Rules::AWARI).unwrap_err();
    assert!(matches!(e, GameError::NotAPit { number: 2, .. }), "{e}");
    let e = GameRecord::parse("rules chess", Rules::AWARI).unwrap_err();
    assert!(
        e.to_string().starts_with("line 1: unknown rules preset"),
        "{e}"
    );
    let e = GameRecord::parse("first west", Rules::AWARI).unwrap_err();
    assert!(e.to_string().starts_with("line 1:"), "{e}");
    // From the opening South plays pit 3; North's pit 3 is then still full, but after
    // North sows it, playing it again finds it empty (move 4, North's turn).
    let e = record("3 3 1 3").replay().unwrap_err();
    assert_eq!(
        e.to_string(),
        "move 4 (pit 3 of north): that pit is empty",
        "{e}"
    );
    // Under awari South must feed an empty North: with 1 seed in pit 1 and 1 in pit 6,
    // only pit 6 reaches North's row.
    let e = record("start 1 0 0 0 0 1 0 0 0 0 0 0\n1")
        .replay()
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("move 1 (pit 1 of south): not allowed here"),
        "{e}"
    );
    // One move after the end of the game.
    let e = record("start 0 0 0 0 0 0 1 2 0 0 0 0\n1")
        .replay()
        .unwrap_err();
    assert!(e.to_string().contains("the game is already over"), "{e}");
    // More than 48 seeds with the captured counts.
    let e = record("captured 1 0").replay().unwrap_err();
    assert!(matches!(e, GameError::TooManySeeds { .. }), "{e}");
}

#[test]
fn a_side_with_more_than_half_wins_at_once() {
    // 3 seeds on the board, 23 + 21 captured: 47 in play. South's pit 6 (1 seed) drops
    // into North's pit 1 (1 → 2) and takes 2; North keeps its last seed, so it is no
    // grand slam. South has 25 of 47, more than half.
    let g = record("start 0 0 0 0 0 1 1 0 0 0 0 1\ncaptured 23 21\n6")
        .replay()
        .unwrap();
    let end = g.end.expect("the game is over");
    assert_eq!(end.reason, EndReason::Majority);
    assert_eq!(end.score, [25.0, 21.0]);
    assert_eq!(end.winner(), Some(Side::South));
}

#[test]
fn twenty_four_all_is_a_draw() {
    // Under grand-slam-captures South's pit 6 takes North's only 2 seeds: 24-24.
    let mut r = record("start 0 0 0 0 0 1 1 0 0 0 0 0\ncaptured 22 24\n6");
    r.rules = Rules::GRAND_SLAM_CAPTURES;
    let g = r.replay().unwrap();
    let end = g.end.unwrap();
    assert_eq!(end.reason, EndReason::EvenSplit);
    assert_eq!(end.score, [24.0, 24.0]);
    assert_eq!(end.winner(), None);
}

#[test]
fn a_side_that_cannot_move_or_cannot_feed_ends_the_game() {
    // South has no seeds: North takes the 3 left.
    let g = record("start 0 0 0 0 0 0 1 2 0 0 0 0").replay().unwrap();
    let end = g.end.unwrap();
    assert_eq!(end.reason, EndReason::CannotMove);
    assert_eq!(end.score, [0.0, 3.0]);
    // Under abapa South (1 seed in pit 1) cannot reach empty North: South takes it.
    let mut r = record("start 1 0 0 0 0 0 0 0 0 0 0 0");
    r.rules = Rules::ABAPA;
    let end = r.replay().unwrap().end.unwrap();
    assert_eq!(end.reason, EndReason::CannotFeed);
    assert_eq!(end.score, [1.0, 0.0]);
    // Under awari South must play on (the move starves North, but it is the only one).
    assert!(record("start 1 0 0 0 0 0 0 0 0 0 0 0")
        .replay()
        .unwrap()
        .end
        .is_none());
}

/// Plays the lowest legal pit until the game ends (at most 400 plies) and returns the
/// record, counting positions independently of the library.
fn play_lowest(rules: Rules, start: &str) -> (GameRecord, HashMap<(Board, Side), u32>) {
    let mut r = record(&format!("start {start}"));
    r.rules = rules;
    let mut seen: HashMap<(Board, Side), u32> = HashMap::new();
    let mut side = Side::South;
    let mut b = r.start;
    *seen.entry((b, side)).or_default() += 1;
    for _ in 0..400 {
        let g = r.replay().unwrap();
        if g.end.is_some() {
            break;
        }
        let m = rules.legal_moves(&b).as_slice()[0];
        r.moves.push(m.pit);
        b = m.child;
        side = side.other();
        *seen.entry((b, side)).or_default() += 1;
    }
    (r, seen)
}

#[test]
fn the_third_repetition_ends_the_game_as_the_preset_says() {
    // Sparse boards played by "lowest pit" often go round. Whenever such a game ends by
    // repetition, the final position must be the first one seen three times (counted
    // here, apart from the library), and the seeds left are scored by the preset's rule.
    let mut repetitions = 0;
    for start in [
        "1 0 0 0 0 0 1 0 0 0 0 0",
        "0 0 1 0 0 0 0 0 1 0 0 0",
        "1 0 0 1 0 0 1 0 0 1 0 0",
        "2 0 0 0 0 0 2 0 0 0 0 0",
        "1 1 0 0 0 0 1 1 0 0 0 0",
        "0 1 0 0 1 0 0 1 0 0 1 0",
    ] {
        for rules in [Rules::AWARI, Rules::ABAPA] {
            let (r, seen) = play_lowest(rules, start);
            let g = r.replay().unwrap();
            let Some(end) = g.end else {
                panic!("{start}: no end in 400 plies")
            };
            if end.reason != EndReason::Repetition {
                continue;
            }
            repetitions += 1;
            assert_eq!(seen[&(g.board, g.to_move)], 3, "{start}");
            assert!(seen.values().all(|&c| c <= 3));
            assert_eq!(seen.values().filter(|&&c| c == 3).count(), 1);
            let [s, n] = g.captured.map(f64::from);
            let (mine, theirs) = (
                f64::from(g.board.mover_seeds()),
                f64::from(g.board.opponent_seeds()),
            );
            let (south_row, north_row) = match g.to_move {
                Side::South => (mine, theirs),
                Side::North => (theirs, mine),
            };
            let expected = if rules == Rules::ABAPA {
                [s + south_row, n + north_row]
            } else {
                let half = (south_row + north_row) / 2.0;
                [s + half, n + half]
            };
            assert_eq!(end.score, expected, "{start} {rules}");
        }
    }
    assert!(repetitions >= 2, "too few games ended by repetition");
}
