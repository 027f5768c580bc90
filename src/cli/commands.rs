//! One function per subcommand. Each returns an error whose Display is one line; `main`
//! prints it and exits non-zero.

use super::{Cli, Command, DbArgs, LayerRange};
use anyhow::{anyhow, bail, Context, Result};
use awari::build::{self, BuildOptions};
use awari::probe::{PvEnd, Verdict};
use awari::store::WriteOptions;
use awari::{Board, Database, MoveValue, Rules, Turn};
use serde_json::{json, Value};
use std::io::{BufRead, Write};

/// Runs the command; `Ok(false)` means it ran but found problems (exit code 1).
pub fn run(cli: Cli) -> Result<bool> {
    match cli.command {
        Command::Build {
            db,
            max_seeds,
            threads,
            memory_limit,
            block_size,
            zstd_level,
            quiet,
        } => cmd_build(
            db,
            max_seeds,
            threads,
            memory_limit,
            block_size,
            zstd_level,
            quiet,
        ),
        Command::Probe {
            db,
            board,
            captured,
            json,
            batch,
        } => cmd_probe(db, board, captured, json, batch),
        Command::Pv {
            db,
            board,
            max_plies,
        } => cmd_pv(db, &board, max_plies),
        Command::Stats {
            db,
            layers,
            histogram,
            json,
        } => cmd_stats(db, layers, histogram, json),
        Command::Verify { db, layers } => cmd_verify(db, layers),
        Command::Start { db, seeds_per_pit } => cmd_start(db, seeds_per_pit),
        Command::Moves { rules, board } => cmd_moves(&rules, &board),
    }
}

fn parse_rules(name: &str) -> Result<Rules> {
    Ok(name.parse::<Rules>()?)
}

fn parse_board(text: &str) -> Result<Board> {
    text.parse::<Board>()
        .map_err(|e| anyhow!("bad board '{}': {e}", text.trim()))
}

fn open_db(args: &DbArgs) -> Result<Database> {
    let rules = parse_rules(&args.rules)?;
    Ok(Database::open(&args.db, rules)?)
}

/// Pits as players name them: 1..6 from the mover's left.
fn pit_name(pit: u8) -> String {
    (pit + 1).to_string()
}

fn verdict_words(v: i8) -> &'static str {
    match Verdict::of_difference(v.into()) {
        Verdict::Win => "the side to move wins",
        Verdict::Draw => "draw",
        Verdict::Loss => "the side to move loses",
    }
}

fn cmd_build(
    db: DbArgs,
    max_seeds: u32,
    threads: Option<usize>,
    memory_limit: Option<f64>,
    block_size: u32,
    zstd_level: i32,
    quiet: bool,
) -> Result<bool> {
    let rules = parse_rules(&db.rules)?;
    if block_size == 0 {
        bail!("--block-size must be at least 1");
    }
    if threads == Some(0) {
        bail!("--threads must be at least 1");
    }
    if let Some(limit) = memory_limit {
        if limit.is_nan() || limit <= 0.0 {
            bail!("--memory-limit must be a positive number of GiB");
        }
    }
    let opts = BuildOptions {
        db: db.db.clone(),
        rules,
        max_seeds,
        threads,
        progress: !quiet,
        memory_limit: memory_limit.map(|g| (g * (1u64 << 30) as f64) as u64),
        write: WriteOptions {
            block_size,
            zstd_level,
        },
    };
    let started = std::time::Instant::now();
    let mut header_printed = false;
    let reports = build::build(&opts, |r| {
        // Printed with the first layer, so a build refused up front prints only its error.
        if !header_printed {
            header_printed = true;
            println!(
                "{:>5} {:>13} {:>9} {:>12} {:>9} {:>12} {:>8} {:>12} {:>12} {:>12}",
                "layer",
                "positions",
                "seconds",
                "pos/s",
                "peak MiB",
                "bytes",
                "B/pos",
                "wins",
                "draws",
                "losses"
            );
        }
        let rate = if r.built && r.seconds > 0.0 {
            format!("{:.0}", r.positions as f64 / r.seconds)
        } else {
            "on disk".to_string()
        };
        let peak = build::peak_rss()
            .map(|b| (b >> 20).to_string())
            .unwrap_or_else(|| "?".into());
        println!(
            "{:>5} {:>13} {:>9.2} {:>12} {:>9} {:>12} {:>8.4} {:>12} {:>12} {:>12}",
            r.seeds,
            r.positions,
            r.seconds,
            rate,
            peak,
            r.bytes,
            r.bytes as f64 / r.positions as f64,
            r.summary.wins(),
            r.summary.draws(),
            r.summary.losses()
        );
        let _ = std::io::stdout().flush();
    })?;
    let built = reports.iter().filter(|r| r.built).count();
    println!(
        "{} layers of '{}' in {}: {} built, {} already there, {:.1} s",
        reports.len(),
        rules,
        awari::store::rules_dir(&db.db, rules).display(),
        built,
        reports.len() - built,
        started.elapsed().as_secs_f64()
    );
    Ok(true)
}

