//! The subcommands with `--cycles own-row`: the same commands on the tables of guaranteed
//! bounds (`awari::own_row`).

use super::commands::{parse_board, parse_rules};
use super::output::{say, tell};
use super::{Command, DbArgs, LayerRange};
use anyhow::{anyhow, bail, Context, Result};
use awari::own_row::{self, BoundsDatabase, MoveBounds, PvEnd};
use awari::store::{temporary_path, TableKind};
use awari::{Board, Turn};
use serde_json::{json, Value};
use std::io::Write;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::Arc;

/// Whether the command asks for own-row cycles.
pub fn wanted(command: &Command) -> bool {
    let db = match command {
        Command::Build { db, .. }
        | Command::Probe { db, .. }
        | Command::Pv { db, .. }
        | Command::Stats { db, .. }
        | Command::Verify { db, .. }
        | Command::Start { db, .. }
        | Command::Play { db, .. }
        | Command::Analyze { db, .. } => db,
        _ => return false,
    };
    db.cycles == "own-row"
}

/// Runs a command that [`wanted`] own-row cycles.
pub fn run(command: Command) -> Result<bool> {
    match command {
        Command::Build { db, build, lean } => {
            if let Some(flag) = lean.first_given() {
                bail!("{flag} is for the exact tables' build; the own-row build has one pass, in memory");
            }
            let quiet = build.quiet;
            let opts = super::commands::build_options(&db, &build)?;
            let rules = opts.rules;
            super::output::keep_going_without_stdout();
            // The layer being built: layers are built in order, and `on_layer` reports
            // each one done.
            let building = Arc::new(AtomicU32::new(0));
            on_ctrl_c(&opts, Arc::clone(&building))?;
            let started = std::time::Instant::now();
            let reports = own_row::build_own_row(&opts, |r| {
                building.store(r.seeds + 1, Relaxed);
                if !quiet {
                    tell!(
                        "layer {:>2}: {:>11} positions, {:>6.2}% exact, {:>11} bytes, {:.2} s{}",
                        r.seeds,
                        r.positions,
                        100.0 * r.exact as f64 / r.positions as f64,
                        r.bytes,
                        r.seconds,
                        if r.built { "" } else { " (already built)" }
                    );
                }
            })?;
            let built = reports.iter().filter(|r| r.built).count();
            say!(
                "{} own-row layers of '{}' in {}: {} built, {} already there, {:.1} s",
                reports.len(),
                rules,
                awari::store::rules_dir(&own_row::own_row_db(&db.db), rules).display(),
                built,
                reports.len() - built,
                started.elapsed().as_secs_f64()
            );
            super::output::stdout_result()?;
            Ok(true)
        }
        Command::Probe {
            db,
            board,
            captured,
            json,
            batch,
        } => {
            if captured.is_some() {
                bail!("--captured is not available with --cycles own-row (a range, not a value)");
            }
            let db = open(&db)?;
            if batch {
                return probe_batch(&db, json);
            }
            let text = board.ok_or_else(|| {
                anyhow!("give a board to probe, or --batch to read boards from stdin")
            })?;
            probe_one(&db, &parse_board(&text)?, json)
        }
        Command::Pv {
            db,
            board,
            max_plies,
        } => {
            let db = open(&db)?;
            let board = parse_board(&board)?;
            let b = db.bounds(&board)?;
            say!("start  {board}   low {:+} high {:+}", b.low, b.high);
            let (steps, end) = db.principal_variation(&board, max_plies)?;
            for (k, m) in steps.iter().enumerate() {
                say!(
                    "{:>3}. pit {}{}  low {:+} high {:+}   -> {}",
                    k + 1,
                    m.pit + 1,
                    if m.captured > 0 {
                        format!(" captures {}", m.captured)
                    } else {
                        String::new()
                    },
                    m.low,
                    m.high,
                    m.child
                );
            }
            match end {
                PvEnd::GameOver { value } => {
                    say!("game over: the side to move gets {value:+} of the seeds left")
                }
                PvEnd::Repetition { own_row } => say!(
                    "the position repeats: each side keeps its own row, the side to move there gets {own_row:+}"
                ),
                PvEnd::MaxPlies => say!("stopped after {max_plies} moves"),
            }
            Ok(true)
        }
        Command::Stats {
            db,
            layers,
            histogram: _,
            json,
        } => {
            let db = open(&db)?;
            let (first, last) = span(&db, layers)?;
            let mut rows = Vec::new();
            for n in first..=last {
                let Some((low, high)) = db.layer(n) else {
                    continue;
                };
                let (l, h) = (low.read_all()?, high.read_all()?);
                let exact = l.iter().zip(&h).filter(|(a, b)| a == b).count() as u64;
                let positions = low.positions();
                let bytes = low.bytes() + high.bytes();
                if json {
                    rows.push(
                        json!({"layer": n, "positions": positions, "exact": exact, "bytes": bytes}),
                    );
                } else {
                    say!(
                        "layer {n:>2}: {positions:>11} positions, {exact:>11} exact ({:.2}%), {bytes:>11} bytes",
                        100.0 * exact as f64 / positions as f64
                    );
                }
            }
            if json {
                say!("{}", Value::Array(rows));
            }
            Ok(true)
        }
        Command::Verify { db, layers, sample } => {
            if sample.is_some() {
                bail!("--sample checks the exact tables; verify the own-row bounds whole");
            }
            let db = open(&db)?;
            let (first, last) = span(&db, layers)?;
            let checks = own_row::verify_own_row(&db, first, last)?;
            let mut bad = 0;
            for c in &checks {
                say!(
                    "layer {:>2}: {} positions, {} exact, {}",
                    c.seeds,
                    c.positions,
                    c.exact,
                    if c.mismatches == 0 {
                        "consistent".to_string()
                    } else {
                        format!("{} mismatches", c.mismatches)
                    }
                );
                for (b, s, w) in &c.examples {
                    say!(
                        "  {b}: stored [{}, {}], moves give [{}, {}]",
                        s.low,
                        s.high,
                        w.low,
                        w.high
                    );
                }
                bad += c.mismatches;
            }
            say!(
                "{}",
                if bad == 0 {
                    "all consistent".to_string()
                } else {
                    format!("mismatches: {bad}")
                }
            );
            Ok(bad == 0)
        }
        Command::Start { db, seeds_per_pit } => {
            let seeds = super::commands::opening_seeds(seeds_per_pit)?;
            let rules = parse_rules(&db.rules)?;
            let dir = db.db.clone();
            let db = open(&db)?;
            if db.complete_up_to().is_none_or(|top| top < seeds) {
                bail!(
                    "the opening with {seeds_per_pit} seeds per pit needs the own-row layers up to {seeds}; build them with: awari build --cycles own-row --rules {rules} --max-seeds {seeds} --db {}",
                    awari::store::shell_word(&dir)
                );
            }
            let board = Board::opening(seeds_per_pit)?;
            let b = db.bounds(&board)?;
            say!("opening: {seeds_per_pit} per pit, {seeds} seeds, rules {rules}, own-row cycles");
            say!(
                "low {:+}  high {:+}  ({})",
                b.low,
                b.high,
                if b.exact() { "exact" } else { "range" }
            );
            for m in db.moves_with_bounds(&board)? {
                say!("  pit {}  low {:+} high {:+}", m.pit + 1, m.low, m.high);
            }
            say!(
                "best first moves: pit {}",
                pits(&db.best_moves(&board)?, ", pit ")
            );
            Ok(true)
        }
        Command::Play { .. } | Command::Analyze { .. } => {
            bail!("--cycles own-row is available for build, probe, pv, stats, verify and start, not for play or analyze")
        }
        _ => bail!("this command takes no --cycles"),
    }
}

