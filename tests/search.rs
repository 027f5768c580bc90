//! The search beyond the tables, against an independent plain minimax, and the playing
//! levels.
//!
//! Layers 0..=12 of `awari` are built once; a second folder holds only layers 0..=LOW, so
//! positions of layers LOW+1..=12 must be searched there while their true values are known
//! from the full folder.

use awari::game::{EndReason, GameRecord, Side};
use awari::rules::Turn;
use awari::search::{analyse, choose_move, Level, Limits, Rng};
use awari::{Board, Database, Rules};
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

mod common;

const TOP: u32 = 12;
const LOW: u32 = 9;

/// The two folders, under Cargo's per-target scratch folder.
struct Fixture {
    full: PathBuf,
    partial: PathBuf,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let root = common::scratch_root("awari-search-tests");
        let full = common::library_fixture(&root, Rules::AWARI, TOP);
        let partial = common::kept_dir(&root);
        common::copy_layers(&full, &partial, Rules::AWARI, 0..=LOW);
        Fixture { full, partial }
    })
}

/// Plain depth-limited minimax, written apart from the library's search: a position in a
/// layer up to LOW is worth its table value, a finished game its end value, a position
/// reached with no depth left 0; otherwise the best of `captured - child`.
fn minimax(full: &Database, board: &Board, depth: u32) -> i32 {
    if board.seeds() <= LOW {
        return i32::from(full.value(board).unwrap());
    }
    match full.rules().turn(board) {
        Turn::GameOver { value } => i32::from(value),
        Turn::Moves(moves) => {
            if depth == 0 {
                return 0;
            }
            moves
                .iter()
                .map(|m| i32::from(m.captured) - minimax(full, &m.child, depth - 1))
                .max()
                .unwrap()
        }
    }
}

#[test]
fn every_move_value_is_the_minimax_value_at_the_depth_reached() {
    let f = fixture();
    let full = Database::open(&f.full, Rules::AWARI).unwrap();
    let partial = Database::open(&f.partial, Rules::AWARI).unwrap();
    let mut checked = 0;
    for n in LOW + 1..=TOP {
        for (k, b) in common::spread_sample(n, 40, u64::from(n))
            .iter()
            .enumerate()
        {
            // Depths 1..=5 without a clock; every sixth board with no think time at all,
            // which still finishes depth 1.
            let depth = 1 + (k as u32 % 6);
            let limits = if depth == 6 {
                Limits::think(Duration::ZERO)
            } else {
                Limits {
                    think: Duration::from_secs(60),
                    max_depth: depth,
                    tables: true,
                }
            };
            let a = analyse(&partial, b, &limits).unwrap();
            if a.game_over {
                assert!(a.moves.is_empty());
                continue;
            }
            let reached = a.depth;
            assert!(reached >= 1 && reached <= depth, "{b:?}: depth {reached}");
            for m in &a.moves {
                let expected = i32::from(m.captured) - minimax(&full, &m.child, reached - 1);
                assert_eq!(i32::from(m.value), expected, "{b:?} pit {}", m.pit);
                checked += 1;
            }
            let best = a.moves.iter().map(|m| m.value).max().unwrap();
            assert_eq!(a.value, best);
            assert!(a
                .best
                .iter()
                .all(|&p| a.moves[a.moves.iter().position(|m| m.pit == p).unwrap()].value == best));
        }
    }
    assert!(checked > 200, "only {checked} move values checked");
}

#[test]
fn an_exact_answer_is_the_tables_answer() {
    let f = fixture();
    let full = Database::open(&f.full, Rules::AWARI).unwrap();
    let partial = Database::open(&f.partial, Rules::AWARI).unwrap();
    let mut exact = 0;
    for b in common::spread_sample(LOW + 1, 100, 3) {
        let a = analyse(&partial, &b, &Limits::think(Duration::from_millis(10))).unwrap();
        if !a.exact {
            continue;
        }
        exact += 1;
        assert_eq!(a.value, full.value(&b).unwrap(), "{b:?}");
        let truth = full.moves_with_values(&b).unwrap();
        assert_eq!(a.moves, truth, "{b:?}");
    }
    // Positions whose lines all leave the layer soon come out exact; those with a cycle
    // of non-capturing moves never do (a depth-limited search cannot see round a cycle).
    assert!(exact >= 4, "only {exact} of 100 searches came out exact");
    // A position in the tables is looked up: exact at depth 0, no search.
    let b = common::spread_sample(LOW, 1, 5)[0];
    let a = analyse(&partial, &b, &Limits::think(Duration::from_millis(1))).unwrap();
    assert!(a.exact && a.depth == 0 && a.nodes == 0);
    assert_eq!(a.value, full.value(&b).unwrap());
}

#[test]
fn the_search_stops_within_its_think_time() {
    let f = fixture();
    let db = Database::open(&f.full, Rules::AWARI).unwrap();
    let think = Duration::from_millis(300);
    let a = analyse(&db, &Board::opening(4).unwrap(), &Limits::think(think)).unwrap();
    assert!(!a.exact);
    assert!(a.depth >= 2, "depth {}", a.depth);
    assert_eq!(a.moves.len(), 6);
    // A contract, not a speed figure: the answer comes within the think time (+10%; a
    // loaded test machine gets a little more slack).
    assert!(
        a.elapsed <= think + think / 10 + Duration::from_millis(100),
        "took {:?}",
        a.elapsed
    );
}