fn parse_captured(text: &str) -> Result<(u32, u32)> {
    let bad = || anyhow!("bad --captured '{text}': expected two seed counts like 20,12");
    let (a, b) = text.split_once(',').ok_or_else(bad)?;
    let a: u32 = a.trim().parse().map_err(|_| bad())?;
    let b: u32 = b.trim().parse().map_err(|_| bad())?;
    Ok((a, b))
}

/// Everything `probe` says about one board.
struct ProbeAnswer {
    board: Board,
    value: i8,
    game_over: bool,
    moves: Vec<MoveValue>,
    best: Vec<u8>,
}

fn answer(db: &Database, board: Board) -> Result<ProbeAnswer> {
    let value = db.value(&board)?;
    let moves = db.moves_with_values(&board)?;
    Ok(assemble(board, value, &moves, db.rules()))
}

fn assemble(board: Board, value: i8, moves: &[MoveValue], rules: Rules) -> ProbeAnswer {
    let best_value = moves.iter().map(|m| m.value).max();
    let best = moves
        .iter()
        .filter(|m| Some(m.value) == best_value)
        .map(|m| m.pit)
        .collect();
    ProbeAnswer {
        board,
        value,
        game_over: matches!(rules.turn(&board), Turn::GameOver { .. }),
        moves: moves.to_vec(),
        best,
    }
}

fn answer_json(db: &Database, a: &ProbeAnswer, captured: Option<(u32, u32)>) -> Value {
    let mut obj = json!({
        "board": a.board.to_string(),
        "rules": db.rules().name(),
        "seeds": a.board.seeds(),
        "value": a.value,
        "verdict": Verdict::of_difference(a.value.into()).as_str(),
        "game_over": a.game_over,
        "moves": a.moves.iter().map(|m| json!({
            "pit": m.pit,
            "captured": m.captured,
            "value": m.value,
            "child": m.child.to_string(),
        })).collect::<Vec<_>>(),
        "best": a.best,
    });
    if let Some((mine, theirs)) = captured {
        let o = awari::probe::outcome(a.value, a.board.seeds(), mine, theirs);
        obj["outcome"] = json!({
            "verdict": o.verdict.as_str(),
            "mover_score": o.mover_score,
            "opponent_score": o.opponent_score,
        });
    }
    obj
}

fn check_captured(board: &Board, captured: Option<(u32, u32)>) -> Result<()> {
    if let Some((a, b)) = captured {
        if board.seeds() + a + b > awari::MAX_SEEDS {
            bail!(
                "--captured {a},{b} with {} seeds on the board makes more than {} seeds",
                board.seeds(),
                awari::MAX_SEEDS
            );
        }
    }
    Ok(())
}

fn cmd_probe(
    args: DbArgs,
    board: Option<String>,
    captured: Option<String>,
    json_out: bool,
    batch: bool,
) -> Result<bool> {
    let db = open_db(&args)?;
    let captured = captured.as_deref().map(parse_captured).transpose()?;
    if batch {
        return probe_batch(&db, captured, json_out);
    }
    let text = board
        .ok_or_else(|| anyhow!("give a board to probe, or --batch to read boards from stdin"))?;
    let board = parse_board(&text)?;
    check_captured(&board, captured)?;
    let a = answer(&db, board)?;
    if json_out {
        println!("{}", answer_json(&db, &a, captured));
        return Ok(true);
    }
    println!(
        "board  {}   ({} seeds, rules {})",
        a.board,
        a.board.seeds(),
        db.rules()
    );
    println!("{}", a.board.picture());
    println!("value  {:+}   ({})", a.value, verdict_words(a.value));
    if a.game_over {
        println!("the game is over: the side to move cannot play");
    }
    for m in &a.moves {
        let cap = if m.captured > 0 {
            format!("captures {:>2}", m.captured)
        } else {
            "           ".to_string()
        };
        println!(
            "  pit {}  {}  value {:+3}   -> {}  (opponent to move)",
            pit_name(m.pit),
            cap,
            m.value,
            m.child
        );
    }
    if !a.best.is_empty() {
        let names: Vec<String> = a.best.iter().map(|&p| pit_name(p)).collect();
        println!("best   pit {}", names.join(", pit "));
    }
    if let Some((mine, theirs)) = captured {
        let o = awari::probe::outcome(a.value, a.board.seeds(), mine, theirs);
        println!(
            "outcome {} for the side to move, final score {} - {}",
            o.verdict.as_str(),
            o.mover_score,
            o.opponent_score
        );
    }
    Ok(true)
}

