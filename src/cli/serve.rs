//! `awari serve`: the Awari Oracle as a local web page and a JSON API.
//!
//! The HTTP server is `tiny_http`: small, synchronous, no async runtime to compile, and
//! enough for a page that one person uses on their own machine. A few worker threads share
//! the listening socket; each request is answered inside `catch_unwind`, so a panic in a
//! handler becomes an HTTP 500 and the server goes on.
//!
//! Routes (every answer is JSON except the page):
//! * `GET /` — the page (HTML, CSS and JavaScript in one file, nothing fetched elsewhere);
//!   `/?rules=R&board=B` opens it at that position.
//! * `GET /api/position?rules=R&board=B` — the fields of `probe --json` plus `exact`,
//!   `depth` (plies searched, 0 for a table lookup), `nodes` and `ms`.
//! * `GET /api/game?game=TEXT` — replays a game in the move-list format ([`awari::game`]):
//!   the record, the pits as the page shows them, captures, the end of the game if reached,
//!   and the analysis of the current position.
//! * `GET /api/move?game=TEXT&level=L` (or `rules=R&board=B&level=L`) — the computer's move
//!   at a level (`fair`, `good`, `strong`, `expert`, `perfect` or 1..5); `seed=N` repeats
//!   the random choices.
//!
//! Bad input gets HTTP 400 and `{"error": "<one line>"}`.

use super::output::{say, shown};
use anyhow::{anyhow, Context, Result};
use awari::game::{Game, GameRecord, Side};
use awari::search::{self, Analysis, Level, Limits, Rng};
use awari::{Board, Database, Rules};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

const PAGE: &str = include_str!("oracle.html");
/// Threads answering requests (a search holds its thread for up to the think time).
const WORKERS: usize = 4;

/// The JSON of an analysis: `probe --json`'s fields, plus where the value comes from.
pub(super) fn analysis_json(rules: Rules, a: &Analysis) -> Value {
    let mut obj =
        super::commands::position_json(rules, &a.board, a.value, a.game_over, &a.moves, &a.best);
    obj["exact"] = json!(a.exact);
    obj["depth"] = json!(a.depth);
    obj["nodes"] = json!(a.nodes);
    obj["ms"] = json!(a.elapsed.as_secs_f64() * 1000.0);
    obj
}

/// The databases of the three presets in one folder, opened once.
pub(super) struct Oracle {
    dbs: HashMap<Rules, Database>,
    pub think: Duration,
}

impl Oracle {
    pub(super) fn open(dir: &Path, think: Duration) -> Result<Oracle> {
        let mut dbs = HashMap::new();
        for rules in Rules::ALL {
            dbs.insert(rules, Database::open(dir, rules)?);
        }
        Ok(Oracle { dbs, think })
    }

    pub(super) fn db(&self, rules: Rules) -> &Database {
        &self.dbs[&rules]
    }

    pub(super) fn analyse(&self, rules: Rules, board: &Board) -> Result<Analysis> {
        Ok(search::analyse(
            self.db(rules),
            board,
            &Limits::think(self.think),
        )?)
    }
}

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

fn query(url: &str) -> (String, HashMap<String, String>) {
    let (path, q) = url.split_once('?').unwrap_or((url, ""));
    let params = q
        .split('&')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (url_decode(k), url_decode(v))
        })
        .collect();
    (path.to_string(), params)
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

fn side_json(side: Side) -> &'static str {
    side.name()
}