/// A search told to stop by another thread (a Ctrl-C, a client gone) ends within moments,
/// even in its first depth, and gives no answer; one never told runs its think time out.
#[test]
fn a_stopped_search_ends_within_moments() {
    use awari::search::analyse_until;
    use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    use std::time::Instant;
    let f = fixture();
    let db = Database::open(&f.full, Rules::AWARI).unwrap();
    let board = Board::opening(4).unwrap();
    let limits = Limits::think(Duration::from_secs(30));
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    let found = std::thread::scope(|scope| {
        let search = scope.spawn(|| analyse_until(&db, &board, &limits, &stop));
        std::thread::sleep(Duration::from_millis(200));
        stop.store(true, Relaxed);
        search.join().unwrap()
    });
    assert!(found.unwrap().is_none());
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    // Set before it starts: not even the first depth.
    let started = Instant::now();
    assert!(analyse_until(&db, &board, &limits, &stop)
        .unwrap()
        .is_none());
    assert!(started.elapsed() < Duration::from_secs(1));
    let never = AtomicBool::new(false);
    let quick = Limits::think(Duration::from_millis(50));
    assert!(analyse_until(&db, &board, &quick, &never)
        .unwrap()
        .is_some());
}

/// The computer's move told to stop gives no move at any level, rather than one chosen
/// from a search cut short; untold, it moves, and a finished game has no move.
#[test]
fn a_stopped_computer_move_gives_no_move() {
    use awari::search::choose_move_until;
    use std::sync::atomic::AtomicBool;
    let f = fixture();
    let db = Database::open(&f.full, Rules::AWARI).unwrap();
    let board = Board::opening(4).unwrap();
    let think = Duration::from_millis(50);
    let (stop, never) = (AtomicBool::new(true), AtomicBool::new(false));
    for level in Level::ALL {
        let mut rng = Rng::new(1);
        let stopped = choose_move_until(&db, &board, level, think, &mut rng, &stop).unwrap();
        assert!(stopped.is_none(), "{level}");
        let moved = choose_move_until(&db, &board, level, think, &mut rng, &never).unwrap();
        assert!(moved.is_some_and(|c| c.is_some()), "{level}");
    }
    let over: Board = "0 0 0 0 0 0 0 0 0 0 0 1".parse().unwrap();
    assert!(matches!(db.rules().turn(&over), Turn::GameOver { .. }));
    let mut rng = Rng::new(1);
    let none = choose_move_until(&db, &over, Level::Good, think, &mut rng, &never).unwrap();
    assert_eq!(none, Some(None));
}

#[test]
fn perfect_play_converts_a_won_position() {
    let f = fixture();
    let db = Database::open(&f.full, Rules::AWARI).unwrap();
    let mut games = 0;
    for n in [8, 10, 12] {
        for b in common::spread_sample(n, 12, 11) {
            let v = db.value(&b).unwrap();
            if v <= 0 || db.rules().game_over_value(&b).is_some() {
                continue;
            }
            games += 1;
            let mut r = GameRecord::new(Rules::AWARI, b, Side::South);
            let mut rng = Rng::new(1);
            let g = loop {
                let g = r.replay().unwrap();
                if g.end.is_some() || r.moves.len() > 300 {
                    break g;
                }
                let c = choose_move(
                    &db,
                    &g.board,
                    Level::Perfect,
                    Duration::from_secs(5),
                    &mut rng,
                )
                .unwrap()
                .unwrap();
                // Perfect play never gives a seed away.
                assert_eq!(c.play.value, db.value(&g.board).unwrap(), "{:?}", g.board);
                r.moves.push(c.play.pit);
            };
            let end = g
                .end
                .unwrap_or_else(|| panic!("{b:?}: no end in 300 plies"));
            assert_eq!(end.winner(), Some(Side::South), "{b:?} value {v}");
            match end.reason {
                // Play may go round once the win is banked, never before: the position
                // that repeated is worth 0 to its mover.
                EndReason::Repetition => {
                    assert_eq!(db.value(&g.board).unwrap(), 0, "{b:?} went round while won")
                }
                EndReason::Majority => {}
                // Otherwise the final difference is the value, as the tables promise.
                _ => assert_eq!(end.score[0] - end.score[1], f64::from(v), "{b:?}"),
            }
            if end.reason == EndReason::Repetition {
                assert_eq!(end.score[0] - end.score[1], f64::from(v), "{b:?}");
            }
        }
    }
    assert!(games >= 6, "only {games} won positions tried");
}

#[test]
fn levels_play_legal_moves_and_repeat_with_their_seed() {
    let f = fixture();
    let db = Database::open(&f.full, Rules::AWARI).unwrap();
    for (k, b) in common::spread_sample(TOP, 8, 7).iter().enumerate() {
        for level in Level::ALL {
            let pick = |seed| {
                choose_move(
                    &db,
                    b,
                    level,
                    Duration::from_millis(20),
                    &mut Rng::new(seed),
                )
                .unwrap()
                .map(|c| c.play.pit)
            };
            let legal: Vec<u8> = db.rules().legal_moves(b).iter().map(|m| m.pit).collect();
            let seed = k as u64;
            let first = pick(seed);
            match first {
                None => assert!(legal.is_empty()),
                Some(p) => assert!(legal.contains(&p), "{level}: {p} on {b:?}"),
            }
            // Strong and Expert may be cut short by the clock; the others are not.
            if matches!(level, Level::Fair | Level::Good | Level::Perfect) {
                assert_eq!(pick(seed), first, "{level} with seed {seed}");
            }
        }
    }
    assert_eq!("perfect".parse::<Level>().unwrap(), Level::Perfect);
    assert_eq!("1".parse::<Level>().unwrap(), Level::Fair);
    assert!("7".parse::<Level>().is_err());
}
