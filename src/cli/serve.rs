//! `awari serve`: the Awari Oracle as a local web page and a JSON API.
//!
//! The transport is written for a server that must outlive its clients: an accept loop over
//! `std::net` that never ends (a failed accept, descriptor exhaustion included, is logged
//! once and retried with back-off), a thread per connection up to [`MAX_CONNECTIONS`]
//! (beyond it a 503 and the connection closed), at most [`WORKERS`] requests computed at
//! once, a deadline for the request's head ([`HEAD_TIMEOUT`]: an idle or slow client is
//! closed), caps on the head and the body, and one request per connection. Requests are
//! parsed by `httparse`; anything that is not HTTP/1.x (an HTTP/2 preface) is answered at
//! once and closed. Each request is answered inside `catch_unwind`, so a panic in a
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
//! Bad input gets HTTP 400 and `{"error": "<one line>"}`; a failure of the server (a
//! damaged table) gets a 500 whose message names no local path, and the whole error goes to
//! the server's stderr. `cycles=own-row` is refused with a 400: the API serves the exact
//! tables only.

use super::output::{say, shown, tell};
use anyhow::{anyhow, Context, Result};
use awari::game::{Game, GameRecord, Side};
use awari::search::{self, Analysis, Level, Limits, Rng};
use awari::{Board, Database, Rules};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

const PAGE: &str = include_str!("oracle.html");
/// Requests computed at once (a search holds its slot for up to the think time); the other
/// connections wait for a slot.
const WORKERS: usize = 4;
/// Connections held at once. A page in a browser opens a handful; beyond this a client gets
/// a 503 at once rather than a connection that hangs, and the descriptors a flood of clients
/// can take stay bounded.
const MAX_CONNECTIONS: usize = 64;
/// Time a client has to send its request's head, from the moment it is accepted: a client
/// that connects and sends nothing (or a byte at a time) gives its connection back.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// Time a client has to take the answer.
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest request head (request line and headers): the longest URL the page builds,
/// a long game's move list, is a few kilobytes.
const MAX_HEAD: usize = 32 << 10;
/// Headers read at most.
const MAX_HEADERS: usize = 64;
/// The largest request body read (and dropped: every route is a GET).
const MAX_BODY: u64 = 16 << 10;
/// The first and the longest wait before accepting again after a failed accept.
const BACKOFF_FIRST: Duration = Duration::from_millis(10);
const BACKOFF_LONGEST: Duration = Duration::from_secs(1);

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
    if path.starts_with("/api/") {
        // The API answers from the exact tables; a request for the own-row bounds must not
        // get an exact answer in their place.
        match params.get("cycles").map(String::as_str) {
            None | Some("share") => {}
            Some(other) => {
                return Err(bad(format!(
                    "cycles={} is not served by the API, which answers from the exact tables (cycles=share); the own-row bounds are in: awari probe --cycles own-row",
                    shown(other)
                )))
            }
        }
    }
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
/// panic into a 500: a connection thread never dies of a request.
fn guarded(handler: impl FnOnce() -> Result<Reply>) -> Reply {
    match catch_unwind(AssertUnwindSafe(handler)) {
        Ok(Ok(r)) => r,
        Ok(Err(e)) if e.downcast_ref::<BadRequest>().is_some() => {
            let msg = super::output::error_line(&e);
            (400, "application/json", json!({ "error": msg }).to_string())
        }
        Ok(Err(e)) => {
            // The cause names files of the server's machine: it goes to the server's log,
            // and the client learns only that the server failed.
            tell!("awari serve: error: {}", super::output::error_line(&e));
            (
                500,
                "application/json",
                json!({ "error": "the server could not answer: a table file is damaged or unreadable (the server's log says which)" }).to_string(),
            )
        }
        Err(_) => (
            500,
            "application/json",
            json!({ "error": "internal error while answering this request" }).to_string(),
        ),
    }
}

/// The reason phrase of a status this server sends.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        411 => "Length Required",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Unknown",
    }
}

/// Sends one response and closes the connection (every response says so). A client that
/// went away is not the server's problem.
fn respond(stream: &mut TcpStream, status: u16, kind: &str, body: &str, head_only: bool) {
    let head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        reason(status),
        body.len()
    );
    let _ = stream
        .write_all(head.as_bytes())
        .and_then(|()| match head_only {
            true => Ok(()),
            false => stream.write_all(body.as_bytes()),
        })
        .and_then(|()| stream.flush());
    let _ = stream.shutdown(std::net::Shutdown::Write);
}

/// A response of the transport itself (not of a route): a JSON error.
fn refuse(stream: &mut TcpStream, status: u16, why: &str) {
    let body = json!({ "error": why }).to_string();
    respond(stream, status, "application/json", &body, false);
}

