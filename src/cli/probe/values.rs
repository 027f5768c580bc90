//! `awari probe` of the values: one board with every move's value, or a batch from stdin
//! looked up in one grouped pass.

use super::ProbeRequest;
use crate::cli::args::TableArgs;
use crate::cli::batch::{self, Line};
use crate::cli::json::{outcome_json, position_json};
use crate::cli::output::{self, captures_column, say, shown};
use crate::cli::text::{parse_board, pit_name, pit_names, the_board, verdict_words};
use anyhow::{anyhow, bail, Result};
use awari::{Board, Database, MoveValue, Rules, Turn};
use rayon::prelude::*;
use serde_json::Value;

fn parse_captured(text: &str) -> Result<(u32, u32)> {
    let bad = || {
        anyhow!(
            "bad --captured '{}': expected two seed counts like 20,12, at most {} in all",
            shown(text),
            awari::MAX_SEEDS
        )
    };
    let (a, b) = text.split_once(',').ok_or_else(bad)?;
    let a: u32 = a.trim().parse().map_err(|_| bad())?;
    let b: u32 = b.trim().parse().map_err(|_| bad())?;
    // Checked here, before any sum can overflow; the board's seeds are checked later.
    if u64::from(a) + u64::from(b) > u64::from(awari::MAX_SEEDS) {
        return Err(bad());
    }
    Ok((a, b))
}

fn check_captured(board: &Board, captured: Option<(u32, u32)>) -> Result<()> {
    if let Some((a, b)) = captured {
        if u64::from(board.seeds()) + u64::from(a) + u64::from(b) > u64::from(awari::MAX_SEEDS) {
            bail!(
                "--captured {a},{b} with {} seeds on the board makes more than {} seeds",
                board.seeds(),
                awari::MAX_SEEDS
            );
        }
    }
    Ok(())
}

/// Everything `probe` says about one board.
pub struct ProbeAnswer {
    pub board: Board,
    pub value: i8,
    pub game_over: bool,
    pub moves: Vec<MoveValue>,
    pub best: Vec<u8>,
}

/// The answer for `board`, probed move by move.
pub fn answer(db: &Database, board: Board) -> Result<ProbeAnswer> {
    let value = db.value(&board)?;
    let moves = db.moves_with_values(&board)?;
    Ok(assemble(board, value, &moves, db.rules()))
}

fn assemble(board: Board, value: i8, moves: &[MoveValue], rules: Rules) -> ProbeAnswer {
    let best_value = moves.iter().map(|m| m.value).max();
    let best = moves
        .iter()
        .filter(|m| Some(m.value) == best_value)
        .map(|m| m.pit)
        .collect();
    ProbeAnswer {
        board,
        value,
        game_over: matches!(rules.turn(&board), Turn::GameOver { .. }),
        moves: moves.to_vec(),
        best,
    }
}

fn answer_json(db: &Database, a: &ProbeAnswer, captured: Option<(u32, u32)>) -> Value {
    let mut obj = position_json(
        db.rules(),
        &a.board,
        a.value,
        a.game_over,
        &a.moves,
        &a.best,
    );
    if let Some((mine, theirs)) = captured {
        let o = awari::probe::outcome(a.value, a.board.seeds(), mine, theirs);
        obj["outcome"] = outcome_json(&o);
    }
    obj
}

/// Runs `probe` of the values.
pub fn run(tables: &TableArgs, request: ProbeRequest) -> Result<bool> {
    let db = Database::open(&tables.db.db, tables.db.rules)?;
    let captured = request
        .captured
        .as_deref()
        .map(parse_captured)
        .transpose()?;
    let json_out = request.json;
    if request.batch {
        return batch::run(json_out, |lines| {
            answer_lines(&db, lines, captured, |a| {
                values_line(&db, a, captured, json_out)
            })
        });
    }
    let board = the_board(request.board)?;
    check_captured(&board, captured)?;
    let a = answer(&db, board)?;
    if json_out {
        say!("{}", answer_json(&db, &a, captured));
        return Ok(true);
    }
    say!(
        "board  {}   ({} seeds, rules {})",
        a.board,
        a.board.seeds(),
        db.rules()
    );
    say!("{}", a.board.picture());
    say!("value  {:+}   ({})", a.value, verdict_words(a.value));
    if a.game_over {
        say!("the game is over: the side to move cannot play");
    }
    for m in &a.moves {
        say!(
            "  pit {}  {}  value {:+3}   -> {}  (opponent to move)",
            pit_name(m.pit),
            captures_column(m.captured),
            m.value,
            m.child
        );
    }
    if !a.best.is_empty() {
        say!("best   pit {}", pit_names(a.best.iter().copied(), ", pit "));
    }
    if let Some((mine, theirs)) = captured {
        let o = awari::probe::outcome(a.value, a.board.seeds(), mine, theirs);
        say!(
            "outcome {} for the side to move, final score {} - {}",
            o.verdict.as_str(),
            o.mover_score,
            o.opponent_score
        );
    }
    Ok(true)
}

