//! Cross-check of the `abapa` preset against an independent implementation: OpenSpiel's
//! `oware` game.
//!
//! `tests/data/openspiel_abapa.txt` holds every move of 400 uniformly random OpenSpiel games
//! (written by `tools/openspiel_transitions.py`, which documents the format). For each one
//! we check that `Rules::ABAPA.turn` offers exactly OpenSpiel's legal moves and that the move
//! played captures the same seeds and leaves the same board.
//!
//! Where the two differ only about the end of the game, we don't compare:
//! - OpenSpiel stops as soon as a player has more than 24 seeds (or both have 24). We have
//!   no scores and play on.
//! - OpenSpiel stops on the first repeated position (same board, scores and player to move
//!   since the last capture) and gives each player the seeds on its own row; our endless
//!   play is decided by the solver and shares the seeds equally.
//! - Whenever the game ends, OpenSpiel moves the seeds left on the board into the scores
//!   before we can see the board, so for the last move of a game the file holds only the two
//!   score gains. We check those against our capture and child board, and check that one of
//!   the three end conditions (score, repetition, no legal move) really holds after our move.
//!   When the end is "no legal move" we also check that our end value equals OpenSpiel's
//!   collection (each side takes its own row; one of the rows is empty then).

use awari::{Board, Move, Rules, Turn, PITS, ROW};
use std::collections::HashSet;
use std::fmt::Write as _;

const DATA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/openspiel_abapa.txt"
);
const MIN_TRANSITIONS: usize = 30_000;
/// OpenSpiel ends the game when a score goes above half of the 48 seeds.
const HALF: u32 = 24;
/// Mismatches printed in full before giving up.
const SHOWN: usize = 20;

enum Outcome {
    /// The game goes on: seeds captured, and the child from the next mover's side.
    Continues { captured: u8, child: Board },
    /// The game ended with this move: each side's score gain (captures plus the seeds it
    /// collected from its own row).
    Ends { gain_mover: u32, gain_opponent: u32 },
}

struct Transition {
    line: usize,
    game: u32,
    ply: u32,
    player: u8,
    score_mover: u32,
    score_opponent: u32,
    board: Board,
    legal: Vec<u8>,
    pit: u8,
    outcome: Outcome,
}

fn parse_board(text: &str) -> Result<Board, String> {
    let pits: Vec<u8> = text
        .split(',')
        .map(|t| {
            t.parse::<u8>()
                .map_err(|e| format!("bad pit count '{t}': {e}"))
        })
        .collect::<Result<_, _>>()?;
    let pits: [u8; PITS] = pits
        .try_into()
        .map_err(|p: Vec<u8>| format!("board '{text}' has {} pits", p.len()))?;
    Board::new(pits).map_err(|e| format!("board '{text}': {e}"))
}

fn parse_line(line: usize, text: &str) -> Result<Transition, String> {
    let f: Vec<&str> = text.split(' ').collect();
    let ends = f.get(8) == Some(&"end");
    let expected = if ends { 11 } else { 10 };
    if f.len() != expected {
        return Err(format!("expected {expected} fields, found {}", f.len()));
    }
    let num = |s: &str| {
        s.parse::<u32>()
            .map_err(|e| format!("bad number '{s}': {e}"))
    };
    let small = |s: &str| {
        s.parse::<u8>()
            .map_err(|e| format!("bad number '{s}': {e}"))
    };
    let legal = f[6].split(',').map(small).collect::<Result<Vec<u8>, _>>()?;
    let outcome = if ends {
        Outcome::Ends {
            gain_mover: num(f[9])?,
            gain_opponent: num(f[10])?,
        }
    } else {
        Outcome::Continues {
            captured: small(f[8])?,
            child: parse_board(f[9])?,
        }
    };
    Ok(Transition {
        line,
        game: num(f[0])?,
        ply: num(f[1])?,
        player: small(f[2])?,
        score_mover: num(f[3])?,
        score_opponent: num(f[4])?,
        board: parse_board(f[5])?,
        legal,
        pit: small(f[7])?,
        outcome,
    })
}

