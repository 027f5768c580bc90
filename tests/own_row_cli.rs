//! The own-row rule on the command line beyond probe: `pv`, `analyze`, `play` and the
//! API's `/api/position?cycles=own-row-first`, each checked against what `probe --cycles
//! own-row-first --json --moves` says of the same position with the same history. The
//! tables: layers 0..=6 of abapa, the bounds then the own-row values of the first
//! repetition at 10^5 nodes a root, built once per test binary by the command line.

use assert_cmd::Command;
use awari::{Board, Rules};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;

mod common;

/// Captures, quiet moves, and a game over at the end of its best line.
const CAPTURING: &str = "2 1 0 1 0 0 1 0 1 0 0 0";
/// One seed a side: every move forced, the position repeats after twelve moves.
const CIRCLING: &str = "0 1 0 0 0 0 0 1 0 0 0 0";

fn db_dir() -> &'static Path {
    static DB: OnceLock<PathBuf> = OnceLock::new();
    DB.get_or_init(|| {
        let dir = common::kept_dir(&common::scratch_root("awari-own-row-cli-tests"));
        for (cycles, budget) in [("bounds", "1"), ("own-row-first", "100000")] {
            awari(&["build", "-q", "--max-seeds", "6", "--cycles", cycles])
                .args(["--search-budget", budget])
                .arg("--db")
                .arg(&dir)
                .assert()
                .success();
        }
        dir
    })
}

/// `awari` with `--rules abapa` to come (the database is given by [`run`]).
fn awari(args: &[&str]) -> Command {
    let mut cmd = Command::cargo_bin("awari").unwrap();
    cmd.args(args).args(["--rules", "abapa"]);
    cmd
}

