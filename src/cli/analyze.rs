//! `awari analyze`: every move of a game judged against the values (under the own-row
//! rule: `own_row_game`).

use super::args::{Cycles, TableArgs};
use super::input::read_game;
use super::json::analysis_json;
use super::oracle::Oracle;
use super::output::{say, shown};
use super::text::check_think;
use anyhow::{anyhow, bail, Context, Result};
use awari::game::{Game, GameRecord};
use serde_json::{json, Value};
use std::path::Path;

/// Runs `analyze`: replays a game and judges every move: the value before it, the value of
/// the move played, the best moves and the seeds the move gave away.
pub fn run(tables: &TableArgs, file: Option<&Path>, think_ms: u64, json_out: bool) -> Result<bool> {
    let think = check_think(think_ms)?;
    if tables.cycles == Cycles::Bounds {
        bail!("analyze judges by values: the bounds give no value with a game's history; use --cycles own-row-first or own-row-third for the own-row rule");
    }
    let db = &tables.db;
    let text = match file {
        Some(p) if p != Path::new("-") => {
            let name = shown(&p.display().to_string());
            let f = std::fs::File::open(p).with_context(|| format!("reading {name}"))?;
            read_game(f, &name)?
        }
        _ => read_game(std::io::stdin().lock(), "stdin")?,
    };
    let record = GameRecord::parse(&text, db.rules)?;
    if tables.cycles != Cycles::Share {
        return super::own_row_game::analyze(tables, &record, json_out);
    }
    // Checks every move (and names a bad one) before any analysis.
    let end_game = record.replay()?;
    let oracle = Oracle::open(&db.db, think)?;
    let mut game = GameRecord {
        moves: Vec::new(),
        ..record.clone()
    }
    .replay()?;
    let mut rows = Vec::new();
    let mut lost = [0i64; 2];
    if !json_out {
        header(&record);
    }
    for (i, &pit) in record.moves.iter().enumerate() {
        let row = judge(&oracle, &record, &game, i, pit)?;
        lost[game.to_move.index()] += row.loss;
        if json_out {
            rows.push(row.json);
        } else {
            say!("{}", row.text);
        }
        game.play(pit).map_err(|e| anyhow!("move {}: {e}", i + 1))?;
    }
    if json_out {
        say!("{}", summary_json(&record, &end_game, rows, lost)?);
    } else {
        summary_text(&end_game, lost);
    }
    Ok(true)
}

fn header(record: &GameRecord) {
    say!(
        "rules {}, start {} ({} to move), {} moves",
        record.rules,
        record.start,
        record.first,
        record.moves.len()
    );
    say!(
        "{:>4}  {:<5}  {:>3}  {:>6}  {:>6}  {:<9}  {:>4}  how",
        "move",
        "side",
        "pit",
        "before",
        "played",
        "best",
        "lost"
    );
}

/// One move judged: the seeds it gave away, and its line and JSON row.
struct Row {
    loss: i64,
    text: String,
    json: Value,
}

/// Judges move `i` (pit `pit`) of the game, played from `game`.
fn judge(oracle: &Oracle, record: &GameRecord, game: &Game, i: usize, pit: u8) -> Result<Row> {
    let a = oracle.analyse(record.rules, &game.board)?;
    let played = a
        .moves
        .iter()
        .find(|m| m.pit == pit)
        .copied()
        .expect("replay checked the move");
    let loss = i64::from(a.value) - i64::from(played.value);
    let side = game.to_move;
    let how = if a.exact {
        "exact".to_string()
    } else {
        format!("depth {}", a.depth)
    };
    let best: Vec<String> = a.best.iter().map(|p| (p + 1).to_string()).collect();
    let json = json!({
        "move": i + 1,
        "side": side.name(),
        "pit": pit,
        "captured": played.captured,
        "value_before": a.value,
        "value_played": played.value,
        "best": a.best,
        "lost": loss,
        "exact": a.exact,
        "depth": a.depth,
        "position": analysis_json(record.rules, &a),
    });
    let text = format!(
        "{:>4}  {:<5}  {:>3}  {:>+6}  {:>+6}  {:<9}  {:>4}  {how}",
        i + 1,
        side.name(),
        pit + 1,
        a.value,
        played.value,
        best.join(","),
        loss
    );
    Ok(Row { loss, text, json })
}

fn summary_json(
    record: &GameRecord,
    end_game: &Game,
    rows: Vec<Value>,
    lost: [i64; 2],
) -> Result<String> {
    let end = end_game.end.map(|e| end_game.end_text(&e));
    Ok(serde_json::to_string_pretty(&json!({
        "rules": record.rules.name(),
        "start": record.start.to_string(),
        "first": record.first.name(),
        "moves": rows,
        "lost": { "south": lost[0], "north": lost[1] },
        "captured": end_game.captured,
        "end": end,
    }))?)
}

fn summary_text(end_game: &Game, lost: [i64; 2]) {
    say!(
        "seeds given away: south {}, north {}; captured so far: south {}, north {}",
        lost[0],
        lost[1],
        end_game.captured[0],
        end_game.captured[1]
    );
    match end_game.end.map(|e| end_game.end_text(&e)) {
        Some(text) => say!("game over: {text}"),
        None => say!("the game goes on: {} to move", end_game.to_move),
    }
}
