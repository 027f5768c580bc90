//! `awari probe --cycles bounds`: the pair of one board with every move's, or a batch from
//! stdin.

use super::ProbeRequest;
use crate::cli::args::TableArgs;
use crate::cli::batch::{self, Answer, Line};
use crate::cli::json::bounds_json;
use crate::cli::output::{self, captures_column, say};
use crate::cli::text::{parse_board, pit_names, the_board};
use anyhow::{bail, Result};
use awari::{Board, BoundsDatabase, Turn};

/// Runs `probe` of the bounds.
pub fn run(tables: &TableArgs, request: ProbeRequest) -> Result<bool> {
    if request.captured.is_some() {
        bail!("--captured is for the values, not available with --cycles bounds (a range, not a value)");
    }
    let db = BoundsDatabase::open(&tables.db.db, tables.db.rules)?;
    if request.batch {
        let json_out = request.json;
        return batch::run(json_out, |lines| {
            lines
                .iter()
                .map(|line| bounds_line(&db, line, json_out))
                .collect()
        });
    }
    let board = the_board(request.board)?;
    if request.json {
        say!("{}", bounds_json(&db, &board)?);
        return Ok(true);
    }
    bounds_text(&db, &board)
}

/// A batch's line of the bounds: "low high best p,q" (or "low high game-over"), or JSON.
fn bounds_line(db: &BoundsDatabase, line: &Line, json_out: bool) -> Answer {
    let Some(text) = line.board_text()? else {
        return Ok(String::new());
    };
    let answer = parse_board(text).and_then(|board| {
        if json_out {
            return Ok(bounds_json(db, &board)?.to_string());
        }
        let b = db.bounds(&board)?;
        let best = db.best_moves(&board)?;
        Ok(if best.is_empty() {
            format!("{} {} game-over", b.low, b.high)
        } else {
            let pits = pit_names(best.iter().map(|m| m.pit), ",");
            format!("{} {} best {pits}", b.low, b.high)
        })
    });
    answer.map_err(|e| output::error_line(&e))
}

fn bounds_text(db: &BoundsDatabase, board: &Board) -> Result<bool> {
    let b = db.bounds(board)?;
    say!(
        "board  {}   ({} seeds, rules {}, own-row cycles)",
        board,
        board.seeds(),
        db.rules()
    );
    say!("{}", board.picture());
    say!(
        "low {:+}  high {:+}   ({})",
        b.low,
        b.high,
        if b.exact() {
            "exact: the same whatever the history"
        } else {
            "a range: the result depends on which position repeats"
        }
    );
    if let Turn::GameOver { .. } = db.rules().turn(board) {
        say!("the game is over: the side to move cannot play");
    }
    for m in db.moves_with_bounds(board)? {
        say!(
            "  pit {}  {}  low {:+3} high {:+3}   -> {}  (opponent to move)",
            m.pit + 1,
            captures_column(m.captured),
            m.low,
            m.high,
            m.child
        );
    }
    let best = db.best_moves(board)?;
    if !best.is_empty() {
        say!(
            "best   pit {}",
            pit_names(best.iter().map(|m| m.pit), ", pit ")
        );
    }
    Ok(true)
}