/// Bytes read from `stream` until `deadline`: `Ok(0)` when the client closed, `Err` when the
/// deadline passed or the connection failed.
fn read_until(stream: &mut TcpStream, buf: &mut [u8], deadline: Instant) -> std::io::Result<usize> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        stream.set_read_timeout(Some(left))?;
        match stream.read(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// Counting semaphore: the slots of [`WORKERS`].
struct Slots {
    free: Mutex<usize>,
    freed: Condvar,
}

/// A slot taken; given back when dropped (also when a handler panics).
struct Slot<'a>(&'a Slots);

impl Slots {
    fn new(n: usize) -> Slots {
        Slots {
            free: Mutex::new(n),
            freed: Condvar::new(),
        }
    }
    fn take(&self) -> Slot<'_> {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        while *free == 0 {
            free = self.freed.wait(free).unwrap_or_else(|e| e.into_inner());
        }
        *free -= 1;
        Slot(self)
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        self.0.freed.notify_one();
    }
}

/// One connection counted in `active`; uncounted when dropped, however its thread ends.
struct Held(Arc<AtomicUsize>);

impl Drop for Held {
    fn drop(&mut self) {
        self.0.fetch_sub(1, SeqCst);
    }
}

/// What the head of a request asks, once parsed.
struct Head {
    target: String,
    method: String,
    /// Bytes of the body already read with the head.
    body_read: usize,
    body_length: u64,
}

/// Reads and parses a request's head within [`HEAD_TIMEOUT`]; `Err` carries the refusal
/// (`None`: close without a word, the client is gone or silent).
fn read_head(stream: &mut TcpStream) -> std::result::Result<Head, Option<(u16, String)>> {
    let deadline = Instant::now() + HEAD_TIMEOUT;
    let mut buf: Vec<u8> = Vec::with_capacity(2048);
    let mut chunk = [0u8; 4096];
    loop {
        match read_until(stream, &mut chunk, deadline) {
            Ok(0) => return Err(None),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
                ) =>
            {
                let why = format!("no complete request within {} s", HEAD_TIMEOUT.as_secs());
                return Err(Some((408, why)));
            }
            Err(_) => return Err(None),
        }
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut request = httparse::Request::new(&mut headers);
        match request.parse(&buf) {
            Ok(httparse::Status::Complete(head_len)) => {
                let mut body_length = 0;
                for h in request.headers.iter() {
                    if h.name.eq_ignore_ascii_case("transfer-encoding") {
                        return Err(Some((
                            411,
                            "a request body needs a Content-Length (every route is a GET, without a body)".into(),
                        )));
                    }
                    if h.name.eq_ignore_ascii_case("content-length") {
                        body_length = std::str::from_utf8(h.value)
                            .ok()
                            .and_then(|v| v.trim().parse::<u64>().ok())
                            .ok_or_else(|| Some((400, "bad Content-Length".to_string())))?;
                    }
                }
                if body_length > MAX_BODY {
                    return Err(Some((
                        413,
                        format!(
                            "a request body holds at most {} KiB (every route is a GET, without a body)",
                            MAX_BODY >> 10
                        ),
                    )));
                }
                return Ok(Head {
                    target: request.path.unwrap_or("/").to_string(),
                    method: request.method.unwrap_or("").to_string(),
                    body_read: buf.len() - head_len,
                    body_length,
                });
            }
            Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD => {
                let why = format!("the request's head is over {} KiB", MAX_HEAD >> 10);
                return Err(Some((431, why)));
            }
            Ok(httparse::Status::Partial) => continue,
            Err(httparse::Error::TooManyHeaders) => {
                return Err(Some((431, format!("more than {MAX_HEADERS} headers"))));
            }
            // Among them an HTTP/2 connection preface ("PRI * HTTP/2.0"): answered at once
            // in HTTP/1.1, rather than waited on.
            Err(httparse::Error::Version) => {
                return Err(Some((
                    505,
                    "this server speaks HTTP/1.0 and HTTP/1.1 only".into(),
                )));
            }
            Err(e) => return Err(Some((400, format!("not an HTTP request: {e}")))),
        }
    }
}

