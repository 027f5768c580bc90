//! `awari probe --cycles own-row-first` (or `own-row-third`): one position after `--moves`
//! from the board, with its history, by the library's proof search from the tables; or
//! many boards with an empty history from the tables alone (`--batch`).

use super::ProbeRequest;
use crate::cli::args::TableArgs;
use crate::cli::batch::{self, Line};
use crate::cli::json::own_row_json;
use crate::cli::output::{self, say};
use crate::cli::own_row_text::{budget, print_answer};
use crate::cli::text::{parse_board, parse_pits, pit_names, the_board};
use anyhow::{bail, Result};
use awari::{own_row_history, Board, BoundsDatabase, OwnRowAnswer, OwnRowTables, Repetition};
use serde_json::Value;

/// Runs `probe` under the own-row rule of `r`: the position after `--moves` from the
/// board, with its history.
pub fn run(tables: &TableArgs, r: Repetition, request: ProbeRequest) -> Result<bool> {
    if request.captured.is_some() {
        bail!("--captured is for the values");
    }
    if request.batch {
        return run_batch(tables, r, request.json);
    }
    let start = the_board(request.board)?;
    let pits = match &request.moves {
        Some(text) => parse_pits(text, "--moves")?,
        None => Vec::new(),
    };
    let rules = tables.db.rules;
    let db = BoundsDatabase::open(&tables.db.db, rules)?;
    let own_row = db.own_row(r);
    let (board, history) = own_row_history(rules, r, &start, &pits)?;
    let answer = own_row.answer(&board, &history, budget(tables)?)?;
    if request.json {
        say!("{}", own_row_json(&own_row, &board, history.len(), &answer));
        return Ok(true);
    }
    say!(
        "board  {}   ({} seeds, rules {}, own-row: the {} repetition ends the game)",
        board,
        board.seeds(),
        rules,
        r.name()
    );
    say!("{}", board.picture());
    say!(
        "history: {} position{} since the last capture",
        history.len(),
        if history.len() == 1 { "" } else { "s" }
    );
    print_answer(&answer, tables.search_budget);
    Ok(true)
}

/// `probe --batch`: each line a board, answered with an empty history from the tables
/// alone (no search: `--search-budget` is not used), every board and child looked up in
/// one grouped pass. A line: "LOW HIGH best P,Q" (the stored interval, exact when the two
/// meet; when exact, the moves the tables prove to keep it, else those with the largest
/// proved low), "LOW HIGH game-over", or "V V unproved" (exact, but no move is proved to
/// keep it without a search: probe the board alone); or `--json`'s object.
fn run_batch(tables: &TableArgs, r: Repetition, json_out: bool) -> Result<bool> {
    let db = BoundsDatabase::open(&tables.db.db, tables.db.rules)?;
    let own_row = db.own_row(r);
    batch::run(json_out, |lines| {
        batch_answers(&own_row, lines)
            .into_iter()
            .map(|a| a.map(|(board, a)| batch_line(&own_row, &board, &a, json_out)))
            .collect()
    })
}

/// A batch's line for an answer (see [`run_batch`]).
fn batch_line(own_row: &OwnRowTables, board: &Board, a: &OwnRowAnswer, json_out: bool) -> String {
    if json_out {
        let mut obj = own_row_json(own_row, board, 0, a);
        obj["from_tables"] = Value::Bool(true);
        return obj.to_string();
    }
    let (low, high) = (a.value.low, a.value.high);
    if a.moves.is_empty() {
        return format!("{low} {high} game-over");
    }
    let best = a.best_moves();
    if best.is_empty() {
        return format!("{low} {high} unproved");
    }
    format!(
        "{low} {high} best {}",
        pit_names(best.iter().map(|m| m.pit), ",")
    )
}

/// Answers a batch of lines: the boards whose layers (and their children's) are there in
/// one grouped pass ([`OwnRowTables::table_answers`]); a line that fails on its own (bad
/// text, a layer not built) gets its own error, and a damaged file fails every line of
/// the pass.
fn batch_answers(
    own_row: &OwnRowTables,
    lines: &[Line],
) -> Vec<std::result::Result<(Board, OwnRowAnswer), String>> {
    let rules = own_row.rules();
    let mut results: Vec<Option<std::result::Result<(Board, OwnRowAnswer), String>>> =
        Vec::with_capacity(lines.len());
    let mut pending: Vec<(usize, Board)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let text = match line.board() {
            Ok(t) => t,
            Err(why) => {
                results.push(Some(Err(why)));
                continue;
            }
        };
        let board = match parse_board(text) {
            Ok(b) => b,
            Err(e) => {
                results.push(Some(Err(output::error_line(&e))));
                continue;
            }
        };
        let readable = |b: &Board| own_row.has_intervals(b.seeds());
        let moves = rules.legal_moves(&board);
        if !readable(&board) || moves.iter().any(|m| !readable(&m.child)) {
            // The board alone, for the error that names the missing layer.
            let one = own_row.table_answers(&[board]);
            results.push(Some(
                one.map(|mut a| (board, a.remove(0)))
                    .map_err(|e| output::error_line(&e.into())),
            ));
            continue;
        }
        pending.push((i, board));
        results.push(None);
    }
    let boards: Vec<Board> = pending.iter().map(|&(_, b)| b).collect();
    match own_row.table_answers(&boards) {
        Ok(answers) => {
            for ((i, board), a) in pending.into_iter().zip(answers) {
                results[i] = Some(Ok((board, a)));
            }
        }
        Err(e) => {
            let msg = output::error_line(&e.into());
            for (i, _) in pending {
                results[i] = Some(Err(msg.clone()));
            }
        }
    }
    results
        .into_iter()
        .map(|r| r.expect("every line answered"))
        .collect()
}