fn load() -> Vec<Transition> {
    let text = std::fs::read_to_string(DATA).unwrap_or_else(|e| {
        panic!("cannot read {DATA}: {e} (regenerate it with tools/openspiel_transitions.py)")
    });
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match parse_line(i + 1, line) {
            Ok(t) => out.push(t),
            Err(e) => panic!("{DATA}:{}: {e}\n  {line}", i + 1),
        }
    }
    out
}

fn row_seeds(board: &Board, mover_row: bool) -> u32 {
    let pits = board.pits();
    let row = if mover_row {
        &pits[..ROW]
    } else {
        &pits[ROW..]
    };
    row.iter().map(|&p| u32::from(p)).sum()
}

/// Would `pit` be a grand slam (its capture would take every opponent seed)? Worked out
/// here from scratch, only to report how often the data exercises the rule.
fn is_grand_slam(board: &Board, pit: usize) -> bool {
    let mut pits = *board.pits();
    let mut seeds = std::mem::take(&mut pits[pit]);
    let mut at = pit;
    while seeds > 0 {
        at = (at + 1) % PITS;
        if at != pit {
            pits[at] += 1;
            seeds -= 1;
        }
    }
    if at < ROW {
        return false;
    }
    let mut p = at;
    while p >= ROW && (pits[p] == 2 || pits[p] == 3) {
        pits[p] = 0;
        p -= 1;
    }
    p != at && pits[ROW..].iter().all(|&s| s == 0)
}

fn pits_text(list: &[u8]) -> String {
    let v: Vec<String> = list.iter().map(|p| p.to_string()).collect();
    format!("[{}]", v.join(","))
}

fn header(t: &Transition) -> String {
    format!(
        "line {} (game {}, ply {}, OpenSpiel player {}, scores mover {} / opponent {})\n  board {}   (mover's pits first)\n{}\n  OpenSpiel legal {}, move {}",
        t.line,
        t.game,
        t.ply,
        t.player,
        t.score_mover,
        t.score_opponent,
        t.board,
        t.board.picture(),
        pits_text(&t.legal),
        t.pit
    )
}

#[derive(Default, Debug)]
struct Coverage {
    transitions: usize,
    games: usize,
    captures: usize,
    grand_slams_offered: usize,
    grand_slams_played: usize,
    feeding_positions: usize,
    laps_played: usize,
    ends_by_score: usize,
    ends_by_repetition: usize,
    ends_by_no_move: usize,
}

