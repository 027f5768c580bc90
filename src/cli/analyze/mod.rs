//! `awari analyze`: every move of a game judged, by the values or under the own-row rule
//! (one module a kind, chosen here once; the bounds give no value with a game's history).

mod own_row;
mod values;

use super::args::TableArgs;
use super::input::read_game;
use super::output::shown;
use super::text::check_think;
use anyhow::{bail, Context, Result};
use awari::game::GameRecord;
use awari::Tables;
use std::path::Path;

/// Runs `analyze`: replays the game in `file` (stdin when it is `-` or missing) and judges
/// every move.
pub fn run(tables: &TableArgs, file: Option<&Path>, think_ms: u64, json_out: bool) -> Result<bool> {
    let think = check_think(think_ms)?;
    type Judge<'a> = Box<dyn FnOnce(&GameRecord) -> Result<bool> + 'a>;
    let judge: Judge = match tables.kind() {
        Tables::Values => Box::new(|record| values::run(&tables.db.db, think, record, json_out)),
        Tables::Bounds => bail!("analyze judges by values: the bounds give no value with a game's history; use --cycles own-row-first or own-row-third for the own-row rule"),
        Tables::OwnRow(r) => Box::new(move |record| own_row::run(tables, r, record, json_out)),
    };
    let text = match file {
        Some(p) if p != Path::new("-") => {
            let name = shown(&p.display().to_string());
            let f = std::fs::File::open(p).with_context(|| format!("reading {name}"))?;
            read_game(f, &name)?
        }
        _ => read_game(std::io::stdin().lock(), "stdin")?,
    };
    let record = GameRecord::parse(&text, tables.db.rules)?;
    judge(&record)
}