/// Ctrl-C during an own-row build, as during the exact tables' build: the layer being
/// built loses its temporary files, and the message says what is whole and how to go on.
/// (A layer is complete once its high file, written last, is renamed into place.)
fn on_ctrl_c(opts: &awari::build::BuildOptions, building: Arc<AtomicU32>) -> Result<()> {
    let root = own_row::own_row_db(&opts.db);
    let (rules, top) = (opts.rules, opts.max_seeds);
    ctrlc::set_handler(move || {
        let n = building.load(Relaxed);
        for kind in [TableKind::OwnRowLow, TableKind::OwnRowHigh] {
            let _ = std::fs::remove_file(temporary_path(&root, rules, n, kind));
        }
        if n > top {
            tell!("\ninterrupted after the last layer; every own-row layer on disk is whole");
        } else {
            tell!("\ninterrupted while building own-row layer {n}; layers below it are whole on disk, and the same command resumes at layer {n}");
        }
        std::process::exit(130);
    })
    .context("installing the Ctrl-C handler")
}

fn open(args: &DbArgs) -> Result<BoundsDatabase> {
    Ok(BoundsDatabase::open(&args.db, parse_rules(&args.rules)?)?)
}

fn span(db: &BoundsDatabase, layers: Option<LayerRange>) -> Result<(u32, u32)> {
    let top = db
        .complete_up_to()
        .ok_or_else(|| anyhow!("no own-row layer is built for rules '{}'", db.rules()))?;
    Ok(match layers {
        Some(r) => {
            if r.last > top {
                bail!(
                    "own-row layer {} is not built (layers 0..={top} are)",
                    r.last
                );
            }
            (r.first, r.last)
        }
        None => (0, top),
    })
}

