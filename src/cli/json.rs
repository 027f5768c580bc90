//! The JSON shapes the command line and the web API print: one function per shape, so that
//! `probe --json`, `analyze --json`, `stats --json` and the API say a position the same way,
//! for every kind of tables. The commands compute; these functions only lay out.

use awari::game::{Game, GameRecord, Side};
use awari::probe::{Outcome, Verdict};
use awari::search::{Analysis, Choice, Level};
use awari::store::{LayerFile, LayerSummary};
use awari::{
    Board, BoundsDatabase, MoveValue, OwnRowAnswer, OwnRowMove, OwnRowTables, Rules, Tables, Turn,
};
use serde_json::{json, Value};

/// The fields of a position that `probe --json` and the web API share.
pub fn position_json(
    rules: Rules,
    board: &Board,
    value: i8,
    game_over: bool,
    moves: &[MoveValue],
    best: &[u8],
) -> Value {
    json!({
        "board": board.to_string(),
        "rules": rules.name(),
        "seeds": board.seeds(),
        "value": value,
        "verdict": Verdict::of_difference(value.into()).as_str(),
        "game_over": game_over,
        "moves": moves.iter().map(|m| json!({
            "pit": m.pit,
            "captured": m.captured,
            "value": m.value,
            "child": m.child.to_string(),
        })).collect::<Vec<_>>(),
        "best": best,
    })
}

/// The JSON of an analysis: `probe --json`'s fields, plus where the value comes from.
pub fn analysis_json(rules: Rules, a: &Analysis) -> Value {
    let mut obj = position_json(rules, &a.board, a.value, a.game_over, &a.moves, &a.best);
    obj["exact"] = json!(a.exact);
    obj["depth"] = json!(a.depth);
    obj["nodes"] = json!(a.nodes);
    obj["ms"] = json!(a.elapsed.as_secs_f64() * 1000.0);
    obj
}

/// The `outcome` field: the end of a game in progress.
pub fn outcome_json(o: &Outcome) -> Value {
    json!({
        "verdict": o.verdict.as_str(),
        "mover_score": o.mover_score,
        "opponent_score": o.opponent_score,
    })
}

/// `probe --cycles bounds --json`: the pair of a position, each move's pair, the best moves.
pub fn bounds_json(db: &BoundsDatabase, board: &Board) -> anyhow::Result<Value> {
    let b = db.bounds(board)?;
    let moves = db.moves_with_bounds(board)?;
    let best = db.best_moves(board)?;
    Ok(json!({
        "board": board.to_string(),
        "rules": db.rules().name(),
        // The cycle rule by its own name, as these answers have always spelled it (not
        // the kind's name, `bounds`).
        "cycles": "own-row",
        "low": b.low,
        "high": b.high,
        "exact": b.exact(),
        "game_over": matches!(db.rules().turn(board), Turn::GameOver { .. }),
        "moves": moves.iter().map(|m| json!({
            "pit": m.pit, "captured": m.captured, "low": m.low, "high": m.high,
            "child": m.child.to_string(),
        })).collect::<Vec<_>>(),
        "best": best.iter().map(|m| m.pit).collect::<Vec<_>>(),
    }))
}

/// `probe --cycles own-row-… --json` (and the API's `/api/position` under the own-row
/// rule): the position reached after a history of `history` positions, its value or the
/// interval proved, and every move's. Pits are 1..6 here, as `--moves` gives them.
pub fn own_row_json(
    tables: &OwnRowTables,
    board: &Board,
    history: usize,
    a: &OwnRowAnswer,
) -> Value {
    let moves: Vec<Value> = a
        .moves
        .iter()
        .map(|m| {
            json!({
                "pit": m.pit + 1,
                "captured": m.captured,
                "low": m.low,
                "high": m.high,
                "exact": m.low == m.high,
                "ends_by_repetition": m.ends_by_repetition,
                "child": m.child.to_string(),
            })
        })
        .collect();
    json!({
        "board": board.to_string(),
        "seeds": board.seeds(),
        "rules": tables.rules().to_string(),
        "cycles": Tables::OwnRow(tables.repetition()).to_string(),
        "history": history,
        "low": a.value.low,
        "high": a.value.high,
        "exact": a.value.exact(),
        "nodes": a.value.nodes,
        "stuck": a.value.stuck,
        "moves": moves,
        "best": a.best_moves().iter().map(|m| m.pit + 1).collect::<Vec<_>>(),
    })
}

/// The answer to a bad line of `probe --batch` with `--json`, so that every line of a JSON
/// stream parses.
pub fn batch_error_json(line_no: usize, message: &str) -> Value {
    json!({ "line": line_no, "error": message })
}

/// `stats --json`, a layer of the values: positions, outcomes, bytes and the histogram.
pub fn values_stats_json(n: u32, file: &LayerFile, s: &LayerSummary) -> Value {
    let hist: serde_json::Map<String, Value> = (-(n as i32)..=n as i32)
        .filter(|&v| s.count(v) > 0)
        .map(|v| (v.to_string(), json!(s.count(v))))
        .collect();
    json!({
        "seeds": n,
        "positions": s.positions,
        "wins": s.wins(),
        "draws": s.draws(),
        "losses": s.losses(),
        "bytes": file.bytes(),
        "bytes_per_position": file.bytes() as f64 / s.positions as f64,
        "histogram": hist,
    })
}