/// `awari ARGS --rules abapa --db DB` with `stdin`: whether it succeeded, stdout, stderr.
fn run(args: &[&str], stdin: &str) -> (bool, String, String) {
    let out = awari(args)
        .arg("--db")
        .arg(db_dir())
        .write_stdin(stdin)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// What `probe --cycles own-row-first --json` says of the position after `moves` (pits
/// 1..6) from `board`.
fn probe(board: &str, moves: &[u8]) -> Value {
    let moves: Vec<String> = moves.iter().map(u8::to_string).collect();
    let joined = moves.join(" ");
    let (ok, out, err) = run(
        &[
            "probe",
            "--cycles",
            "own-row-first",
            "--json",
            board,
            "--moves",
            &joined,
        ],
        "",
    );
    assert!(ok, "{err}");
    serde_json::from_str(&out).unwrap()
}

/// One step of a principal variation as `pv` prints it.
struct Step {
    board: String,
    value: i64,
    pit: u8,
    captured: i64,
}

/// The steps of `pv`'s output, and its `end` line.
fn steps(text: &str) -> (Vec<Step>, String) {
    let mut steps = Vec::new();
    for line in text.lines() {
        let t: Vec<&str> = line.split_whitespace().collect();
        if t.len() < 19 || !t[0].ends_with('.') {
            continue;
        }
        assert_eq!((t[14], t[16], t[17]), ("value", "plays", "pit"), "{line}");
        steps.push(Step {
            board: t[2..14].join(" "),
            value: t[15].parse().unwrap(),
            pit: t[18].parse().unwrap(),
            captured: t.get(20).map_or(0, |c| c.parse().unwrap()),
        });
    }
    let end = text.lines().find(|l| l.starts_with("end ")).unwrap();
    (steps, end.to_string())
}

/// The value given to the side to move at the end of a line: "... gets +N ...".
fn gets(end: &str) -> Option<i64> {
    let after = end.split(" gets ").nth(1)?;
    after.split_whitespace().next()?.parse().ok()
}

#[test]
fn pv_follows_probes_values_and_says_why_it_ends() {
    for (board, moves, ends) in [
        (CAPTURING, "", "the game is over"),
        (CIRCLING, "", "ends the game: each side keeps its own row"),
        (
            CIRCLING,
            "2 2 3",
            "ends the game: each side keeps its own row",
        ),
    ] {
        let (ok, out, err) = run(
            &["pv", "--cycles", "own-row-first", board, "--moves", moves],
            "",
        );
        assert!(ok, "{err}");
        let (steps, end) = steps(&out);
        assert!(!steps.is_empty() && end.contains(ends), "{out}");
        let mut line: Vec<u8> = moves
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect();
        for (k, step) in steps.iter().enumerate() {
            let p = probe(board, &line);
            assert_eq!(p["board"], step.board.as_str(), "{out}");
            assert_eq!(p["exact"], true, "{p}");
            assert_eq!(p["low"], step.value, "step {}: {out}", k + 1);
            assert!(p["best"].as_array().unwrap().contains(&step.pit.into()));
            // The value is kept along the line, but for the captures on the way.
            let next = steps.get(k + 1).map(|s| s.value).or_else(|| gets(&end));
            assert_eq!(step.value, step.captured - next.unwrap(), "{out}");
            line.push(step.pit);
        }
    }
    // The limit, and a line that cannot start: each says so.
    let (ok, out, _) = run(
        &[
            "pv",
            "--cycles",
            "own-row-first",
            CIRCLING,
            "--max-plies",
            "3",
        ],
        "",
    );
    assert!(ok && out.contains("stopped after 3 moves"), "{out}");
    let (ok, _, err) = run(&["pv", CIRCLING, "--moves", "2"], "");
    assert!(
        !ok && err.lines().count() == 1 && err.contains("--moves"),
        "{err}"
    );
}

/// A game from `start` by "the highest legal pit", `plies` moves at most.
fn highest_pit_game(start: &str, plies: usize) -> Vec<u8> {
    let mut board: Board = start.parse().unwrap();
    let mut moves = Vec::new();
    for _ in 0..plies {
        let legal = Rules::ABAPA.legal_moves(&board);
        let Some(m) = legal.as_slice().last() else {
            break;
        };
        moves.push(m.pit + 1);
        board = m.child;
    }
    moves
}

fn record(start: &str, moves: &[u8]) -> String {
    let pits: Vec<String> = moves.iter().map(u8::to_string).collect();
    format!("rules abapa\nstart {start}\n{}\n", pits.join(" "))
}

#[test]
fn analyze_judges_each_move_as_probe_does_and_stops_at_the_repetition() {
    let moves = highest_pit_game(CAPTURING, 8);
    assert!(moves.len() >= 4, "{moves:?}");
    let (ok, out, err) = run(
        &["analyze", "--cycles", "own-row-first", "--json"],
        &record(CAPTURING, &moves),
    );
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let rows = v["moves"].as_array().unwrap();
    assert_eq!(rows.len(), moves.len());
    assert_eq!(v["repetition"], false);
    for (i, row) in rows.iter().enumerate() {
        let p = probe(CAPTURING, &moves[..i]);
        for key in ["exact", "low", "high"] {
            assert_eq!(row[key], p[key], "move {}: {key}", i + 1);
        }
        let best: Vec<Value> = p["best"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| (b.as_i64().unwrap() - 1).into())
            .collect();
        assert_eq!(row["best"], Value::Array(best));
        let played = p["moves"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["pit"] == moves[i])
            .unwrap();
        assert_eq!(row["played"]["low"], played["low"]);
        assert_eq!(row["played"]["high"], played["high"]);
        if p["exact"] == true && played["exact"] == true {
            let lost = p["low"].as_i64().unwrap() - played["low"].as_i64().unwrap();
            assert_eq!(row["lost"], lost);
        }
    }

    // Every move forced: the twelfth repeats the start, and the game ends there.
    let circle = [2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 1, 1, 2, 2];
    let (ok, out, err) = run(
        &["analyze", "--cycles", "own-row-first"],
        &record(CIRCLING, &circle),
    );
    assert!(ok, "{err}");
    assert!(
        out.contains("move 12 makes the 2nd occurrence")
            && out.contains(
                "the game ends by repetition, each side keeps its own row: south 1, north 1"
            )
            && out.contains("the 2 moves after it are not judged"),
        "{out}"
    );
    assert_eq!(
        out.lines().filter(|l| l.ends_with("repeats")).count(),
        1,
        "{out}"
    );

    // An illegal move, and the bounds: one line, non-zero.
    for (args, list, says) in [
        (
            vec!["--cycles", "own-row-first"],
            record(CIRCLING, &[2, 5]),
            "move 2 (pit 5 of north)",
        ),
        (vec!["--cycles", "bounds"], record(CIRCLING, &[2]), "bounds"),
    ] {
        let (ok, _, err) = run(&[&["analyze"][..], &args[..]].concat(), &list);
        assert!(
            !ok && err.lines().count() == 1 && err.contains(says),
            "{err}"
        );
    }
}

#[test]
fn play_answers_with_a_best_move_and_ends_on_the_repetition() {
    let (ok, out, err) = run(
        &["play", "--cycles", "own-row-first", "--start", CAPTURING],
        "1\nh\n2\n3\n",
    );
    assert!(ok, "{err}");
    assert!(out.contains("best   pit"), "{out}");
    let text = out.split("awari analyze reads this):").nth(1).unwrap();
    let record = awari::game::GameRecord::parse(text, Rules::ABAPA).unwrap();
    let said: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("north plays"))
        .collect();
    assert!(
        !said.is_empty() && said.len() == record.moves.len() / 2,
        "{out}"
    );
    let north = record.moves.iter().enumerate().filter(|(i, _)| i % 2 == 1);
    for (said, (i, &pit)) in said.iter().zip(north) {
        let pits: Vec<u8> = record.moves[..i].iter().map(|p| p + 1).collect();
        let p = probe(CAPTURING, &pits);
        // A best move; when none is proved to keep an exact value, the largest low.
        let best = p["best"].as_array().unwrap();
        let moves = p["moves"].as_array().unwrap();
        let top = moves.iter().map(|m| m["low"].as_i64().unwrap()).max();
        let played = moves.iter().find(|m| m["pit"] == pit + 1).unwrap();
        assert!(
            best.contains(&(pit + 1).into()) || (best.is_empty() && played["low"].as_i64() == top),
            "move {}: {p}",
            i + 1
        );
        assert!(said.starts_with(&format!("north plays {}", pit + 1)));
    }

    // One seed a side: South's six moves and North's answers bring the start back.
    let (ok, out, err) = run(
        &["play", "--cycles", "own-row-first", "--start", CIRCLING],
        "2\n3\n4\n5\n6\n1\n",
    );
    assert!(ok, "{err}");
    assert!(
        out.contains("game over: this position occurs for the 2nd time since the last capture: the game ends by repetition, each side keeps the seeds on its own row: south 1, north 1"),
        "{out}"
    );
    let (ok, _, err) = run(
        &["play", "--cycles", "own-row-first", "--level", "good"],
        "",
    );
    assert!(
        !ok && err.lines().count() == 1 && err.contains("--level good"),
        "{err}"
    );
}