/// Lines answered together at most: their lookups are grouped by block.
const BATCH_LINES: usize = 1 << 20;
/// A batch closes when no new line arrives for this long, so a program that writes one
/// board and waits for its answer is answered at once.
const BATCH_WAIT: std::time::Duration = std::time::Duration::from_millis(20);

fn probe_batch(db: &Database, captured: Option<(u32, u32)>, json_out: bool) -> Result<bool> {
    // A reader thread feeds lines through a channel; the main thread takes as many as have
    // arrived (up to BATCH_LINES) and answers them together.
    let (tx, rx) = std::sync::mpsc::sync_channel::<std::io::Result<String>>(2 * BATCH_LINES);
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let stop = line.is_err();
            if tx.send(line).is_err() || stop {
                break;
            }
        }
    });
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut all_ok = true;
    let mut line_no = 0usize;
    while let Ok(first) = rx.recv() {
        let mut lines = vec![first.context("reading stdin")?];
        while lines.len() < BATCH_LINES {
            match rx.recv_timeout(BATCH_WAIT) {
                Ok(line) => lines.push(line.context("reading stdin")?),
                Err(_) => break,
            }
        }
        let answers = answer_lines(db, &lines, captured);
        for (line, result) in lines.iter().zip(answers) {
            line_no += 1;
            if line.trim().is_empty() {
                writeln!(out)?;
                continue;
            }
            match result {
                Ok(a) if json_out => writeln!(out, "{}", answer_json(db, &a, captured))?,
                Ok(a) => {
                    let best = if a.best.is_empty() {
                        "game-over".to_string()
                    } else {
                        let names: Vec<String> = a.best.iter().map(|&p| pit_name(p)).collect();
                        format!("best {}", names.join(","))
                    };
                    writeln!(out, "{} {}", a.value, best)?;
                }
                Err(e) => {
                    all_ok = false;
                    writeln!(out, "error: line {line_no}: {e:#}")?;
                }
            }
        }
        out.flush()?;
    }
    Ok(all_ok)
}

/// Answers a batch of lines: every board and every child of its moves is looked up in one
/// grouped pass ([`Database::values_many`]). Lines that fail on their own (bad text, a layer
/// not built) get their own error; a damaged file fails the batch.
fn answer_lines(
    db: &Database,
    lines: &[String],
    captured: Option<(u32, u32)>,
) -> Vec<Result<ProbeAnswer>> {
    let rules = db.rules();
    let mut results: Vec<Option<Result<ProbeAnswer>>> = Vec::with_capacity(lines.len());
    let mut wanted: Vec<Board> = Vec::new();
    // For each line answered in the grouped pass: its board, its moves, where its values start.
    let mut pending: Vec<(usize, Board, awari::MoveList, usize)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            results.push(Some(Err(anyhow!("blank line"))));
            continue;
        }
        let board = match parse_board(line).and_then(|b| check_captured(&b, captured).map(|_| b)) {
            Ok(b) => b,
            Err(e) => {
                results.push(Some(Err(e)));
                continue;
            }
        };
        let moves = rules.legal_moves(&board);
        let needs_missing =
            !db.has_layer(board.seeds()) || moves.iter().any(|m| !db.has_layer(m.child.seeds()));
        if needs_missing {
            // The single-board path names the missing layer and the command that builds it.
            results.push(Some(answer(db, board)));
            continue;
        }
        pending.push((i, board, moves, wanted.len()));
        wanted.push(board);
        wanted.extend(moves.iter().map(|m| m.child));
        results.push(None);
    }
    match db.values_many(&wanted) {
        Ok(values) => {
            for (i, board, moves, at) in pending {
                let mut mv: Vec<MoveValue> = Vec::with_capacity(moves.len());
                for (k, m) in moves.iter().enumerate() {
                    mv.push(MoveValue {
                        pit: m.pit,
                        captured: m.captured,
                        child: m.child,
                        value: m.captured as i8 - values[at + 1 + k],
                    });
                }
                results[i] = Some(Ok(assemble(board, values[at], &mv, rules)));
            }
        }
        Err(e) => {
            let msg = e.to_string();
            for (i, ..) in pending {
                results[i] = Some(Err(anyhow!("{msg}")));
            }
        }
    }
    results
        .into_iter()
        .map(|r| r.expect("every line answered"))
        .collect()
}