/// `stats --json`, a layer of a kind stored as pairs (the bounds, the own-row values).
pub fn pairs_stats_json(n: u32, positions: u64, exact: u64, bytes: u64) -> Value {
    json!({"layer": n, "positions": positions, "exact": exact, "bytes": bytes})
}

/// `analyze --json`, one move judged by the values: `a` the analysis of the position
/// before it, `played` the move, `lost` the seeds it gave away.
pub fn judged_json(
    rules: Rules,
    number: usize,
    side: Side,
    a: &Analysis,
    played: &MoveValue,
    lost: i64,
) -> Value {
    json!({
        "move": number,
        "side": side.name(),
        "pit": played.pit,
        "captured": played.captured,
        "value_before": a.value,
        "value_played": played.value,
        "best": a.best,
        "lost": lost,
        "exact": a.exact,
        "depth": a.depth,
        "position": analysis_json(rules, a),
    })
}

/// `analyze --json` by the values: the game, its moves judged (`rows`, as
/// [`judged_json`] lays them out), the seeds each side gave away, and its end if reached.
pub fn analysis_summary_json(
    record: &GameRecord,
    end_game: &Game,
    rows: Vec<Value>,
    lost: [i64; 2],
) -> Value {
    let end = end_game.end.map(|e| end_game.end_text(&e));
    json!({
        "rules": record.rules.name(),
        "start": record.start.to_string(),
        "first": record.first.name(),
        "moves": rows,
        "lost": { "south": lost[0], "north": lost[1] },
        "captured": end_game.captured,
        "end": end,
    })
}

/// `analyze --json` under the own-row rule, one move: the value before it (`before`, an
/// interval when not proved), the move played, the best pits (0..=5), the seeds it gave
/// away where both values are proved, and the position before it as
/// [`own_row_json`] gives it.
pub fn own_row_judged_json(
    number: usize,
    side: Side,
    before: (i8, i8),
    played: &OwnRowMove,
    best: &[u8],
    lost: Option<i64>,
    position: &Value,
) -> Value {
    let (p, b) = (played, before);
    let exact = |l: i8, h: i8| (l == h).then_some(l);
    json!({
        "move": number,
        "side": side.name(),
        "pit": p.pit,
        "captured": p.captured,
        "exact": b.0 == b.1,
        "low": b.0,
        "high": b.1,
        "value_before": exact(b.0, b.1),
        "played": { "exact": p.low == p.high, "low": p.low, "high": p.high },
        "value_played": exact(p.low, p.high),
        "best": best,
        "lost": lost,
        "ends_by_repetition": p.ends_by_repetition,
        "position": position,
    })
}

/// How an analysis under the own-row rule ends: the captures along the moves judged
/// (South, North), whether a repetition ended the game, and the sentence that says it.
pub struct OwnRowEnd<'a> {
    pub captured: [u32; 2],
    pub repetition: bool,
    pub text: &'a str,
}

/// `analyze --json` under the own-row rule of `tables`: the game, its moves judged (`rows`,
/// as [`own_row_judged_json`] lays them out), the seeds each side gave away, and its end.
pub fn own_row_analysis_json(
    record: &GameRecord,
    tables: Tables,
    rows: Vec<Value>,
    lost: [i64; 2],
    end: &OwnRowEnd,
) -> Value {
    json!({
        "rules": record.rules.name(),
        "cycles": tables.to_string(),
        "start": record.start.to_string(),
        "first": record.first.name(),
        "moves": rows,
        "lost": { "south": lost[0], "north": lost[1] },
        "captured": end.captured,
        "repetition": end.repetition,
        "end": end.text,
    })
}

/// The API's `/api/game`: the record, the pits as the page shows them, captures, the plies,
/// the end of the game if reached, and `position` (the analysis of the current position,
/// or null when the game is over).
pub fn game_json(record: &GameRecord, game: &Game, position: Value) -> Value {
    let rules = record.rules;
    let over = game.end.map(|end| {
        json!({
            "reason": format!("{:?}", end.reason).to_lowercase(),
            "text": game.end_text(&end),
            "score": end.score,
            "winner": end.winner().map(Side::name),
        })
    });
    json!({
        "record": {
            "rules": rules.name(),
            "start": record.start.to_string(),
            "first": record.first.name(),
            "captured": record.captured,
            "moves": record.moves,
        },
        "text": record.to_string(),
        "rules": rules.name(),
        "to_move": game.to_move.name(),
        "board": game.board.to_string(),
        "pits": game.absolute(),
        "captured": game.captured,
        "plies": game.plies.iter().map(|p| json!({
            "side": p.side.name(),
            "pit": p.pit,
            "captured": p.captured,
        })).collect::<Vec<_>>(),
        "occurrences": game.occurrences(),
        "over": over,
        "position": position,
    })
}

/// The API's `/api/move`: the computer's move at `level` (`pit` 0..=5 of the side to move;
/// `null` when the game is over).
pub fn move_json(level: Level, choice: Option<&Choice>) -> Value {
    match choice {
        None => json!({ "pit": null, "level": level.name() }),
        Some(c) => json!({
            "pit": c.play.pit,
            "captured": c.play.captured,
            "value": c.play.value,
            "child": c.play.child.to_string(),
            "random": c.random,
            "level": level.name(),
            "exact": c.analysis.exact,
            "depth": c.analysis.depth,
        }),
    }
}

/// An error the API answers: `{"error": "<one line>"}`.
pub fn error_json(message: &str) -> Value {
    json!({ "error": message })
}
