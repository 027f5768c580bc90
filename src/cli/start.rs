//! `awari start`: the standard opening with K seeds in every pit, from the values, the
//! bounds or the own-row values (its history empty).

use super::args::TableArgs;
use super::output::say;
use super::own_row_text::{budget, print_answer};
use super::probe::values::answer;
use super::text::{opening_seeds, pit_name, pit_names, verdict_words};
use anyhow::{bail, Result};
use awari::{Board, BoundsDatabase, Database, Repetition, Tables};

/// Runs `start`.
pub fn run(tables: &TableArgs, per_pit: u8) -> Result<bool> {
    let seeds = opening_seeds(per_pit)?;
    match tables.kind() {
        Tables::Values => values(tables, per_pit, seeds),
        Tables::Bounds => bounds(tables, per_pit, seeds),
        Tables::OwnRow(r) => own_row(tables, r, &Board::opening(per_pit)?),
    }
}

fn values(tables: &TableArgs, per_pit: u8, seeds: u32) -> Result<bool> {
    let db = Database::open(&tables.db.db, tables.db.rules)?;
    if db.layer(seeds).is_none() {
        bail!(
            "the opening with {per_pit} seeds per pit needs the layers up to {seeds}; build them with: awari build --rules {} --max-seeds {seeds} --db {}",
            db.rules(),
            awari::store::shell_word(db.dir())
        );
    }
    let board = Board::opening(per_pit)?;
    let a = answer(&db, board)?;
    say!(
        "opening: {per_pit} per pit, {seeds} seeds, rules {}",
        db.rules()
    );
    say!("value  {:+}   ({})", a.value, verdict_words(a.value));
    for m in &a.moves {
        say!("  pit {}  value {:+}", pit_name(m.pit), m.value);
    }
    say!(
        "best first moves: pit {}",
        pit_names(a.best.iter().copied(), ", pit ")
    );
    Ok(true)
}

fn bounds(tables: &TableArgs, per_pit: u8, seeds: u32) -> Result<bool> {
    let rules = tables.db.rules;
    let db = BoundsDatabase::open(&tables.db.db, rules)?;
    if db.complete_up_to().is_none_or(|top| top < seeds) {
        bail!(
            "the opening with {per_pit} seeds per pit needs the bounds layers up to {seeds}; build them with: awari build --cycles bounds --rules {rules} --max-seeds {seeds} --db {}",
            awari::store::shell_word(db.dir())
        );
    }
    let board = Board::opening(per_pit)?;
    let b = db.bounds(&board)?;
    say!("opening: {per_pit} per pit, {seeds} seeds, rules {rules}, own-row cycles");
    say!(
        "low {:+}  high {:+}  ({})",
        b.low,
        b.high,
        if b.exact() { "exact" } else { "range" }
    );
    for m in db.moves_with_bounds(&board)? {
        say!("  pit {}  low {:+} high {:+}", m.pit + 1, m.low, m.high);
    }
    say!(
        "best first moves: pit {}",
        pit_names(db.best_moves(&board)?.iter().map(|m| m.pit), ", pit ")
    );
    Ok(true)
}

/// The opening under the own-row rule of `r`, its history empty.
fn own_row(tables: &TableArgs, r: Repetition, board: &Board) -> Result<bool> {
    let rules = tables.db.rules;
    let db = BoundsDatabase::open(&tables.db.db, rules)?;
    let answer = db.own_row(r).answer(board, &[], budget(tables)?)?;
    say!(
        "opening: {} seeds, rules {rules}, own-row: the {} repetition ends the game",
        board.seeds(),
        r.name()
    );
    print_answer(&answer, tables.search_budget);
    Ok(true)
}
