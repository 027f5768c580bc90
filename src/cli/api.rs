//! The JSON API and the page of `awari serve`: what each request is answered, from the
//! values of the three presets ([`Oracle`]).
//!
//! Routes (every answer is JSON except the page):
//! * `GET /` — the page (HTML, CSS and JavaScript in one file, nothing fetched elsewhere);
//!   `/?rules=R&board=B` opens it at that position.
//! * `GET /api/position?rules=R&board=B` — the fields of `probe --json` plus `exact`,
//!   `depth` (plies searched, 0 for a table lookup), `nodes` and `ms`.
//! * `GET /api/position?rules=R&board=B&cycles=own-row-first&moves=1,4,2` (or
//!   `own-row-third`) — under the own-row rule, the position after `moves` (pits 1..6, by
//!   spaces or commas; none by default) with their history: what `probe --cycles
//!   own-row-first --json --moves` says, proved within `budget=N` search nodes (default
//!   [`DEFAULT_BUDGET`], at most [`MAX_BUDGET`]: that cap, not the client's going away,
//!   bounds such a search).
//! * `GET /api/game?game=TEXT` — replays a game in the move-list format ([`awari::game`]):
//!   the record, the pits as the page shows them, captures, the end of the game if reached,
//!   and the analysis of the current position.
//! * `GET /api/move?game=TEXT&level=L` (or `rules=R&board=B&level=L`) — the computer's move
//!   at a level (`fair`, `good`, `strong`, `expert`, `perfect` or 1..5); `seed=N` repeats
//!   the random choices.
//!
//! Bad input gets HTTP 400 and `{"error": "<one line>"}`; a failure of the server (a
//! damaged table) gets a 500 whose message names no local path, and the whole error goes to
//! the server's stderr. Of the other tables only the own-row values are served, and only
//! by `/api/position`: `cycles=bounds` (whose pair is no value of a game) and any
//! `cycles=` but `share` on the other routes are refused with a 400, as is `moves=` or
//! `budget=` without an own-row `cycles`.

use super::args::cycles_option;
use super::json::{analysis_json, error_json, game_json, move_json, outcome_json, own_row_json};
use super::oracle::Oracle;
use super::output::{error_line, shown, tell};
use super::text::parse_pits;
use anyhow::Result;
use awari::game::{Game, GameRecord};
use awari::search::{self, Analysis, Level, Rng};
use awari::{own_row_history, Board, ProbeError, Repetition, Rules, Tables};
use serde_json::Value;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::AtomicBool;

const PAGE: &str = include_str!("oracle.html");

/// The own-row search budget of a request that names none.
pub const DEFAULT_BUDGET: u64 = 100_000;
/// The largest a request may ask: one request's search stays within seconds.
pub const MAX_BUDGET: u64 = 1_000_000;

/// A request refused for its input (HTTP 400), as opposed to a failure of the server.
#[derive(Debug)]
struct BadRequest(String);

impl std::fmt::Display for BadRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for BadRequest {}

fn bad(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(BadRequest(msg.into()))
}

/// A search stopped because its client went away: answered (to no one) without a word in
/// the server's log.
#[derive(Debug)]
struct ClientGone;

impl std::fmt::Display for ClientGone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the search was stopped: its client went away")
    }
}
impl std::error::Error for ClientGone {}

/// The analysis of `board`, or [`ClientGone`] once `stop` is set.
fn analyse(oracle: &Oracle, rules: Rules, board: &Board, stop: &AtomicBool) -> Result<Analysis> {
    oracle
        .analyse_until(rules, board, stop)?
        .ok_or_else(|| anyhow::Error::new(ClientGone))
}

/// `%XX` and `+` decoded; invalid escapes are kept as written.
fn url_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 3;
                        continue;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The path and the parameters. A parameter given twice is refused: with one of its values
/// kept, `cycles=own-row&cycles=share` passed the refusal of the bounds.
fn query(url: &str) -> Result<(String, HashMap<String, String>)> {
    let (path, q) = url.split_once('?').unwrap_or((url, ""));
    let mut params = HashMap::new();
    for kv in q.split('&').filter(|kv| !kv.is_empty()) {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        let k = url_decode(k);
        if params.contains_key(&k) {
            return Err(bad(format!("parameter '{}' is given twice", shown(&k))));
        }
        params.insert(k, url_decode(v));
    }
    Ok((path.to_string(), params))
}

fn rules_param(params: &HashMap<String, String>) -> Result<Rules> {
    match params.get("rules") {
        None => Ok(Rules::AWARI),
        Some(r) => r.parse::<Rules>().map_err(|e| bad(e.to_string())),
    }
}