/// Serves one connection: one request and its answer. Never panics through: a handler's
/// panic is caught by [`guarded`].
fn serve_connection(oracle: &Oracle, slots: &Slots, mut stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let head = match read_head(&mut stream) {
        Ok(head) => head,
        Err(Some((status, why))) => return refuse(&mut stream, status, &why),
        Err(None) => return,
    };
    // The body (no route takes one) is read and dropped, so that closing the connection
    // with unread bytes does not reset it under the client's feet before it reads the answer.
    let mut left = head.body_length.saturating_sub(head.body_read as u64);
    let deadline = Instant::now() + HEAD_TIMEOUT;
    let mut chunk = [0u8; 4096];
    while left > 0 {
        match read_until(&mut stream, &mut chunk, deadline) {
            Ok(0) | Err(_) => return,
            Ok(n) => left = left.saturating_sub(n as u64),
        }
    }
    let head_only = head.method == "HEAD";
    let (status, kind, body) = if head.method == "GET" || head_only {
        let _slot = slots.take();
        guarded(|| handle(oracle, &head.target))
    } else {
        (
            405,
            "application/json",
            json!({ "error": "only GET is served" }).to_string(),
        )
    };
    respond(&mut stream, status, kind, &body, head_only);
}

/// Accept errors that concern one connection only (it went away before it was accepted):
/// not worth a pause or a word.
fn transient(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::Interrupted
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
            | std::io::ErrorKind::WouldBlock
    )
}

/// How often a failure that goes on is said again on stderr.
const LOG_AGAIN: Duration = Duration::from_secs(60);

/// Failures of the accept loop, said on stderr once, then at most once every [`LOG_AGAIN`]
/// with how many there were since: while descriptors are exhausted every closing client
/// lets one accept through and the next fails, which must not flood the log.
struct Failures {
    said: Option<Instant>,
    since: u64,
    backoff: Duration,
}

impl Failures {
    fn new() -> Failures {
        Failures {
            said: None,
            since: 0,
            backoff: BACKOFF_FIRST,
        }
    }

    /// Says the failure if it is time to, then pauses before the next try, each pause of a
    /// run of failures twice the last, up to [`BACKOFF_LONGEST`].
    fn failed(&mut self, what: &str, e: &std::io::Error) {
        self.since += 1;
        if self.said.is_none_or(|t| t.elapsed() >= LOG_AGAIN) {
            let again = match (self.said, self.since) {
                (None, _) | (_, 1) => String::new(),
                (Some(_), n) => format!(" ({n} times in the last minute)"),
            };
            tell!("awari serve: cannot {what}: {e}{again}; retrying, clients waiting stay queued");
            self.said = Some(Instant::now());
            self.since = 0;
        }
        std::thread::sleep(self.backoff);
        self.backoff = (self.backoff * 2).min(BACKOFF_LONGEST);
    }

    fn succeeded(&mut self) {
        self.backoff = BACKOFF_FIRST;
    }
}

/// Accepts connections until the process is stopped. Nothing here ends the loop: a failed
/// accept (descriptors exhausted, memory short) or a thread that cannot start is said on
/// stderr (see [`Failures`]) and retried after a pause; the clients waiting meanwhile stay
/// queued by the kernel.
fn accept_loop(listener: &TcpListener, oracle: &Arc<Oracle>) -> ! {
    let active = Arc::new(AtomicUsize::new(0));
    let slots = Arc::new(Slots::new(WORKERS));
    let mut failures = Failures::new();
    loop {
        let mut stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(e) if transient(&e) => continue,
            Err(e) => {
                failures.failed("accept connections", &e);
                continue;
            }
        };
        failures.succeeded();
        if active.load(SeqCst) >= MAX_CONNECTIONS {
            // Answered from here without waiting: the socket's buffer takes a short answer.
            let _ = stream.set_nonblocking(true);
            refuse(
                &mut stream,
                503,
                "too many connections at once; try again in a moment",
            );
            continue;
        }
        active.fetch_add(1, SeqCst);
        let held = Held(Arc::clone(&active));
        let (oracle, slots) = (Arc::clone(oracle), Arc::clone(&slots));
        let started = std::thread::Builder::new()
            .name("awari-connection".into())
            .spawn(move || {
                let _held = held;
                serve_connection(&oracle, &slots, stream);
            });
        // The closure, with the connection and its count, is dropped when no thread
        // starts: the client sees the connection close.
        if let Err(e) = started {
            failures.failed("start a thread for a connection", &e);
        }
    }
}

/// Runs the server until the process is stopped.
pub fn cmd_serve(db: &Path, bind: &str, port: u16, think_ms: u64) -> Result<bool> {
    if think_ms == 0 {
        return Err(anyhow!("--think-ms must be at least 1"));
    }
    let oracle = Arc::new(Oracle::open(db, Duration::from_millis(think_ms))?);
    let addr = format!("{bind}:{port}");
    let listener = TcpListener::bind(&addr).with_context(|| format!("cannot listen on {addr}"))?;
    let local = listener.local_addr().context("the server has no address")?;
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
    accept_loop(&listener, &oracle)
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
