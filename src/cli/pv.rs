//! `awari pv`: the principal variation from a board, of the values, of the bounds, or of
//! the own-row values (with a history: the first best move proved with the line's history
//! at each step).

use super::args::TableArgs;
use super::output::say;
use super::own_row_text::{budget, interval, occurrence, rows_kept, why_open};
use super::text::{parse_board, parse_pits, pit_name};
use anyhow::{bail, Result};
use awari::probe::PvEnd;
use awari::{own_row_history, BoundsDatabase, Database, Repetition, Tables};

/// Runs `pv`.
pub fn run(tables: &TableArgs, board: &str, moves: Option<&str>, max_plies: usize) -> Result<bool> {
    let no_moves = || {
        match moves {
        Some(_) => bail!("--moves gives the own-row values a history; the values and the bounds need none: give the board reached"),
        None => Ok(()),
    }
    };
    match tables.kind() {
        Tables::Values => no_moves().and_then(|()| values(tables, board, max_plies)),
        Tables::Bounds => no_moves().and_then(|()| bounds(tables, board, max_plies)),
        Tables::OwnRow(r) => own_row(tables, r, board, moves, max_plies),
    }
}

fn values(tables: &TableArgs, board: &str, max_plies: usize) -> Result<bool> {
    let db = Database::open(&tables.db.db, tables.db.rules)?;
    let board = parse_board(board)?;
    let pv = db.principal_variation(&board, max_plies)?;
    say!("start  {}   value {:+}", board, db.value(&board)?);
    // Captures are tallied for the side that moved first in the variation.
    let (mut first, mut second) = (0u32, 0u32);
    for (ply, step) in pv.steps.iter().enumerate() {
        let side = if ply % 2 == 0 { "A" } else { "B" };
        if ply % 2 == 0 {
            first += u32::from(step.captured);
        } else {
            second += u32::from(step.captured);
        }
        let cap = if step.captured > 0 {
            format!(" captures {}", step.captured)
        } else {
            String::new()
        };
        say!(
            "{:>4}. {side} {}  value {:+3}  plays pit {}{cap}",
            ply + 1,
            step.board,
            step.value,
            pit_name(step.pit)
        );
    }
    let side_last = if pv.steps.len() % 2 == 0 { "A" } else { "B" };
    match pv.end {
        PvEnd::GameOver { value } => say!(
            "end    {}   the game is over; {side_last} (to move) gets {:+} of the {} seeds left",
            pv.last,
            value,
            pv.last.seeds()
        ),
        PvEnd::Repetition => {
            let v = db.value(&pv.last)?;
            if v == 0 {
                say!(
                    "end    {}   this position repeats: endless play, the {} seeds left are shared",
                    pv.last,
                    pv.last.seeds()
                );
            } else {
                say!(
                    "end    {}   this position repeats although its value is {v:+}: the stored rounds here are saturated and the bounded search past them ran out of budget, so the line could not be steered to the capture",
                    pv.last
                );
            }
        }
        PvEnd::Limit => say!("end    {}   stopped after {max_plies} moves", pv.last),
    }
    say!("captured along the way: A {first}, B {second} (A moved first)");
    Ok(true)
}

fn bounds(tables: &TableArgs, board: &str, max_plies: usize) -> Result<bool> {
    let db = BoundsDatabase::open(&tables.db.db, tables.db.rules)?;
    let board = parse_board(board)?;
    let b = db.bounds(&board)?;
    say!("start  {board}   low {:+} high {:+}", b.low, b.high);
    let pv = db.principal_variation(&board, max_plies)?;
    for (k, m) in pv.steps.iter().enumerate() {
        say!(
            "{:>3}. pit {}{}  low {:+} high {:+}   -> {}",
            k + 1,
            m.pit + 1,
            if m.captured > 0 {
                format!(" captures {}", m.captured)
            } else {
                String::new()
            },
            m.low,
            m.high,
            m.child
        );
    }
    match pv.end {
        PvEnd::GameOver { value } => {
            say!("game over: the side to move gets {value:+} of the seeds left")
        }
        PvEnd::Repetition => say!(
            "the position repeats: each side keeps its own row, the side to move there gets {:+}",
            pv.repetition_score()
        ),
        PvEnd::Limit => say!("stopped after {max_plies} moves"),
    }
    Ok(true)
}

/// The own-row rule of `r`: from the position after `moves`, the first best move at each
/// step while the value is proved exact, until the game ends, the line cannot be followed,
/// or `max_plies` moves. Each position is asked with its history (the library's
/// [`own_row_history`] of the moves so far), as `probe --moves` asks it.
fn own_row(
    tables: &TableArgs,
    r: Repetition,
    board: &str,
    moves: Option<&str>,
    max_plies: usize,
) -> Result<bool> {
    let budget = budget(tables)?;
    let start = parse_board(board)?;
    let mut line = match moves {
        Some(text) => parse_pits(text, "--moves")?,
        None => Vec::new(),
    };
    let rules = tables.db.rules;
    let db = BoundsDatabase::open(&tables.db.db, rules)?;
    let own_row = db.own_row(r);
    let (first, history) = own_row_history(rules, r, &start, &line)?;
    say!(
        "start  {}   history: {} position{} since the last capture; own-row: the {} repetition ends the game",
        first,
        history.len(),
        if history.len() == 1 { "" } else { "s" },
        r.name()
    );
    // Captures are tallied for the side that moves first in the variation.
    let mut captured = [0u32; 2];
    let from = line.len();
    let end = loop {
        let ply = line.len() - from;
        let (at, history) = own_row_history(rules, r, &start, &line)?;
        let side = if ply % 2 == 0 { "A" } else { "B" };
        let a = own_row.answer(&at, &history, budget)?;
        let v = a.value;
        if a.moves.is_empty() {
            break format!(
                "end    {at}   the game is over: {side} (to move) gets {:+} of the {} seeds left",
                v.low,
                at.seeds()
            );
        }
        if !v.exact() {
            break format!(
                "end    {at}   {side} to move, value {}: the line stops: {}",
                interval(v.low, v.high),
                why_open(v.stuck, v.nodes, budget)
            );
        }
        let Some(m) = a.best_moves().first().copied() else {
            break format!(
                "end    {at}   {side} to move, value {:+}: the line stops: no move proved to keep it within --search-budget {budget}",
                v.low
            );
        };
        if ply == max_plies {
            break format!("end    {at}   stopped after {max_plies} moves");
        }
        captured[ply % 2] += u32::from(m.captured);
        let cap = if m.captured > 0 {
            format!(" captures {}", m.captured)
        } else {
            String::new()
        };
        say!(
            "{:>4}. {side} {at}  value {:+3}  plays pit {}{cap}",
            ply + 1,
            v.low,
            pit_name(m.pit)
        );
        line.push(m.pit);
        if m.ends_by_repetition {
            let other = if ply % 2 == 0 { "B" } else { "A" };
            let (mover, opponent) = rows_kept(&m.child);
            break format!(
                "end    {}   the {} occurrence of this position since the last capture ends the game: each side keeps its own row, {other} (to move) {mover} and {side} {opponent}: {other} gets {:+}",
                m.child,
                occurrence(r),
                i64::from(mover) - i64::from(opponent)
            );
        }
    };
    say!("{end}");
    say!(
        "captured along the way: A {}, B {} (A moved first)",
        captured[0],
        captured[1]
    );
    Ok(true)
}