/// A running `awari serve` on the tables, killed when dropped.
struct Server {
    child: std::process::Child,
    addr: String,
}

impl Server {
    fn start() -> Server {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_awari"))
            .args(["serve", "--port", "0", "--db"])
            .arg(db_dir())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let addr = common::serve_address(&mut child.stdout.take().unwrap())
            .unwrap_or_else(|first| panic!("no address in {first:?}"));
        Server { child, addr }
    }

    fn get(&self, path: &str) -> (u16, Value) {
        let (status, body) = common::http_get(&self.addr, path);
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

#[test]
fn the_api_answers_what_probe_answers_under_the_own_row_rule() {
    let server = Server::start();
    let board = CAPTURING.replace(' ', "+");
    let moves = highest_pit_game(CAPTURING, 3);
    for n in 0..=moves.len() {
        let pits: Vec<String> = moves[..n].iter().map(u8::to_string).collect();
        let (status, v) = server.get(&format!(
            "/api/position?rules=abapa&board={board}&cycles=own-row-first&moves={}",
            pits.join(",")
        ));
        assert_eq!(status, 200, "{v}");
        assert_eq!(v, probe(CAPTURING, &moves[..n]));
    }
    let at = format!("/api/position?rules=abapa&board={board}");
    for (query, says) in [
        ("&cycles=bounds", "cycles=bounds"),
        ("&cycles=own-row", "cycles=own-row"),
        ("&cycles=own-row-first&moves=1,7", "not a pit 1..6"),
        (
            "&cycles=own-row-first&moves=1,1,1,1,1,1",
            "not a legal move",
        ),
        ("&cycles=own-row-first&budget=1000001", "bad budget"),
        ("&moves=1", "own-row rule"),
    ] {
        let (status, v) = server.get(&format!("{at}{query}"));
        let error = v["error"].as_str().unwrap();
        assert_eq!(status, 400, "{query}: {v}");
        assert!(
            error.contains(says) && !error.contains('\n'),
            "{query}: {error}"
        );
    }
    // Beyond the tables: a 400 that names the layer and not the server's folder.
    let (status, v) =
        server.get("/api/position?rules=abapa&board=4+4+4+4+4+4+4+4+4+4+4+4&cycles=own-row-first");
    let error = v["error"].as_str().unwrap();
    assert_eq!(status, 400, "{v}");
    assert!(
        error.contains("not built") && !error.contains(db_dir().to_str().unwrap()),
        "{error}"
    );
}

/// The page as headless Chromium leaves it after its requests: `--dump-dom`.
fn page(server: &Server, query: &str) -> String {
    let out = std::process::Command::new(common::chromium_path())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--virtual-time-budget=10000",
        ])
        .arg("--dump-dom")
        .arg(format!("http://{}/?{query}", server.addr))
        .stderr(Stdio::null())
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
#[ignore = "needs headless Chromium; run with --ignored (.ci/run does)"]
fn the_page_shows_the_own_row_values_with_the_history() {
    let server = Server::start();
    // North to move after three moves: an exact value, and moves proved only to intervals.
    let moves = [1, 1, 2];
    let p = probe(CAPTURING, &moves);
    let dom = page(
        &server,
        &format!(
            "rules=abapa&board={}&moves=1+1+2&computer=none&cycles=own-row-first",
            CAPTURING.replace(' ', "+")
        ),
    );
    let sign = |v: &Value| format!("{:+}", v.as_i64().unwrap()).replace("+0", "0");
    let value = match p["exact"] == true {
        true => sign(&p["low"]),
        false => format!("between {} and {}", sign(&p["low"]), sign(&p["high"])),
    };
    assert!(
        dom.contains(&format!("own row (first repetition): value {value} (")),
        "{value}: {dom}"
    );
    for m in p["moves"].as_array().unwrap() {
        let pit = m["pit"].as_i64().unwrap() - 1 + 6;
        let label = match m["exact"] == true {
            true => sign(&m["low"]),
            false => format!("{}..{}", sign(&m["low"]), sign(&m["high"])),
        };
        let best = p["best"].as_array().unwrap().contains(&m["pit"]);
        let class = if best { "val best" } else { "val worse" };
        let cell = format!("class=\"{class}\" id=\"val-{pit}\"");
        let at = dom.find(&cell).unwrap_or_else(|| panic!("{cell}: {dom}"));
        let shown = dom[at..]
            .split('>')
            .nth(1)
            .unwrap()
            .split('<')
            .next()
            .unwrap();
        assert_eq!(shown, label, "pit {pit}");
    }
    // The start comes back: the game is over, each side keeping its row.
    let dom = page(
        &server,
        &format!(
            "rules=abapa&board={}&moves=2+2+3+3+4+4+5+5+6+6+1+1&computer=none&cycles=own-row-first",
            CIRCLING.replace(' ', "+")
        ),
    );
    assert!(
        dom.contains("Game over: this position occurs for the 2nd time since the last capture"),
        "{dom}"
    );
}

/// Tables for the batch: abapa's bounds of layers 0..=12, and the own-row values of layers
/// 0..=10 (first repetition) and 0..=4 (third) at 10 nodes a root, so that many positions
/// are left open; boards of the layers above are read from the bounds.
fn batch_db() -> &'static Path {
    static DB: OnceLock<PathBuf> = OnceLock::new();
    DB.get_or_init(|| {
        let dir = common::kept_dir(&common::scratch_root("awari-own-row-batch-tests"));
        for (cycles, top) in [
            ("bounds", "12"),
            ("own-row-first", "10"),
            ("own-row-third", "4"),
        ] {
            awari(&["build", "-q", "--cycles", cycles, "--max-seeds", top])
                .args(["--search-budget", "10"])
                .arg("--db")
                .arg(&dir)
                .assert()
                .success();
        }
        dir
    })
}