fn cmd_pv(args: DbArgs, board: &str, max_plies: usize) -> Result<bool> {
    let db = open_db(&args)?;
    let board = parse_board(board)?;
    let pv = db.principal_variation(&board, max_plies)?;
    println!("start  {}   value {:+}", board, db.value(&board)?);
    // Captures are tallied for the side that moved first in the variation.
    let (mut first, mut second) = (0u32, 0u32);
    for (ply, step) in pv.steps.iter().enumerate() {
        let side = if ply % 2 == 0 { "A" } else { "B" };
        if ply % 2 == 0 {
            first += u32::from(step.captured);
        } else {
            second += u32::from(step.captured);
        }
        let cap = if step.captured > 0 {
            format!(" captures {}", step.captured)
        } else {
            String::new()
        };
        println!(
            "{:>4}. {side} {}  value {:+3}  plays pit {}{cap}",
            ply + 1,
            step.board,
            step.value,
            pit_name(step.pit)
        );
    }
    let side_last = if pv.steps.len() % 2 == 0 { "A" } else { "B" };
    match pv.end {
        PvEnd::GameOver { value } => println!(
            "end    {}   the game is over; {side_last} (to move) gets {:+} of the {} seeds left",
            pv.last,
            value,
            pv.last.seeds()
        ),
        PvEnd::Repetition => {
            let v = db.value(&pv.last)?;
            if v == 0 {
                println!(
                    "end    {}   this position repeats: endless play, the {} seeds left are shared",
                    pv.last,
                    pv.last.seeds()
                );
            } else {
                println!(
                    "end    {}   this position repeats although its value is {v:+}: the tables hold values, not distances, so this line does not show how the value is forced",
                    pv.last
                );
            }
        }
        PvEnd::Limit => println!("end    {}   stopped after {max_plies} moves", pv.last),
    }
    println!("captured along the way: A {first}, B {second} (A moved first)");
    Ok(true)
}

fn layer_span(db: &Database, layers: Option<LayerRange>) -> Result<(u32, u32)> {
    match layers {
        Some(r) => Ok((r.first, r.last)),
        None => {
            let present: Vec<u32> = (0..=awari::MAX_SEEDS)
                .filter(|&n| db.layer(n).is_some())
                .collect();
            match (present.first(), present.last()) {
                (Some(&a), Some(&b)) => Ok((a, b)),
                _ => bail!(
                    "no layers of '{}' in {}; run: awari build --rules {} --db {}",
                    db.rules(),
                    db.dir().display(),
                    db.rules(),
                    db.dir().display()
                ),
            }
        }
    }
}