/// Everything the page shows about a game.
pub(super) fn game_json(oracle: &Oracle, record: &GameRecord, game: &Game) -> Result<Value> {
    let rules = record.rules;
    let position = if game.end.is_none() {
        let a = oracle.analyse(rules, &game.board)?;
        let mover = game.to_move.index();
        let o = awari::probe::outcome(
            a.value,
            game.board.seeds(),
            game.captured[mover],
            game.captured[1 - mover],
        );
        let mut p = analysis_json(rules, &a);
        p["outcome"] = json!({
            "verdict": o.verdict.as_str(),
            "mover_score": o.mover_score,
            "opponent_score": o.opponent_score,
        });
        p
    } else {
        Value::Null
    };
    let over = game.end.map(|end| {
        json!({
            "reason": format!("{:?}", end.reason).to_lowercase(),
            "text": game.end_text(&end),
            "score": end.score,
            "winner": end.winner().map(side_json),
        })
    });
    Ok(json!({
        "record": {
            "rules": rules.name(),
            "start": record.start.to_string(),
            "first": side_json(record.first),
            "captured": record.captured,
            "moves": record.moves,
        },
        "text": record.to_string(),
        "rules": rules.name(),
        "to_move": side_json(game.to_move),
        "board": game.board.to_string(),
        "pits": game.absolute(),
        "captured": game.captured,
        "plies": game.plies.iter().map(|p| json!({
            "side": side_json(p.side),
            "pit": p.pit,
            "captured": p.captured,
        })).collect::<Vec<_>>(),
        "occurrences": game.occurrences(),
        "over": over,
        "position": position,
    }))
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

/// The computer's move as JSON (`pit` 0..=5 of the side to move; `null` when over).
pub(super) fn move_json(
    oracle: &Oracle,
    rules: Rules,
    board: &Board,
    level: Level,
    seed: u64,
) -> Result<Value> {
    let mut rng = Rng::new(seed);
    let choice = search::choose_move(oracle.db(rules), board, level, oracle.think, &mut rng)?;
    Ok(match choice {
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
    })
}

fn handle(oracle: &Oracle, url: &str) -> Result<(u16, &'static str, String)> {
    let (path, params) = query(url);
    let body = match path.as_str() {
        "/" | "/index.html" => return Ok((200, "text/html; charset=utf-8", PAGE.to_string())),
        "/api/position" => {
            let rules = rules_param(&params)?;
            let board = board_param(&params)?;
            analysis_json(rules, &oracle.analyse(rules, &board)?)
        }
        "/api/game" => {
            let (record, game) = game_param(&params)?;
            game_json(oracle, &record, &game)?
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
            move_json(oracle, rules, &board, level, seed)?
        }
        _ => {
            return Ok((
                404,
                "application/json",
                json!({ "error": format!("no such page: {}", shown(&path)) }).to_string(),
            ))
        }
    };
    Ok((200, "application/json", body.to_string()))
}

/// A response: status, content type, body.
type Reply = (u16, &'static str, String);

/// Runs a handler, turning its error into a 400 (bad input) or 500 (anything else) and a
/// panic into a 500: a worker thread never dies of a request.
fn guarded(handler: impl FnOnce() -> Result<Reply>) -> Reply {
    match catch_unwind(AssertUnwindSafe(handler)) {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            let status = if e.downcast_ref::<BadRequest>().is_some() {
                400
            } else {
                500
            };
            let msg = super::output::clip_line(&format!("{e:#}"));
            (
                status,
                "application/json",
                json!({ "error": msg }).to_string(),
            )
        }
        Err(_) => (
            500,
            "application/json",
            json!({ "error": "internal error while answering this request" }).to_string(),
        ),
    }
}

/// Answers one request; never panics and never lets a handler's panic through.
fn answer(oracle: &Oracle, request: tiny_http::Request) {
    let url = request.url().to_string();
    let is_get = matches!(
        request.method(),
        tiny_http::Method::Get | tiny_http::Method::Head
    );
    let (status, kind, body) = if is_get {
        guarded(|| handle(oracle, &url))
    } else {
        (
            405,
            "application/json",
            json!({ "error": "only GET is served" }).to_string(),
        )
    };
    let header = tiny_http::Header::from_bytes(&b"Content-Type"[..], kind.as_bytes())
        .expect("a valid header");
    let no_cache = tiny_http::Header::from_bytes(&b"Cache-Control"[..], &b"no-store"[..])
        .expect("a valid header");
    let response = tiny_http::Response::from_string(body)
        .with_status_code(status)
        .with_header(header)
        .with_header(no_cache);
    // A client that went away is not the server's problem.
    let _ = request.respond(response);
}

/// Runs the server until the process is stopped.
pub fn cmd_serve(db: &Path, bind: &str, port: u16, think_ms: u64) -> Result<bool> {
    if think_ms == 0 {
        return Err(anyhow!("--think-ms must be at least 1"));
    }
    let oracle = Arc::new(Oracle::open(db, Duration::from_millis(think_ms))?);
    let addr = format!("{bind}:{port}");
    let server = tiny_http::Server::http(&addr)
        .map_err(|e| anyhow!("cannot listen on {addr}: {e}"))
        .map(Arc::new)?;
    let local = server
        .server_addr()
        .to_ip()
        .context("the server has no IP address")?;
    let tables: Vec<String> = Rules::ALL
        .iter()
        .map(|&r| match oracle.db(r).complete_up_to() {
            Some(n) => format!("{r} 0..={n}"),
            None => format!("{r} none"),
        })
        .collect();
    say!(
        "awari oracle listening on http://{local}/  (tables: {}; think {think_ms} ms)",
        tables.join(", ")
    );
    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let server = Arc::clone(&server);
            let oracle = Arc::clone(&oracle);
            std::thread::spawn(move || loop {
                match server.recv() {
                    Ok(request) => answer(&oracle, request),
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            })
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
    Ok(true)
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
        let (status, _, _) = guarded(|| Err(anyhow!("a file could not be read")));
        assert_eq!(status, 500);
        let ok = guarded(|| Ok((200, "text/plain", "fine".to_string())));
        assert_eq!(ok, (200, "text/plain", "fine".to_string()));
    }
}
