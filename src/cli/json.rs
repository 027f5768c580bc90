//! The JSON shapes the command line and the web API print: one function per shape, so that
//! `probe --json`, `analyze --json` and the API say a position the same way.

use awari::probe::{Outcome, Verdict};
use awari::search::Analysis;
use awari::{Board, BoundsDatabase, MoveValue, Rules, Turn};
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
        // The cycle rule by its own name, as these answers have always spelled it.
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

/// The answer to a bad line of `probe --batch` with `--json`, so that every line of a JSON
/// stream parses.
pub fn batch_error_json(line_no: usize, message: &str) -> Value {
    json!({ "line": line_no, "error": message })
}
