//! `awari pv`: the principal variation from a board, of the values or of the bounds (of
//! the own-row values, with a history: `own_row_game`).

use super::args::{Cycles, TableArgs};
use super::output::say;
use super::text::{parse_board, pit_name};
use anyhow::Result;
use awari::probe::PvEnd;
use awari::{BoundsDatabase, Database};

/// Runs `pv`.
pub fn run(tables: &TableArgs, board: &str, moves: Option<&str>, max_plies: usize) -> Result<bool> {
    if moves.is_some() && tables.cycles.repetition().is_none() {
        anyhow::bail!("--moves gives the own-row values a history; the values and the bounds need none: give the board reached");
    }
    match tables.cycles {
        Cycles::Share => values(tables, board, max_plies),
        Cycles::Bounds => bounds(tables, board, max_plies),
        Cycles::OwnRowFirst | Cycles::OwnRowThird => {
            super::own_row_game::pv(tables, board, moves, max_plies)
        }
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
