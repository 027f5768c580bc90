//! `awari analyze` by the values: every move of a game judged by the Oracle (a table
//! lookup, or a search above the built layers).

use crate::cli::json::{analysis_summary_json, judged_json};
use crate::cli::oracle::Oracle;
use crate::cli::output::say;
use anyhow::{anyhow, Result};
use awari::game::{Game, GameRecord};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// Runs `analyze` by the values of the database folder `db` on `record`: the value before
/// each move, the value of the move played, the best moves and the seeds the move gave away.
pub fn run(db: &Path, think: Duration, record: &GameRecord, json_out: bool) -> Result<bool> {
    // Checks every move (and names a bad one) before any analysis.
    let end_game = record.replay()?;
    let oracle = Oracle::open(db, think)?;
    let mut game = GameRecord {
        moves: Vec::new(),
        ..record.clone()
    }
    .replay()?;
    let mut rows = Vec::new();
    let mut lost = [0i64; 2];
    if !json_out {
        header(record);
    }
    for (i, &pit) in record.moves.iter().enumerate() {
        let row = judge(&oracle, record, &game, i, pit)?;
        lost[game.to_move.index()] += row.loss;
        if json_out {
            rows.push(row.json);
        } else {
            say!("{}", row.text);
        }
        game.play(pit).map_err(|e| anyhow!("move {}: {e}", i + 1))?;
    }
    if json_out {
        let summary = analysis_summary_json(record, &end_game, rows, lost);
        say!("{}", serde_json::to_string_pretty(&summary)?);
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
    let json = judged_json(record.rules, i + 1, side, &a, &played, loss);
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
