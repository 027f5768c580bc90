//! `awari serve` end to end, as a person (or a program) would use it: the real binary on a
//! free loopback port, its JSON API checked against `probe --json` and the library, bad
//! requests, and the page in a real headless Chromium driven over the DevTools protocol.
//!
//! Each test starts its own server (`--port 0`; the address is read from its first line)
//! and kills it when done. Layers 0..=12 of `awari` are built once per test binary.

use awari::game::{GameRecord, Side};
use awari::{Board, Database, Rules};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

mod common;

const TOP: u32 = 12;
const THINK_MS: u64 = 300;

/// Layers 0..=12 of `awari`, under Cargo's per-target scratch folder (folders left by runs
/// more than an hour old are removed).
fn db_dir() -> &'static Path {
    static DB: OnceLock<PathBuf> = OnceLock::new();
    DB.get_or_init(|| {
        common::library_fixture(
            &common::scratch_root("awari-serve-tests"),
            Rules::AWARI,
            TOP,
        )
    })
}

/// A running `awari serve`, killed when dropped.
struct Server {
    child: Child,
    addr: String,
}

impl Server {
    fn start() -> Server {
        Server::start_with(&[])
    }

    fn start_with(env: &[(&str, &str)]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_awari"))
            .args(["serve", "--port", "0", "--think-ms", &THINK_MS.to_string()])
            .envs(env.iter().copied())
            // The panic test's server prints its panics; the others keep stderr for failures.
            .stderr(if env.is_empty() {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .arg("--db")
            .arg(db_dir())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        // The pipe is closed after the first line, as the server allows.
        let addr = common::serve_address(&mut child.stdout.take().unwrap())
            .unwrap_or_else(|first| panic!("no address in {first:?}"));
        assert!(addr.starts_with("127.0.0.1:"), "{addr}");
        Server { child, addr }
    }

    /// One GET request; returns the status and the body.
    fn get(&self, path: &str) -> (u16, String) {
        common::http_get(&self.addr, path)
    }

    fn get_json(&self, path: &str) -> (u16, Value) {
        let (status, body) = self.get(path);
        let v = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"));
        (status, v)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Query-string escaping of a parameter value.
fn enc(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'.' | b'_' => (b as char).to_string(),
            b' ' => "+".to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[test]
fn the_api_answers_what_probe_answers() {
    let server = Server::start();
    let mut boards = vec![Board::opening(1).unwrap()];
    for n in 0..=TOP {
        boards.extend(common::spread_sample(n, 6, u64::from(n)));
    }
    // `probe --json --batch`: one JSON line per board.
    let mut probe = Command::new(env!("CARGO_BIN_EXE_awari"))
        .args(["probe", "--json", "--batch", "--db"])
        .arg(db_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let input: String = boards.iter().map(|b| format!("{b}\n")).collect();
    probe
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = probe.wait_with_output().unwrap();
    assert!(out.status.success());
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), boards.len());
    for (b, expected) in boards.iter().zip(&lines) {
        let (status, got) = server.get_json(&format!(
            "/api/position?rules=awari&board={}",
            enc(&b.to_string())
        ));
        assert_eq!(status, 200, "{b:?}: {got}");
        for field in [
            "board",
            "rules",
            "seeds",
            "value",
            "verdict",
            "game_over",
            "moves",
            "best",
        ] {
            assert_eq!(got[field], expected[field], "{b:?}: field {field}");
        }
        assert_eq!(got["exact"], json!(true), "{b:?}");
        assert_eq!(got["depth"], json!(0), "{b:?}");
    }
}

#[test]
fn above_the_tables_the_api_searches_within_the_think_time() {
    let server = Server::start();
    let db = Database::open(db_dir(), Rules::AWARI).unwrap();
    for b in [
        Board::opening(4).unwrap(),
        common::spread_sample(TOP + 4, 1, 9)[0],
    ] {
        let started = Instant::now();
        let (status, got) =
            server.get_json(&format!("/api/position?board={}", enc(&b.to_string())));
        let took = started.elapsed();
        assert_eq!(status, 200, "{got}");
        assert_eq!(got["exact"], json!(false), "{b:?}");
        assert!(got["depth"].as_u64().unwrap() >= 1);
        // The moves are the legal moves, each with the child the rules give.
        let legal: Vec<Value> = db
            .rules()
            .legal_moves(&b)
            .iter()
            .map(|m| json!([m.pit, m.captured, m.child.to_string()]))
            .collect();
        let shown: Vec<Value> = got["moves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| json!([m["pit"], m["captured"], m["child"]]))
            .collect();
        assert_eq!(shown, legal);
        let best = got["moves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["value"].as_i64().unwrap())
            .max()
            .unwrap();
        assert_eq!(got["value"].as_i64().unwrap(), best);
        // The think time (+10%), and a little for HTTP on a loaded test machine.
        let limit = Duration::from_millis(THINK_MS + THINK_MS / 10 + 150);
        assert!(took <= limit, "{b:?} took {took:?}");
    }
}

#[test]
fn bad_requests_get_400_and_one_line_and_the_server_goes_on() {
    let server = Server::start();
    let cases = [
        ("/api/position?board=1+2+3", "12 pit counts"),
        ("/api/position", "missing parameter 'board'"),
        (
            "/api/position?board=1+1+1+1+1+1+1+1+1+1+1+x",
            "not a seed count",
        ),
        ("/api/position?board=49+0+0+0+0+0+0+0+0+0+0+0", "at most 48"),
        (
            "/api/position?rules=chess&board=1+1+1+1+1+1+1+1+1+1+1+1",
            "unknown rules",
        ),
        ("/api/game?game=1.+3+2+9", "move 3 ('9')"),
        (
            "/api/game?game=3+3+1+3",
            "move 4 (pit 3 of north): that pit is empty",
        ),
        ("/api/game", "missing parameter 'game'"),
        (
            "/api/move?board=4+4+4+4+4+4+4+4+4+4+4+4&level=godlike",
            "unknown level",
        ),
        (
            "/api/move?board=4+4+4+4+4+4+4+4+4+4+4+4&seed=-1",
            "bad seed",
        ),
        ("/api/position?board=%ZZ", "12 pit counts"),
    ];
    for (path, needle) in cases {
        let (status, body) = server.get(path);
        assert_eq!(status, 400, "{path}: {body}");
        assert!(!body.trim_end().contains('\n'), "{path}: {body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        let msg = v["error"].as_str().unwrap();
        assert!(msg.contains(needle), "{path}: {msg}");
    }
    let (status, _) = server.get("/no/such/page");
    assert_eq!(status, 404);
    // Garbage instead of HTTP, and a client that hangs up at once.
    for junk in [&b"\x00\x01\x02 BLAH\r\n\r\n"[..], b"GET", b""] {
        let mut s = TcpStream::connect(&server.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = s.write_all(junk);
        drop(s);
    }
    let (status, v) = server.get_json("/api/position?board=1+1+1+1+1+1+1+1+1+1+1+1");
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["exact"], json!(true));
    let (status, page) = server.get("/");
    assert_eq!(status, 200);
    assert!(page.contains("dataset.pit") && page.contains("<script>"));
}

#[test]
fn games_and_computer_moves_through_the_api() {
    let server = Server::start();
    let db = Database::open(db_dir(), Rules::AWARI).unwrap();
    // A game of 12 seeds: the API's replay agrees with the library's.
    let start = common::spread_sample(TOP, 1, 4)[0];
    let text = format!("rules awari\nstart {start}\n");
    let mut record = GameRecord::parse(&text, Rules::AWARI).unwrap();
    for _ in 0..6 {
        let g = record.replay().unwrap();
        if g.end.is_some() {
            break;
        }
        // The computer's perfect move: legal, and of the best value.
        let (status, m) = server.get_json(&format!(
            "/api/move?level=perfect&game={}",
            enc(&record.to_string())
        ));
        assert_eq!(status, 200, "{m}");
        let pit = m["pit"].as_u64().unwrap() as u8;
        let best = db.best_moves(&g.board).unwrap();
        assert!(best.iter().any(|b| b.pit == pit), "{:?}: {pit}", g.board);
        assert_eq!(m["exact"], json!(true));
        record.moves.push(pit);
    }
    let game = record.replay().unwrap();
    let (status, v) = server.get_json(&format!("/api/game?game={}", enc(&record.to_string())));
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["board"], json!(game.board.to_string()));
    assert_eq!(v["pits"], json!(game.absolute()));
    assert_eq!(v["captured"], json!(game.captured));
    assert_eq!(v["plies"].as_array().unwrap().len(), record.moves.len());
    assert_eq!(v["record"]["moves"], json!(record.moves));
    assert_eq!(
        v["to_move"],
        json!(if record.moves.len().is_multiple_of(2) {
            "south"
        } else {
            "north"
        })
    );
    if game.end.is_none() {
        assert_eq!(
            v["position"]["value"],
            json!(db.value(&game.board).unwrap())
        );
    }
    // Every level answers with a legal move of the current position.
    let legal: Vec<u8> = db
        .rules()
        .legal_moves(&start)
        .iter()
        .map(|m| m.pit)
        .collect();
    for level in ["fair", "good", "strong", "expert", "perfect", "1", "5"] {
        let (status, m) = server.get_json(&format!(
            "/api/move?level={level}&seed=7&rules=awari&board={}",
            enc(&start.to_string())
        ));
        assert_eq!(status, 200, "{level}: {m}");
        assert!(
            legal.contains(&(m["pit"].as_u64().unwrap() as u8)),
            "{level}: {m}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// The page in a real browser
// ---------------------------------------------------------------------------------------

/// Headless Chromium with a DevTools session on one page, killed when dropped.
struct Browser {
    child: Child,
    ws: tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>>,
    session: String,
    next_id: u64,
    _profile: tempfile::TempDir,
}

impl Browser {
    fn launch(path: &Path) -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let mut child = Command::new(path)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-port=0",
                "--window-size=1000,900",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Chromium prints its DevTools address on stderr; a thread reads (and then keeps
        // draining) it.
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(at) = line.find("ws://") {
                    let _ = tx.send(line[at..].trim().to_string());
                }
            }
        });
        let url = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(url) => url,
            Err(_) => {
                let _ = child.kill();
                panic!("chromium did not print its DevTools address within 30 s");
            }
        };
        let (mut ws, _) = tungstenite::connect(url.as_str()).unwrap();
        if let tungstenite::stream::MaybeTlsStream::Plain(s) = ws.get_mut() {
            s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        }
        let mut b = Browser {
            child,
            ws,
            session: String::new(),
            next_id: 0,
            _profile: profile,
        };
        let target = b.call("Target.createTarget", json!({ "url": "about:blank" }));
        let target_id = target["targetId"].as_str().unwrap().to_string();
        let attached = b.call(
            "Target.attachToTarget",
            json!({ "targetId": target_id, "flatten": true }),
        );
        b.session = attached["sessionId"].as_str().unwrap().to_string();
        b
    }

    /// One DevTools command (on the page's session once attached); its result.
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if !self.session.is_empty() {
            msg["sessionId"] = json!(self.session);
        }
        self.ws
            .send(tungstenite::Message::Text(msg.to_string()))
            .unwrap();
        loop {
            let reply = self.ws.read().unwrap();
            let tungstenite::Message::Text(text) = reply else {
                continue;
            };
            let v: Value = serde_json::from_str(&text).unwrap();
            if v["id"] == json!(id) {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
        }
    }

    /// Evaluates JavaScript in the page; the value it returns.
    fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({ "expression": expr, "returnByValue": true, "awaitPromise": true }),
        );
        assert!(r.get("exceptionDetails").is_none(), "{expr}: {r}");
        r["result"]["value"].clone()
    }

    /// Polls `expr` until it is true (at most `secs` seconds).
    fn wait_until(&mut self, expr: &str, secs: u64) {
        let until = Instant::now() + Duration::from_secs(secs);
        while Instant::now() < until {
            // The page may still be loading (no body yet): an exception counts as false.
            let guarded =
                format!("(() => {{ try {{ return ({expr}); }} catch (e) {{ return false; }} }})()");
            if self.eval(&guarded) == json!(true) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let status = self.eval("document.getElementById('status').textContent + ' | ' + document.getElementById('error').textContent");
        panic!("waited {secs} s for {expr}; page says: {status}");
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
#[ignore = "needs headless Chromium; run with --ignored (.ci/run does)"]
fn the_page_in_a_real_browser_shows_values_and_the_computer_answers() {
    let chromium = common::chromium_path();
    let server = Server::start();
    let db = Database::open(db_dir(), Rules::AWARI).unwrap();
    let board: Board = "2 1 0 3 1 1 1 2 0 1 0 0".parse().unwrap();
    let truth = db.moves_with_values(&board).unwrap();
    assert!(truth.len() >= 2);

    let mut browser = Browser::launch(&chromium);
    let url = format!(
        "http://{}/?rules=awari&board={}&level=perfect",
        server.addr,
        enc(&board.to_string())
    );
    browser.call("Page.navigate", json!({ "url": url }));
    browser.wait_until(
        "document.body.dataset.state === 'ready' && document.querySelectorAll('.val[data-value]').length > 0",
        20,
    );

    // The pits show the board (South's row is the JSON's pits 0..5).
    let counts = browser.eval(
        "JSON.stringify([...document.querySelectorAll('.pit')].map(e => [Number(e.dataset.pit), Number(e.querySelector('.count').textContent)]).sort((a, b) => a[0] - b[0]).map(p => p[1]))",
    );
    let counts: Vec<u8> = serde_json::from_str(counts.as_str().unwrap()).unwrap();
    assert_eq!(&counts[..], &board.pits()[..]);

    // Every legal move's value is shown on its pit, as the tables have it.
    let shown = browser.eval(
        "JSON.stringify([...document.querySelectorAll('.val[data-value]')].map(e => [Number(e.dataset.for), Number(e.dataset.value)]).sort((a, b) => a[0] - b[0]))",
    );
    let shown: Vec<(u8, i8)> = serde_json::from_str(shown.as_str().unwrap()).unwrap();
    let expected: Vec<(u8, i8)> = truth.iter().map(|m| (m.pit, m.value)).collect();
    assert_eq!(shown, expected);

    // Play a best move by clicking its pit; the computer (North, perfect) answers.
    let best = truth.iter().max_by_key(|m| m.value).unwrap();
    browser.eval(&format!(
        "document.querySelector('.pit[data-pit=\"{}\"]').click(), true",
        best.pit
    ));
    browser.wait_until(
        "document.body.dataset.plies === '2' && document.body.dataset.state === 'ready'",
        20,
    );
    let text = browser.eval("document.getElementById('record').value");
    let record = GameRecord::parse(text.as_str().unwrap(), Rules::ABAPA).unwrap();
    assert_eq!(record.rules, Rules::AWARI);
    assert_eq!(record.start, board);
    assert_eq!(record.moves.len(), 2);
    assert_eq!(record.moves[0], best.pit);
    // North's answer was a best move of the position it faced.
    let after = best.child;
    let north_best = db.best_moves(&after).unwrap();
    assert!(north_best.iter().any(|m| m.pit == record.moves[1]));
    // And the board shown is the board after both moves.
    let game = record.replay().unwrap();
    let counts = browser.eval(
        "JSON.stringify([...document.querySelectorAll('.pit')].map(e => [Number(e.dataset.pit), Number(e.querySelector('.count').textContent)]).sort((a, b) => a[0] - b[0]).map(p => p[1]))",
    );
    let counts: Vec<u8> = serde_json::from_str(counts.as_str().unwrap()).unwrap();
    assert_eq!(counts, game.absolute().to_vec());
    assert_eq!(game.to_move, Side::South);
}

// ---------------------------------------------------------------------------------------
// The terminal: awari play and awari analyze
// ---------------------------------------------------------------------------------------

fn awari(args: &[&str], stdin: &str) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_awari"))
        .args(args)
        .arg("--db")
        .arg(db_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn play_in_the_terminal_with_keys_and_undo() {
    let db = Database::open(db_dir(), Rules::AWARI).unwrap();
    let board: Board = "2 1 0 3 1 1 1 2 0 1 0 0".parse().unwrap();
    // South plays pit 1, asks for the values, types nonsense, plays pit 4, undoes that
    // (and North's answer), plays pit 5, then stdin ends.
    let out = awari(
        &[
            "play",
            "--level",
            "perfect",
            "--seed",
            "3",
            "--start",
            &board.to_string(),
        ],
        "1\nh\nxyz\n4\nu\n5\n",
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("'xyz': type a pit 1..6"), "{stdout}");
    assert!(stdout.contains("value "), "{stdout}");
    // The record printed at the end replays, and North's moves were perfect.
    let text = stdout.split("awari analyze reads this):").nth(1).unwrap();
    let record = GameRecord::parse(text, Rules::AWARI).unwrap();
    assert_eq!(record.start, board);
    let game = record.replay().unwrap();
    let south: Vec<u8> = game
        .plies
        .iter()
        .filter(|p| p.side == Side::South)
        .map(|p| p.pit + 1)
        .collect();
    assert_eq!(&south[..2.min(south.len())], &[1, 5][..2.min(south.len())]);
    for p in game.plies.iter().filter(|p| p.side == Side::North) {
        let best = db.best_moves(&p.before).unwrap();
        assert!(best.iter().any(|m| m.pit == p.pit), "{:?}", p.before);
        assert!(stdout.contains(&format!("north plays {}", p.pit + 1)));
    }
}

#[test]
fn analyze_judges_every_move_against_the_tables() {
    let db = Database::open(db_dir(), Rules::AWARI).unwrap();
    let start = common::spread_sample(TOP, 1, 21)[0];
    // A game played by "highest pit", with its mistakes.
    let mut record = GameRecord::parse(&format!("start {start}"), Rules::AWARI).unwrap();
    for _ in 0..8 {
        let g = record.replay().unwrap();
        if g.end.is_some() {
            break;
        }
        let moves = db.rules().legal_moves(&g.board);
        record.moves.push(moves.as_slice()[moves.len() - 1].pit);
    }
    assert!(record.moves.len() >= 3);
    let out = awari(&["analyze", "--json"], &record.to_string());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["moves"].as_array().unwrap();
    assert_eq!(rows.len(), record.moves.len());
    let game = record.replay().unwrap();
    for (row, ply) in rows.iter().zip(&game.plies) {
        let before = db.value(&ply.before).unwrap();
        let moves = db.moves_with_values(&ply.before).unwrap();
        let played = moves.iter().find(|m| m.pit == ply.pit).unwrap().value;
        let best: Vec<u8> = db
            .best_moves(&ply.before)
            .unwrap()
            .iter()
            .map(|m| m.pit)
            .collect();
        assert_eq!(row["side"], json!(ply.side.name()));
        assert_eq!(row["pit"], json!(ply.pit));
        assert_eq!(row["value_before"], json!(before));
        assert_eq!(row["value_played"], json!(played));
        assert_eq!(row["best"], json!(best));
        assert_eq!(row["lost"], json!(i32::from(before) - i32::from(played)));
        assert_eq!(row["exact"], json!(true));
    }
    // The text form: one line per move, the same numbers.
    let out = awari(&["analyze", "-"], &record.to_string());
    let text = String::from_utf8(out.stdout).unwrap();
    let first = &rows[0];
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("1  "))
        .unwrap();
    let fields: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(
        fields[3],
        format!("{:+}", first["value_before"].as_i64().unwrap())
    );
    assert_eq!(
        fields[4],
        format!("{:+}", first["value_played"].as_i64().unwrap())
    );

    // A bad move list: one line naming the move, non-zero exit.
    for (list, needle) in [
        ("1. 3 2  2. 9", "move 3 ('9'): not a pit number 1..6"),
        ("3 3 1 3", "move 4 (pit 3 of north): that pit is empty"),
        ("rules go\n1", "line 1: unknown rules preset 'go'"),
    ] {
        let out = awari(&["analyze"], list);
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(!out.status.success());
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("error: ") && err.contains(needle), "{err}");
    }
}

#[test]
#[ignore = "needs headless Chromium; run with --ignored (.ci/run does)"]
fn the_page_edits_positions_undoes_and_loads_move_lists() {
    let chromium = common::chromium_path();
    let server = Server::start();
    let db = Database::open(db_dir(), Rules::AWARI).unwrap();
    let board: Board = "2 1 0 3 1 1 1 2 0 1 0 0".parse().unwrap();
    let mut browser = Browser::launch(&chromium);
    let url = format!(
        "http://{}/?rules=awari&board={}&computer=none",
        server.addr,
        enc(&board.to_string())
    );
    browser.call("Page.navigate", json!({ "url": url }));
    let ready = "document.body.dataset.state === 'ready'";
    browser.wait_until(ready, 20);
    let pits_js = "JSON.stringify([...document.querySelectorAll('.pit')].map(e => [Number(e.dataset.pit), Number(e.querySelector('.count').textContent)]).sort((a, b) => a[0] - b[0]).map(p => p[1]))";
    let values_js = "JSON.stringify([...document.querySelectorAll('.val[data-value]')].map(e => [Number(e.dataset.for), Number(e.dataset.value)]).sort((a, b) => a[0] - b[0]))";
    let read = |b: &mut Browser, js: &str| -> Value {
        serde_json::from_str(b.eval(js).as_str().unwrap()).unwrap()
    };

    // Edit: a seed added to North's pit 2 (data-pit 7), one taken from South's pit 1, and
    // North to move; the values shown are then North's, on the top row.
    browser.eval("document.getElementById('edit').click(), true");
    browser.wait_until(ready, 20);
    browser.eval("document.querySelector('.pit[data-pit=\"7\"]').click(), true");
    browser.wait_until(
        &format!("{ready} && {pits_js}.startsWith('[2,1,0,3,1,1,1,3,')"),
        20,
    );
    browser.eval("document.querySelector('.pit[data-pit=\"0\"]').dispatchEvent(new MouseEvent('contextmenu', {bubbles: true})), true");
    browser.wait_until(
        &format!("{ready} && {pits_js}.startsWith('[1,1,0,3,1,1,1,3,')"),
        20,
    );
    browser.eval("(() => { const s = document.getElementById('tomove'); s.value = 'north'; s.dispatchEvent(new Event('change')); return true; })()");
    browser.wait_until(
        &format!("{ready} && document.body.dataset.toMove === 'north'"),
        20,
    );
    browser.eval("document.getElementById('done').click(), true");
    browser.wait_until(
        &format!("{ready} && document.getElementById('editbar').hidden"),
        20,
    );
    let edited: Board = "1 1 0 3 1 1 1 3 0 1 0 0".parse().unwrap();
    assert_eq!(read(&mut browser, pits_js), json!(edited.pits()));
    // North moves: the position from North's side is the edited board swapped.
    let north_view = edited.swapped();
    let expected: Vec<(u8, i8)> = db
        .moves_with_values(&north_view)
        .unwrap()
        .iter()
        .map(|m| (m.pit + 6, m.value))
        .collect();
    assert_eq!(read(&mut browser, values_js), json!(expected));

    // Keys 1-6 play North's pits from North's left; undo and redo.
    let first = expected[0].0 - 6 + 1;
    browser.eval(&format!(
        "document.dispatchEvent(new KeyboardEvent('keydown', {{key: '{first}'}})), true"
    ));
    browser.wait_until(
        &format!("{ready} && document.body.dataset.plies === '1'"),
        20,
    );
    browser.eval("document.getElementById('undo').click(), true");
    browser.wait_until(
        &format!("{ready} && document.body.dataset.plies === '0'"),
        20,
    );
    browser.eval("document.getElementById('redo').click(), true");
    browser.wait_until(
        &format!("{ready} && document.body.dataset.plies === '1'"),
        20,
    );

    // A pasted move list: a bad one is refused with the move named, a good one loads.
    let set_text = |b: &mut Browser, text: &str| {
        b.eval(&format!(
            "document.getElementById('record').value = {}, document.getElementById('load').click(), true",
            json!(text)
        ));
    };
    set_text(&mut browser, "rules awari\n1. 3 3 1 3");
    browser.wait_until(
        "document.getElementById('error').textContent.includes('move 4 (pit 3 of north): that pit is empty')",
        20,
    );
    set_text(&mut browser, "rules abapa\n1. 3 2  2. 6");
    browser.wait_until(
        &format!("{ready} && document.body.dataset.plies === '3'"),
        20,
    );
    let record = GameRecord::parse("rules abapa\n3 2 6", Rules::AWARI).unwrap();
    let game = record.replay().unwrap();
    assert_eq!(read(&mut browser, pits_js), json!(game.absolute()));
    assert_eq!(
        browser.eval("document.getElementById('rules').value"),
        json!("abapa")
    );
}

// ---------------------------------------------------------------------------------------
// A server that outlives its clients
// ---------------------------------------------------------------------------------------

/// `awari serve` on `db` under `sh -c 'ulimit -n NOFILE; exec …'` (no limit change for
/// `None`), its stderr in a file (read by [`Limited::stderr`]), killed when dropped.
struct Limited {
    server: Server,
    stderr: tempfile::NamedTempFile,
}

impl Limited {
    fn start(db: &Path, nofile: Option<u32>) -> Limited {
        let stderr = tempfile::NamedTempFile::new().unwrap();
        let limit = nofile.map_or(String::new(), |n| format!("ulimit -n {n} && "));
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "{limit}exec \"$0\" serve --port 0 --think-ms {THINK_MS} --db \"$1\""
            ))
            .arg(env!("CARGO_BIN_EXE_awari"))
            .arg(db)
            .stdout(Stdio::piped())
            .stderr(Stdio::from(stderr.reopen().unwrap()))
            .spawn()
            .unwrap();
        // The pipe is closed after the first line, as the server allows.
        let addr = common::serve_address(&mut child.stdout.take().unwrap())
            .unwrap_or_else(|first| panic!("no address in {first:?}"));
        Limited {
            server: Server { child, addr },
            stderr,
        }
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.stderr.path()).unwrap()
    }
}

/// The raw answer to `request` (up to the server closing), within `limit`; `Err` if the
/// server did not answer and close in time.
fn exchange(addr: &str, request: &[u8], limit: Duration) -> Result<String, String> {
    let mut s = TcpStream::connect_timeout(&addr.parse().unwrap(), limit)
        .map_err(|e| format!("connect: {e}"))?;
    s.set_read_timeout(Some(limit)).unwrap();
    s.set_write_timeout(Some(limit)).unwrap();
    let _ = s.write_all(request);
    let mut answer = Vec::new();
    s.read_to_end(&mut answer)
        .map_err(|e| format!("no answer within {limit:?}: {e}; got {answer:?}"))?;
    Ok(String::from_utf8_lossy(&answer).into_owned())
}

/// A GET the server must answer with a 200 within `limit` (retried until then).
fn served_within(addr: &str, limit: Duration) -> Result<Duration, String> {
    let started = Instant::now();
    let request = format!(
        "GET /api/position?board=1+1+1+1+1+1+1+1+1+1+1+1 HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    );
    let mut last = String::new();
    while started.elapsed() < limit {
        match exchange(addr, request.as_bytes(), Duration::from_secs(2)) {
            Ok(a) if a.starts_with("HTTP/1.1 200") && a.contains("\"exact\":true") => {
                return Ok(started.elapsed())
            }
            Ok(a) => last = a,
            Err(e) => last = e,
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(format!("not served within {limit:?}; last: {last}"))
}

/// Descriptors exhausted: under `ulimit -n 48`, 150 idle connections. Accepting fails with
/// "Too many open files" while they are open (said once on stderr, not once per try), and
/// once they close new clients are served: the listener never dies.
#[test]
fn a_server_out_of_descriptors_serves_again_once_its_clients_leave() {
    let server = Limited::start(db_dir(), Some(48));
    let addr = server.server.addr.clone();
    served_within(&addr, Duration::from_secs(5)).unwrap();
    let mut idle = Vec::new();
    for _ in 0..150 {
        // Past the kernel's queue a connection is not even completed: enough are open.
        match TcpStream::connect_timeout(&addr.parse().unwrap(), Duration::from_millis(500)) {
            Ok(s) => idle.push(s),
            Err(_) => break,
        }
    }
    assert!(idle.len() >= 48, "only {} connections opened", idle.len());
    std::thread::sleep(Duration::from_millis(1500));
    // A few connections that come and go while descriptors are short.
    for s in idle.drain(..10) {
        drop(s);
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    drop(idle);
    let took = served_within(&addr, Duration::from_secs(15)).unwrap();
    assert!(
        took < Duration::from_secs(5),
        "served again only after {took:?}"
    );
    // Still serving, many times over.
    for _ in 0..20 {
        served_within(&addr, Duration::from_secs(5)).unwrap();
    }
    let stderr = server.stderr();
    assert!(!stderr.contains("panicked"), "{stderr}");
    let said = stderr.matches("cannot accept").count();
    assert_eq!(said, 1, "the accept failure is said once:\n{stderr}");
    assert!(stderr.contains("Too many open files"), "{stderr}");
}

/// More connections than the cap: the ones beyond it get a 503 at once (not a connection
/// that hangs); an idle connection is closed after the head timeout; then the server serves.
#[test]
fn beyond_the_connection_cap_a_503_and_idle_connections_are_closed() {
    let server = Server::start();
    let addr = server.addr.clone();
    let mut idle: Vec<TcpStream> = (0..64)
        .map(|_| TcpStream::connect(&addr).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    let answer = exchange(&addr, b"", Duration::from_secs(5)).unwrap();
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer:?}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    // The idle connections are closed by the server (a 408) within the head timeout.
    let started = Instant::now();
    let first = &mut idle[0];
    first
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut got = String::new();
    let _ = first.read_to_string(&mut got);
    let waited = started.elapsed();
    assert!(
        waited < Duration::from_secs(12),
        "an idle connection held {waited:?}"
    );
    assert!(got.is_empty() || got.starts_with("HTTP/1.1 408"), "{got:?}");
    idle.clear();
    served_within(&addr, Duration::from_secs(5)).unwrap();
}

/// Requests that are not what the server serves are answered at once and closed: an HTTP/2
/// preface (not held until the client gives up), a body over the cap, a head over the cap.
#[test]
fn http2_prefaces_and_oversized_requests_are_answered_at_once() {
    let server = Server::start();
    let addr = &server.addr;
    let quick = Duration::from_secs(3);
    let cases: [(Vec<u8>, &str); 4] = [
        (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec(), "505"),
        (
            b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n".to_vec(),
            "413",
        ),
        (
            format!(
                "GET / HTTP/1.1\r\nHost: x\r\nX-Pad: {}\r\n",
                "a".repeat(40_000)
            )
            .into_bytes(),
            "431",
        ),
        (
            b"POST /api/position HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc".to_vec(),
            "405",
        ),
    ];
    for (request, status) in cases {
        let shown = String::from_utf8_lossy(&request[..request.len().min(40)]).into_owned();
        let started = Instant::now();
        let answer = exchange(addr, &request, quick).unwrap_or_else(|e| panic!("{shown:?}: {e}"));
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status}")),
            "{shown:?}: {answer:?}"
        );
        assert!(
            started.elapsed() < quick,
            "{shown:?}: {:?}",
            started.elapsed()
        );
    }
    served_within(addr, Duration::from_secs(5)).unwrap();
}

/// `cycles=own-row` is refused (the API answers from the exact tables only), not ignored.
#[test]
fn the_api_refuses_own_row_cycles_rather_than_ignore_them() {
    let server = Server::start();
    for route in ["position", "move"] {
        let (status, v) = server.get_json(&format!(
            "/api/{route}?board=1+1+1+1+1+1+1+1+1+1+1+1&cycles=own-row"
        ));
        assert_eq!(status, 400, "{route}: {v}");
        assert!(v["error"].as_str().unwrap().contains("own-row"), "{v}");
    }
    let (status, _) = server.get_json("/api/position?board=1+1+1+1+1+1+1+1+1+1+1+1&cycles=share");
    assert_eq!(status, 200);
}

/// A parameter given twice is a 400, whichever value comes last: with the last value kept,
/// `cycles=own-row&cycles=share` passed the refusal of the bounds.
#[test]
fn a_parameter_given_twice_is_refused() {
    let server = Server::start();
    let board = "board=1+1+1+1+1+1+1+1+1+1+1+1";
    for query in [
        format!("{board}&cycles=own-row&cycles=share"),
        format!("{board}&cycles=&cycles=share"),
        format!("{board}&{board}"),
        format!("{board}&rules=abapa&rules=awari"),
    ] {
        let (status, v) = server.get_json(&format!("/api/position?{query}"));
        assert_eq!(status, 400, "{query}: {v}");
        assert!(v["error"].as_str().unwrap().contains("given twice"), "{v}");
    }
    let (status, _) = server.get_json(&format!("/api/position?{board}&rules=awari"));
    assert_eq!(status, 200);
}

/// Two Content-Length headers that differ are a 400 (which one ends the body is in doubt);
/// the same length twice is allowed.
#[test]
fn conflicting_content_lengths_are_refused() {
    let server = Server::start();
    let quick = Duration::from_secs(3);
    let request =
        b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 5\r\n\r\nabcde";
    let answer = exchange(&server.addr, request, quick).unwrap();
    let head = &answer[..answer.len().min(300)];
    assert!(answer.starts_with("HTTP/1.1 400"), "{head:?}");
    assert!(answer.contains("different values"), "{head:?}");
    let request = b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n";
    let answer = exchange(&server.addr, request, quick).unwrap();
    let head = &answer[..answer.len().min(300)];
    assert!(answer.starts_with("HTTP/1.1 200"), "{head:?}");
}

/// A think time beyond an hour is refused at the start, in one line (the largest number
/// was accepted, and a search above the tables then ran on for as long as it liked).
#[test]
fn a_think_time_beyond_an_hour_is_refused() {
    for ms in ["3600001", "18446744073709551615", "0"] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_awari"));
        cmd.args(["serve", "--port", "0", "--think-ms", ms, "--db"])
            .arg(db_dir());
        // A server that starts is killed at the limit: an error, not a hung test.
        let done = common::run_limited(cmd, None, Stdio::null(), Duration::from_secs(10))
            .unwrap_or_else(|e| panic!("--think-ms {ms}: {e}"));
        let stderr = &done.stderr;
        assert!(!done.status.success(), "--think-ms {ms}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains("--think-ms must be from 1 to 3600000"),
            "{stderr}"
        );
    }
}

/// A damaged layer is a 500 whose message shows no local path (the server's stderr has the
/// whole error), and the server goes on.
#[test]
fn a_damaged_layer_is_a_500_that_shows_no_local_path() {
    let from = db_dir().join("awari");
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("awari-serve-tests");
    let copy = tempfile::Builder::new()
        .prefix("private-folder-")
        .tempdir_in(&root)
        .unwrap();
    let to = copy.path().join("awari");
    std::fs::create_dir_all(&to).unwrap();
    for entry in std::fs::read_dir(&from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
    // Every byte of the middle of layer 10's values scrambled: its blocks fail their checks.
    let layer = to.join("layer-10.awdb");
    let mut bytes = std::fs::read(&layer).unwrap();
    let n = bytes.len();
    for b in &mut bytes[n / 5..n * 4 / 5] {
        *b ^= 0x5a;
    }
    std::fs::write(&layer, bytes).unwrap();
    let server = Limited::start(copy.path(), None);
    let boards = common::every_board(10);
    let mut failures = 0;
    for board in boards.iter().step_by(boards.len() / 40) {
        let (status, body) = server
            .server
            .get(&format!("/api/position?board={}", enc(&board.to_string())));
        if status == 500 {
            failures += 1;
            let private = copy.path().to_string_lossy().to_string();
            assert!(
                !body.contains(&private) && !body.contains("private-folder-"),
                "{body}"
            );
            assert!(!body.contains('/'), "a path in {body}");
        } else {
            assert_eq!(status, 200, "{board}: {body}");
        }
    }
    assert!(failures > 0, "no board met the damaged blocks");
    // The server goes on; a board away from layer 10 is answered.
    let (status, body) = server
        .server
        .get("/api/position?board=0+0+0+0+0+1+0+1+0+1+1+2");
    assert_eq!(status, 200, "{body}");
    let stderr = server.stderr();
    assert!(
        stderr.contains("layer-10"),
        "the log names the file: {stderr}"
    );
}