fn board_param(params: &HashMap<String, String>) -> Result<Board> {
    let text = params
        .get("board")
        .ok_or_else(|| bad("missing parameter 'board' (12 pit counts)"))?;
    text.parse::<Board>()
        .map_err(|e| bad(format!("bad board '{}': {e}", shown(text.trim()))))
}

fn game_param(params: &HashMap<String, String>) -> Result<(GameRecord, Game)> {
    let text = params
        .get("game")
        .ok_or_else(|| bad("missing parameter 'game' (a move list)"))?;
    let record = GameRecord::parse(text, rules_param(params)?).map_err(|e| bad(e.to_string()))?;
    let game = record.replay().map_err(|e| bad(e.to_string()))?;
    Ok((record, game))
}

/// Everything the page shows about a game.
fn game_answer(
    oracle: &Oracle,
    record: &GameRecord,
    game: &Game,
    stop: &AtomicBool,
) -> Result<Value> {
    let rules = record.rules;
    let position = if game.end.is_none() {
        let a = analyse(oracle, rules, &game.board, stop)?;
        let mover = game.to_move.index();
        let o = awari::probe::outcome(
            a.value,
            game.board.seeds(),
            game.captured[mover],
            game.captured[1 - mover],
        );
        let mut p = analysis_json(rules, &a);
        p["outcome"] = outcome_json(&o);
        p
    } else {
        Value::Null
    };
    Ok(game_json(record, game, position))
}

fn seed_param(params: &HashMap<String, String>) -> Result<u64> {
    match params.get("seed") {
        Some(s) => s
            .trim()
            .parse()
            .map_err(|_| bad(format!("bad seed '{}': expected a whole number", shown(s)))),
        None => Ok(std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)),
    }
}

/// The computer's move as JSON (`pit` 0..=5 of the side to move; `null` when over), or
/// [`ClientGone`] once `stop` is set.
fn move_answer(
    oracle: &Oracle,
    rules: Rules,
    board: &Board,
    level: Level,
    seed: u64,
    stop: &AtomicBool,
) -> Result<Value> {
    let mut rng = Rng::new(seed);
    let db = oracle.db(rules);
    let choice = search::choose_move_until(&db, board, level, oracle.think, &mut rng, stop)?
        .ok_or_else(|| anyhow::Error::new(ClientGone))?;
    Ok(move_json(level, choice.as_ref()))
}

/// The own-row rule a request asks for with `cycles=`: `None` for the values. A request
/// for the bounds, or for the own-row values anywhere but `/api/position`, must not get a
/// value in their place.
fn cycles_param(path: &str, params: &HashMap<String, String>) -> Result<Option<Repetition>> {
    let asked = params.get("cycles");
    let r = match asked.map(|text| (text, text.parse::<Tables>())) {
        None | Some((_, Ok(Tables::Values))) => None,
        Some((_, Ok(Tables::OwnRow(r)))) if path == "/api/position" => Some(r),
        Some((other, _)) => {
            return Err(bad(format!(
                "cycles={} is not served here: the API answers from the values (cycles={}), and /api/position also under the own-row rule (cycles={} or {}); the bounds are in: awari probe{}",
                shown(other),
                Tables::Values,
                Tables::OwnRow(Repetition::First),
                Tables::OwnRow(Repetition::Third),
                cycles_option(Tables::Bounds),
            )))
        }
    };
    if r.is_none() {
        if let Some(k) = ["moves", "budget"]
            .into_iter()
            .find(|k| params.contains_key(*k))
        {
            return Err(bad(format!(
                "'{k}' is for the own-row rule (cycles={} or {})",
                Tables::OwnRow(Repetition::First),
                Tables::OwnRow(Repetition::Third),
            )));
        }
    }
    Ok(r)
}

fn budget_param(params: &HashMap<String, String>) -> Result<u64> {
    let Some(text) = params.get("budget") else {
        return Ok(DEFAULT_BUDGET);
    };
    match text.trim().parse::<u64>() {
        Ok(n @ 1..=MAX_BUDGET) => Ok(n),
        _ => Err(bad(format!(
            "bad budget '{}': search nodes 1 to {MAX_BUDGET}",
            shown(text)
        ))),
    }
}

/// An own-row question's failure: a layer not built or a bad history is the request's
/// (400), anything else the server's.
fn own_row_error(e: ProbeError) -> anyhow::Error {
    match e {
        ProbeError::LayerMissing {
            tables,
            seeds,
            rules,
            ..
        } => {
            let option = cycles_option(tables);
            bad(format!(
                "{} {seeds} of rules '{rules}' is not built on this server \
                 (awari build{option} --rules {rules} --max-seeds {seeds})",
                tables.layer_name()
            ))
        }
        ProbeError::History(why) => bad(format!("moves: {why}")),
        other => anyhow::Error::new(other),
    }
}