/// `count` random boards of layers `0..=top` (a layer drawn uniformly, then a uniform
/// placement of its seeds), one a line.
fn random_boards(count: usize, top: u64, mut seed: u64) -> Vec<String> {
    let mut next = move |below: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % below
    };
    (0..count)
        .map(|_| {
            let n = next(top + 1);
            let mut pits = [0u64; 12];
            for _ in 0..n {
                pits[next(12) as usize] += 1;
            }
            let text: Vec<String> = pits.iter().map(u64::to_string).collect();
            text.join(" ")
        })
        .collect()
}

/// `probe --batch` under the own-row rule: `(ok, stdout lines, stderr)`.
fn own_row_batch(cycles: &str, extra: &[&str], lines: &[String]) -> (bool, Vec<String>, String) {
    let out = awari(&["probe", "--batch", "--cycles", cycles])
        .args(extra)
        .arg("--db")
        .arg(batch_db())
        .write_stdin(lines.join("\n") + "\n")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let lines = text.lines().map(str::to_string).collect();
    (
        out.status.success(),
        lines,
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The batch's text line of a JSON answer: "LOW HIGH best P,Q", "LOW HIGH game-over" or
/// "V V unproved".
fn text_of(a: &Value) -> String {
    let best: Vec<String> = a["best"]
        .as_array()
        .unwrap()
        .iter()
        .map(Value::to_string)
        .collect();
    let tail = if a["moves"].as_array().unwrap().is_empty() {
        "game-over".to_string()
    } else if best.is_empty() {
        "unproved".to_string()
    } else {
        format!("best {}", best.join(","))
    };
    format!("{} {} {tail}", a["low"], a["high"])
}

/// `probe --json` of one board with an empty history, its search at 1,000 nodes.
fn probe_one(cycles: &str, board: &str) -> Value {
    let out = awari(&["probe", "--cycles", cycles, "--json"])
        .args(["--search-budget", "1000", "--db"])
        .arg(batch_db())
        .arg(board)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{board}: {err}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `(low, high)` of a JSON answer or move.
fn interval(v: &Value) -> (i64, i64) {
    (v["low"].as_i64().unwrap(), v["high"].as_i64().unwrap())
}

/// The one-at-a-time probe (its search included) knows at least what the batch (the
/// tables alone) knows: its value and every move's interval inside the batch's, the same
/// value where the batch's is exact, and the batch's best moves among its own.
fn check_probe_within_batch(batch: &Value, probe: &Value, counts: &mut [usize; 3]) {
    let inside = |inner: (i64, i64), outer: (i64, i64)| {
        outer.0 <= inner.0 && inner.0 <= inner.1 && inner.1 <= outer.1
    };
    assert_eq!(batch["board"], probe["board"]);
    assert_eq!(probe["history"], 0);
    assert!(inside(interval(probe), interval(batch)), "{batch}\n{probe}");
    let (bm, pm) = (
        batch["moves"].as_array().unwrap(),
        probe["moves"].as_array().unwrap(),
    );
    assert_eq!(bm.len(), pm.len(), "{batch}\n{probe}");
    for (b, p) in bm.iter().zip(pm) {
        for key in ["pit", "captured", "child", "ends_by_repetition"] {
            assert_eq!(b[key], p[key], "{batch}\n{probe}");
        }
        assert!(inside(interval(p), interval(b)), "{batch}\n{probe}");
    }
    if batch["exact"] == true {
        assert_eq!(interval(probe), interval(batch), "{batch}\n{probe}");
        let pb = probe["best"].as_array().unwrap();
        for pit in batch["best"].as_array().unwrap() {
            assert!(pb.contains(pit), "{batch}\n{probe}");
        }
    }
    counts[0] += 1;
    counts[1] += usize::from(batch["exact"] == true);
    counts[2] += usize::from(text_of(batch) == text_of(probe));
}

#[test]
fn batch_answers_the_tables_and_one_board_probes_agree() {
    let boards = random_boards(100_000, 12, 7);
    let (ok, text, err) = own_row_batch("own-row-first", &[], &boards);
    assert!(ok, "{err}");
    let (ok, json, err) = own_row_batch("own-row-first", &["--json"], &boards);
    assert!(ok, "{err}");
    assert_eq!((text.len(), json.len()), (boards.len(), boards.len()));
    let mut kinds = [0usize; 4]; // exact with best moves, open, game over, unproved
    let mut answers = Vec::with_capacity(boards.len());
    for ((board, t), j) in boards.iter().zip(&text).zip(&json) {
        let a: Value = serde_json::from_str(j).unwrap();
        assert_eq!(
            a["board"].as_str().unwrap(),
            board.parse::<Board>().unwrap().to_string()
        );
        assert_eq!(
            (&a["history"], &a["nodes"], &a["from_tables"]),
            (&0.into(), &0.into(), &true.into())
        );
        let (low, high) = interval(&a);
        assert!(low <= high && (a["exact"] == true) == (low == high), "{a}");
        for m in a["moves"].as_array().unwrap() {
            let (l, h) = interval(m);
            assert!(l <= h && h <= high, "{a}");
        }
        assert_eq!(*t, text_of(&a));
        kinds[match t.split(' ').nth(2).unwrap() {
            "best" if low == high => 0,
            "best" => 1,
            "game-over" => 2,
            "unproved" => 3,
            other => panic!("{other}: {t}"),
        }] += 1;
        answers.push(a);
    }
    // Both kinds of values, and each kind of line, are met.
    assert!(kinds.iter().all(|&k| k >= 100), "{kinds:?}");

    // 300 of them, probed one at a time (its search at 1,000 nodes).
    let mut counts = [0usize; 3];
    for (board, a) in boards.iter().zip(&answers).step_by(boards.len() / 300) {
        let p = probe_one("own-row-first", board);
        check_probe_within_batch(a, &p, &mut counts);
    }
    assert!(counts[0] >= 300 && counts[1] >= 50, "{counts:?}");
    // Most lines say what the probe says, search and all (250 of 301 when written).
    assert!(counts[2] * 3 >= counts[0] * 2, "{counts:?}");
}

#[test]
fn batch_under_the_third_occurrence_and_its_errors() {
    // The third occurrence: own-row layers 0..=4, the bounds above.
    let boards = random_boards(40, 6, 11);
    let (ok, json, err) = own_row_batch("own-row-third", &["--json"], &boards);
    assert!(ok, "{err}");
    let mut counts = [0usize; 3];
    for (board, line) in boards.iter().zip(&json) {
        let a: Value = serde_json::from_str(line).unwrap();
        check_probe_within_batch(&a, &probe_one("own-row-third", board), &mut counts);
    }
    assert!(counts[1] >= 10, "{counts:?}");

    // A bad line, a blank one, a board above the tables (layer 13) and one whose capture
    // is fine but whose layer is not: each its own error, the rest answered.
    let lines: Vec<String> = [
        "0 0 0 0 0 1 0 0 0 0 0 1",
        "1 2 3",
        "",
        "4 4 4 1 0 0 0 0 0 0 0 0",
        "0 0 0 0 0 1 0 0 0 0 0 2",
    ]
    .map(str::to_string)
    .to_vec();
    let (ok, out, _) = own_row_batch("own-row-first", &[], &lines);
    assert!(!ok, "{out:?}");
    assert_eq!(out.len(), 5, "{out:?}");
    assert!(
        out[0].contains(" best ") && out[4].contains(" best "),
        "{out:?}"
    );
    assert!(out[1].starts_with("error: line 2: "), "{out:?}");
    assert_eq!(out[2], "");
    assert!(
        out[3].starts_with("error: line 4: ")
            && out[3].contains("13")
            && out[3].contains("not built"),
        "{out:?}"
    );
    let (ok, out, _) = own_row_batch("own-row-first", &["--json"], &lines[..2]);
    assert!(!ok);
    let e: Value = serde_json::from_str(&out[1]).unwrap();
    assert_eq!(e["line"], 2, "{e}");
    // --moves is for one position.
    let (ok, _, err) = own_row_batch("own-row-first", &["--moves", "1"], &lines[..1]);
    assert!(!ok && err.contains("--moves"), "{err}");
}

/// A board above every table built names the own-row layer to build (not the bounds', which
/// a probe reads only where they reach further than the own-row values).
#[test]
fn a_board_above_the_tables_names_the_own_row_build() {
    let (ok, out, err) = run(
        &[
            "probe",
            "--cycles",
            "own-row-first",
            "1 1 1 1 1 1 1 0 0 0 0 0",
        ],
        "",
    );
    assert!(!ok, "{out}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("own-row (first repetition) layer 7")
            && err.contains("awari build --cycles own-row-first --rules abapa --max-seeds 7"),
        "{err}"
    );
}