fn cmd_stats(
    args: DbArgs,
    layers: Option<LayerRange>,
    histogram: bool,
    json_out: bool,
) -> Result<bool> {
    let db = open_db(&args)?;
    let (first, last) = layer_span(&db, layers)?;
    let mut rows = Vec::new();
    if !json_out {
        println!(
            "{:>5} {:>13} {:>12} {:>12} {:>12} {:>12} {:>8}",
            "layer", "positions", "wins", "draws", "losses", "bytes", "B/pos"
        );
    }
    for n in first..=last {
        let Some(file) = db.layer(n) else {
            if json_out {
                eprintln!("warning: layer {n} is not built; it is left out of the JSON");
                continue;
            }
            println!("{n:>5}   (not built)");
            continue;
        };
        let s = file.recount()?;
        if &s != file.summary() {
            bail!(
                "{}: the values stored disagree with the counts in the header",
                file.path().display()
            );
        }
        let bpp = file.bytes() as f64 / s.positions as f64;
        if json_out {
            let hist: serde_json::Map<String, Value> = (-(n as i32)..=n as i32)
                .filter(|&v| s.count(v) > 0)
                .map(|v| (v.to_string(), json!(s.count(v))))
                .collect();
            rows.push(json!({
                "seeds": n,
                "positions": s.positions,
                "wins": s.wins(),
                "draws": s.draws(),
                "losses": s.losses(),
                "bytes": file.bytes(),
                "bytes_per_position": bpp,
                "histogram": hist,
            }));
            continue;
        }
        println!(
            "{n:>5} {:>13} {:>12} {:>12} {:>12} {:>12} {:>8.4}",
            s.positions,
            s.wins(),
            s.draws(),
            s.losses(),
            file.bytes(),
            bpp
        );
        if histogram {
            let parts: Vec<String> = (-(n as i32)..=n as i32)
                .filter(|&v| s.count(v) > 0)
                .map(|v| format!("{v:+}:{}", s.count(v)))
                .collect();
            println!("      values {}", parts.join(" "));
        }
    }
    if json_out {
        println!("{}", serde_json::to_string_pretty(&Value::Array(rows))?);
    }
    Ok(true)
}

fn cmd_verify(args: DbArgs, layers: Option<LayerRange>) -> Result<bool> {
    let db = open_db(&args)?;
    let (first, last) = layer_span(&db, layers)?;
    let started = std::time::Instant::now();
    let checks = awari::verify::verify(&db, first, last, |c| {
        if c.mismatches == 0 {
            println!(
                "layer {:>2}: {} positions, checksums ok, every value equals the best of its moves",
                c.seeds, c.positions
            );
        } else {
            println!(
                "layer {:>2}: {} positions, MISMATCHES: {}",
                c.seeds, c.positions, c.mismatches
            );
            for m in &c.examples {
                println!(
                    "  {}  stored {:+}  best over moves {:+}",
                    m.board, m.stored, m.expected
                );
            }
        }
        let _ = std::io::stdout().flush();
    })?;
    let bad: u64 = checks.iter().map(|c| c.mismatches).sum();
    println!(
        "verified layers {first}..={last} of '{}' in {:.1} s: {}",
        db.rules(),
        started.elapsed().as_secs_f64(),
        if bad == 0 {
            "all consistent".to_string()
        } else {
            format!("mismatches: {bad}")
        }
    );
    Ok(bad == 0)
}

fn cmd_start(args: DbArgs, per_pit: u8) -> Result<bool> {
    if per_pit == 0 || per_pit > 4 {
        bail!("--seeds-per-pit must be 1..=4 (the standard game has 4)");
    }
    let db = open_db(&args)?;
    let seeds = 12 * u32::from(per_pit);
    if db.layer(seeds).is_none() {
        bail!(
            "the opening with {per_pit} seeds per pit needs the layers up to {seeds}; build them with: awari build --rules {} --max-seeds {seeds} --db {}",
            db.rules(),
            db.dir().display()
        );
    }
    let board = Board::opening(per_pit)?;
    let a = answer(&db, board)?;
    println!(
        "opening: {per_pit} per pit, {seeds} seeds, rules {}",
        db.rules()
    );
    println!("value  {:+}   ({})", a.value, verdict_words(a.value));
    for m in &a.moves {
        println!("  pit {}  value {:+}", pit_name(m.pit), m.value);
    }
    let names: Vec<String> = a.best.iter().map(|&p| pit_name(p)).collect();
    println!("best first moves: pit {}", names.join(", pit "));
    Ok(true)
}

fn cmd_moves(rules: &str, board: &str) -> Result<bool> {
    let rules = parse_rules(rules)?;
    let board = parse_board(board)?;
    println!(
        "board  {}   ({} seeds, rules {})",
        board,
        board.seeds(),
        rules
    );
    println!("{}", board.picture());
    match rules.turn(&board) {
        Turn::GameOver { value } => println!(
            "the game is over: the side to move gets {value:+} of the {} seeds left",
            board.seeds()
        ),
        Turn::Moves(moves) => {
            for m in &moves {
                println!(
                    "  pit {}  captures {:>2}  -> {}   (opponent to move)",
                    pit_name(m.pit),
                    m.captured,
                    m.child
                );
            }
        }
    }
    Ok(true)
}