/// `/api/position` under the own-row rule: `probe --cycles own-row-* --json`'s answer.
/// A layer not built is the request's (a 400 naming the layer, not the server's folder);
/// a table that cannot be read, the server's (500).
fn own_row_answer(
    oracle: &Oracle,
    r: Repetition,
    params: &HashMap<String, String>,
) -> Result<Value> {
    let rules = rules_param(params)?;
    let start = board_param(params)?;
    let pits = match params.get("moves") {
        Some(text) => parse_pits(text, "moves").map_err(|e| bad(error_line(&e)))?,
        None => Vec::new(),
    };
    let budget = budget_param(params)?;
    let db = oracle.own_row(rules)?;
    let own_row = db.own_row(r);
    let (board, history) = own_row_history(rules, r, &start, &pits).map_err(own_row_error)?;
    let a = own_row
        .answer(&board, &history, budget)
        .map_err(own_row_error)?;
    Ok(own_row_json(&own_row, &board, history.len(), &a))
}

/// The answer to `url`; a search it starts stops once `stop` is set (the client gone).
pub fn handle(oracle: &Oracle, url: &str, stop: &AtomicBool) -> Result<Reply> {
    let (path, params) = query(url)?;
    let own_row = match path.starts_with("/api/") {
        true => cycles_param(&path, &params)?,
        false => None,
    };
    let body = match path.as_str() {
        "/" | "/index.html" => return Ok((200, "text/html; charset=utf-8", PAGE.to_string())),
        "/api/position" => match own_row {
            Some(r) => own_row_answer(oracle, r, &params)?,
            None => {
                let rules = rules_param(&params)?;
                let board = board_param(&params)?;
                analysis_json(rules, &analyse(oracle, rules, &board, stop)?)
            }
        },
        "/api/game" => {
            let (record, game) = game_param(&params)?;
            game_answer(oracle, &record, &game, stop)?
        }
        "/api/move" => {
            let level: Level = params
                .get("level")
                .map(|l| {
                    l.parse()
                        .map_err(|e: search::LevelError| bad(e.to_string()))
                })
                .transpose()?
                .unwrap_or(Level::Perfect);
            let seed = seed_param(&params)?;
            let (rules, board) = if params.contains_key("game") {
                let (record, game) = game_param(&params)?;
                if let Some(end) = game.end {
                    return Err(bad(format!("the game is over: {}", game.end_text(&end))));
                }
                (record.rules, game.board)
            } else {
                (rules_param(&params)?, board_param(&params)?)
            };
            move_answer(oracle, rules, &board, level, seed, stop)?
        }
        _ => {
            return Ok((
                404,
                "application/json",
                error_json(&format!("no such page: {}", shown(&path))).to_string(),
            ))
        }
    };
    Ok((200, "application/json", body.to_string()))
}

/// A response: status, content type, body.
pub type Reply = (u16, &'static str, String);

/// Runs a handler, turning its error into a 400 (bad input) or 500 (anything else) and a
/// panic into a 500: a connection thread never dies of a request.
pub fn guarded(handler: impl FnOnce() -> Result<Reply>) -> Reply {
    match catch_unwind(AssertUnwindSafe(handler)) {
        Ok(Ok(r)) => r,
        Ok(Err(e)) if e.downcast_ref::<ClientGone>().is_some() => (
            503,
            "application/json",
            error_json(&e.to_string()).to_string(),
        ),
        Ok(Err(e)) if e.downcast_ref::<BadRequest>().is_some() => {
            let msg = error_line(&e);
            (400, "application/json", error_json(&msg).to_string())
        }
        Ok(Err(e)) => {
            // The cause names files of the server's machine: it goes to the server's log,
            // and the client learns only that the server failed.
            tell!("awari serve: error: {}", error_line(&e));
            (
                500,
                "application/json",
                error_json("the server could not answer: a table file is damaged or unreadable (the server's log says which)").to_string(),
            )
        }
        Err(_) => (
            500,
            "application/json",
            error_json("internal error while answering this request").to_string(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_handler_answers_500_and_returns() {
        let (status, kind, body) = guarded(|| panic!("a bug in a handler"));
        assert_eq!((status, kind), (500, "application/json"));
        assert!(body.contains("internal error"), "{body}");
    }

    #[test]
    fn bad_input_is_400_and_other_errors_500_each_one_line() {
        let (status, _, body) = guarded(|| Err(bad("bad board 'x'\nforged")));
        assert_eq!(status, 400);
        let v: Value = serde_json::from_str(&body).unwrap();
        assert!(!v["error"].as_str().unwrap().contains('\n'), "{body}");
        let (status, _, _) = guarded(|| Err(anyhow::anyhow!("a file could not be read")));
        assert_eq!(status, 500);
        let ok = guarded(|| Ok((200, "text/plain", "fine".to_string())));
        assert_eq!(ok, (200, "text/plain", "fine".to_string()));
    }
}