#[test]
fn abapa_matches_openspiel_oware() {
    let transitions = load();
    let rules = Rules::ABAPA;
    let mut mismatches: Vec<String> = Vec::new();
    let mut file_errors: Vec<String> = Vec::new();
    let mut cov = Coverage {
        transitions: transitions.len(),
        ..Coverage::default()
    };

    // Per game: positions since the last capture (player to move, mover-relative board), to
    // tell a repetition end from the others, and what the next line must start from.
    let mut seen: HashSet<(u8, Board)> = HashSet::new();
    let mut expected_next: Option<(u32, u8, Board, u32, u32)> = None;

    for t in &transitions {
        if t.ply == 0 {
            cov.games += 1;
            seen.clear();
            seen.insert((t.player, t.board));
            if t.player != 0 || t.board != Board::opening(4).unwrap() {
                file_errors.push(format!(
                    "line {}: a game must start from the opening with player 0",
                    t.line
                ));
            }
        } else if expected_next
            != Some((t.game, t.player, t.board, t.score_mover, t.score_opponent))
        {
            file_errors.push(format!(
                "line {}: does not continue the previous line's game (expected {:?})",
                t.line, expected_next
            ));
        }
        expected_next = None;

        if t.board.opponent_seeds() == 0 {
            cov.feeding_positions += 1;
        }
        if t.legal.iter().any(|&p| is_grand_slam(&t.board, p as usize)) {
            cov.grand_slams_offered += 1;
        }
        if is_grand_slam(&t.board, t.pit as usize) {
            cov.grand_slams_played += 1;
        }
        if t.board.pit(t.pit as usize) >= 12 {
            cov.laps_played += 1;
        }

        let list = match rules.turn(&t.board) {
            Turn::Moves(list) => list,
            Turn::GameOver { value } => {
                mismatches.push(format!(
                    "{}\n  we say: game over (value {value}), OpenSpiel has legal moves",
                    header(t)
                ));
                continue;
            }
        };
        let ours: Vec<u8> = list.iter().map(|m| m.pit).collect();
        if ours != t.legal {
            mismatches.push(format!(
                "{}\n  legal moves differ: OpenSpiel {}, ours {}",
                header(t),
                pits_text(&t.legal),
                pits_text(&ours)
            ));
            continue;
        }
        let Some(&Move {
            captured, child, ..
        }) = list.iter().find(|m| m.pit == t.pit)
        else {
            unreachable!("the legal move lists are equal");
        };
        if captured > 0 {
            cov.captures += 1;
            seen.clear();
        }
        let next_player = 1 - t.player;
        let repeated = !seen.insert((next_player, child));

        match t.outcome {
            Outcome::Continues {
                captured: their_captured,
                child: their_child,
            } => {
                if captured != their_captured || child != their_child {
                    mismatches.push(format!(
                        "{}\n  expected (OpenSpiel): captured {their_captured}, child {their_child}\n  got (ours):           captured {captured}, child {child}",
                        header(t)
                    ));
                    continue;
                }
                if repeated {
                    file_errors.push(format!(
                        "line {}: position repeats since the last capture, yet OpenSpiel went on",
                        t.line
                    ));
                }
                let score = t.score_mover + u32::from(captured);
                expected_next = Some((t.game, next_player, child, t.score_opponent, score));
            }
            Outcome::Ends {
                gain_mover,
                gain_opponent,
            } => {
                // The board after the move is gone (collected); its row sums are not.
                let ours_mover = u32::from(captured) + row_seeds(&child, false);
                let ours_opponent = row_seeds(&child, true);
                if (gain_mover, gain_opponent) != (ours_mover, ours_opponent) {
                    mismatches.push(format!(
                        "{}\n  game ends; score gains (mover, opponent) expected (OpenSpiel) ({gain_mover}, {gain_opponent}), got (ours: captured {captured} + own row, child {child}) ({ours_mover}, {ours_opponent})",
                        header(t)
                    ));
                    continue;
                }
                let score = t.score_mover + u32::from(captured);
                let by_score = score > HALF || (score == HALF && t.score_opponent == HALF);
                let next_turn = rules.turn(&child);
                let by_no_move = matches!(next_turn, Turn::GameOver { .. });
                if by_score {
                    cov.ends_by_score += 1;
                } else if repeated {
                    cov.ends_by_repetition += 1;
                } else if by_no_move {
                    cov.ends_by_no_move += 1;
                } else {
                    mismatches.push(format!(
                        "{}\n  OpenSpiel ends the game here, but after our move (captured {captured}, child {child}) no score passes {HALF}, the position is new and the next player has moves",
                        header(t)
                    ));
                    continue;
                }
                // Both conventions agree when the next player cannot move: one row is
                // empty and each side takes what is on its own row.
                if let Turn::GameOver { value } = next_turn {
                    let collected = ours_opponent as i32 - row_seeds(&child, false) as i32;
                    if i32::from(value) != collected {
                        mismatches.push(format!(
                            "{}\n  after the move (child {child}) our end value is {value}, OpenSpiel's collection gives {collected}",
                            header(t)
                        ));
                    }
                }
            }
        }
    }

    eprintln!("peer_openspiel: {cov:?}");
    let first = |list: &[String]| {
        let mut report = String::new();
        for m in list.iter().take(SHOWN) {
            let _ = writeln!(report, "{m}\n");
        }
        report
    };
    assert!(
        mismatches.is_empty(),
        "{} of {} transitions disagree with OpenSpiel's oware; the first ones:\n\n{}",
        mismatches.len(),
        transitions.len(),
        first(&mismatches)
    );
    assert!(
        file_errors.is_empty(),
        "{} inconsistencies in {DATA} (regenerate it with tools/openspiel_transitions.py):\n{}",
        file_errors.len(),
        first(&file_errors)
    );
    assert!(
        cov.transitions >= MIN_TRANSITIONS,
        "only {} transitions in {DATA}, expected at least {MIN_TRANSITIONS}",
        cov.transitions
    );
    // A regenerated file must still exercise the rules that tell the presets apart.
    assert!(
        cov.grand_slams_played >= 10
            && cov.feeding_positions >= 50
            && cov.ends_by_no_move >= 10
            && cov.laps_played >= 100,
        "{DATA} covers too few special cases: {cov:?}"
    );
}