/// A batch's line for an answer: the value and the best pits, or the JSON object.
fn values_line(
    db: &Database,
    a: &ProbeAnswer,
    captured: Option<(u32, u32)>,
    json_out: bool,
) -> String {
    if json_out {
        return answer_json(db, a, captured).to_string();
    }
    let best = if a.best.is_empty() {
        "game-over".to_string()
    } else {
        format!("best {}", pit_names(a.best.iter().copied(), ","))
    };
    format!("{} {}", a.value, best)
}

/// Answers a batch of lines: every board and every child of its moves is looked up in one
/// grouped pass ([`Database::values_many`]), and each answer is written out by `render` as
/// soon as it is assembled. A line keeps only its board and its children's boards while
/// the lookups run (its moves are worked out again after them), so that a group of a
/// million lines fits in a few hundred megabytes. Lines that fail on their own (bad text,
/// a layer not built) get their own error; a damaged file fails every line that needs it.
fn answer_lines(
    db: &Database,
    lines: &[Line],
    captured: Option<(u32, u32)>,
    render: impl Fn(&ProbeAnswer) -> String + Sync,
) -> Vec<batch::Answer> {
    let rules = db.rules();
    let mut results: Vec<Option<batch::Answer>> = Vec::with_capacity(lines.len());
    let mut wanted: Vec<Board> = Vec::new();
    // For each line answered in the grouped pass: where its board and then its moves'
    // children are in `wanted`.
    let mut pending: Vec<(u32, u32)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let board = match line
            .board()
            .and_then(|t| parse_board(t).map_err(|e| output::error_line(&e)))
            .and_then(|b| {
                check_captured(&b, captured).map_err(|e| output::error_line(&e))?;
                Ok(b)
            }) {
            Ok(b) => b,
            Err(why) => {
                results.push(Some(Err(why)));
                continue;
            }
        };
        let moves = rules.legal_moves(&board);
        let needs_missing =
            !db.has_layer(board.seeds()) || moves.iter().any(|m| !db.has_layer(m.child.seeds()));
        if needs_missing {
            // The single-board path names the missing layer and the command that builds it.
            let answer = answer(db, board).map_err(|e| output::error_line(&e));
            results.push(Some(answer.map(|a| render(&a))));
            continue;
        }
        let at = u32::try_from(wanted.len()).expect("a batch holds under 4 G lookups");
        pending.push((i as u32, at));
        wanted.push(board);
        wanted.extend(moves.iter().map(|m| m.child));
        results.push(None);
    }
    match db.values_many(&wanted) {
        Ok(values) => {
            // Rendered in parallel: a JSON object takes longer than its lookups.
            let rendered: Vec<String> = pending
                .par_iter()
                .map(|&(_, at)| {
                    let (at, board) = (at as usize, wanted[at as usize]);
                    let mv: Vec<MoveValue> = rules
                        .legal_moves(&board)
                        .iter()
                        .enumerate()
                        .map(|(k, m)| MoveValue {
                            pit: m.pit,
                            captured: m.captured,
                            child: m.child,
                            value: m.captured as i8 - values[at + 1 + k],
                        })
                        .collect();
                    render(&assemble(board, values[at], &mv, rules))
                })
                .collect();
            for (&(i, _), text) in pending.iter().zip(rendered) {
                results[i as usize] = Some(Ok(text));
            }
        }
        Err(e) => {
            let msg = e.to_string();
            for (i, _) in pending {
                results[i as usize] = Some(Err(msg.clone()));
            }
        }
    }
    results
        .into_iter()
        .map(|r| r.expect("every line answered"))
        .collect()
}