fn pits(moves: &[MoveBounds], sep: &str) -> String {
    moves
        .iter()
        .map(|m| (m.pit + 1).to_string())
        .collect::<Vec<_>>()
        .join(sep)
}

fn answer_json(db: &BoundsDatabase, board: &Board) -> Result<Value> {
    let b = db.bounds(board)?;
    let moves = db.moves_with_bounds(board)?;
    let best = db.best_moves(board)?;
    Ok(json!({
        "board": board.to_string(),
        "rules": db.rules().name(),
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

fn probe_one(db: &BoundsDatabase, board: &Board, json_out: bool) -> Result<bool> {
    if json_out {
        say!("{}", answer_json(db, board)?);
        return Ok(true);
    }
    let b = db.bounds(board)?;
    say!(
        "board  {}   ({} seeds, rules {}, own-row cycles)",
        board,
        board.seeds(),
        db.rules()
    );
    say!("{}", board.picture());
    say!(
        "low {:+}  high {:+}   ({})",
        b.low,
        b.high,
        if b.exact() {
            "exact: the same whatever the history"
        } else {
            "a range: the result depends on which position repeats"
        }
    );
    if let Turn::GameOver { .. } = db.rules().turn(board) {
        say!("the game is over: the side to move cannot play");
    }
    for m in db.moves_with_bounds(board)? {
        let cap = super::output::captures_column(m.captured);
        say!(
            "  pit {}  {}  low {:+3} high {:+3}   -> {}  (opponent to move)",
            m.pit + 1,
            cap,
            m.low,
            m.high,
            m.child
        );
    }
    let best = db.best_moves(board)?;
    if !best.is_empty() {
        say!("best   pit {}", pits(&best, ", pit "));
    }
    Ok(true)
}

/// One line per input line: "low high best p,q" (or "low high game-over"), or JSON.
fn probe_batch(db: &BoundsDatabase, json_out: bool) -> Result<bool> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut all_ok = true;
    let mut stdin = std::io::stdin().lock();
    let mut k = 0;
    while let Some(line) = super::input::read_line(&mut stdin, super::input::MAX_LINE)
        .map_err(|e| anyhow!("reading standard input: {e}"))?
    {
        k += 1;
        let line = line.text().map_err(|why| anyhow!("{why}"));
        let text = if line.as_ref().is_ok_and(|l| l.trim().is_empty()) {
            String::new()
        } else {
            let answer = line.and_then(parse_board).and_then(|board| {
                if json_out {
                    Ok(answer_json(db, &board)?.to_string())
                } else {
                    let b = db.bounds(&board)?;
                    let best = db.best_moves(&board)?;
                    Ok(if best.is_empty() {
                        format!("{} {} game-over", b.low, b.high)
                    } else {
                        format!("{} {} best {}", b.low, b.high, pits(&best, ","))
                    })
                }
            });
            match answer {
                Ok(t) => t,
                Err(e) => {
                    all_ok = false;
                    super::commands::batch_error(k, &super::output::error_line(&e), json_out)
                }
            }
        };
        if let Err(e) = writeln!(out, "{text}") {
            super::output::failed(e);
        }
    }
    if let Err(e) = out.flush() {
        super::output::failed(e);
    }
    Ok(all_ok)
}
