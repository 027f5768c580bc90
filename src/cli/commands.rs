//! One function per subcommand. Each returns an error whose Display is one line; `main`
//! prints it and exits non-zero.

use super::output::{self, say, shown, tell};
use super::progress::{BuildProgress, NO_LAYER};
use super::{BuildArgs, Cli, Command, DbArgs, LayerRange, LeanArgs};
use anyhow::{anyhow, bail, Context, Result};
use awari::build::{self, BuildOptions, PassChoice};
use awari::probe::{PvEnd, Verdict};
use awari::solve::lean::LeanOptions;
use awari::store::{temporary_path, TableKind, WriteOptions};
use awari::{Board, Database, MoveValue, Rules, Turn};
use serde_json::{json, Value};
use std::io::Write;
use std::sync::atomic::Ordering::Relaxed;

/// Runs the command; `Ok(false)` means it ran but found problems (exit code 1).
pub fn run(cli: Cli) -> Result<bool> {
    if super::own_row::wanted(&cli.command) {
        return super::own_row::run(cli.command);
    }
    match cli.command {
        Command::Build { db, build, lean } => cmd_build(db, build, lean),
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
        Command::Verify { db, layers, sample } => cmd_verify(db, layers, sample),
        Command::Start { db, seeds_per_pit } => cmd_start(db, seeds_per_pit),
        Command::Moves { rules, board } => cmd_moves(&rules, &board),
        Command::Serve {
            db,
            port,
            bind,
            think_ms,
        } => super::serve::cmd_serve(&db, &bind, port, think_ms),
        Command::Play {
            db,
            level,
            computer,
            start,
            first,
            think_ms,
            seed,
        } => cmd_play(
            db,
            &level,
            &computer,
            start.as_deref(),
            &first,
            think_ms,
            seed,
        ),
        Command::Analyze {
            db,
            file,
            think_ms,
            json,
        } => {
            check_think(think_ms)?;
            super::play::cmd_analyze(
                &db.db,
                parse_rules(&db.rules)?,
                file.as_deref(),
                std::time::Duration::from_millis(think_ms),
                json,
            )
        }
    }
}

fn check_think(think_ms: u64) -> Result<()> {
    if think_ms == 0 {
        bail!("--think-ms must be at least 1");
    }
    Ok(())
}

fn cmd_play(
    db: DbArgs,
    level: &str,
    computer: &str,
    start: Option<&str>,
    first: &str,
    think_ms: u64,
    seed: Option<u64>,
) -> Result<bool> {
    check_think(think_ms)?;
    let seed = seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    super::play::cmd_play(super::play::PlayOptions {
        rules: parse_rules(&db.rules)?,
        db: db.db,
        level: level.parse()?,
        computer: super::play::parse_computer(computer)?,
        start: match start {
            Some(text) => parse_board(text)?,
            None => Board::opening(4)?,
        },
        first: super::play::parse_first(first)?,
        think: std::time::Duration::from_millis(think_ms),
        seed,
    })
}

pub(super) fn parse_rules(name: &str) -> Result<Rules> {
    Ok(name.parse::<Rules>()?)
}

pub(super) fn parse_board(text: &str) -> Result<Board> {
    text.parse::<Board>()
        .map_err(|e| anyhow!("bad board '{}': {e}", shown(text.trim())))
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

/// The options of `build`, checked, for either kind of table.
pub(super) fn build_options(db: &DbArgs, args: &BuildArgs) -> Result<BuildOptions> {
    if args.block_size == 0 {
        bail!("--block-size must be at least 1");
    }
    if let Some(limit) = args.memory_limit {
        if limit.is_nan() || limit <= 0.0 {
            bail!("--memory-limit must be a positive number of GiB");
        }
    }
    Ok(BuildOptions {
        db: db.db.clone(),
        rules: parse_rules(&db.rules)?,
        max_seeds: args.max_seeds,
        threads: args.threads.map(usize::from),
        memory_limit: args.memory_limit.map(|g| (g * (1u64 << 30) as f64) as u64),
        write: WriteOptions {
            block_size: args.block_size,
            zstd_level: args.zstd_level,
        },
        pass: PassChoice::Auto,
        lean: LeanOptions::default(),
    })
}

/// `build --mpi`: this process is one rank of an MPI job; rank 0 shows the progress and
/// the table, and an error on any rank stops the whole job.
#[cfg(feature = "mpi")]
fn cmd_build_mpi(opts: BuildOptions, quiet: bool) -> Result<bool> {
    let cluster = awari::mpi::Cluster::init()?;
    output::keep_going_without_stdout();
    let root = cluster.rank() == 0;
    let progress = BuildProgress::new(!quiet && root);
    let observer: &dyn build::BuildObserver = if root {
        &progress
    } else {
        &awari::solve::Quiet
    };
    if root {
        tell!(
            "MPI: {} ranks share every layer (the lean pass); every rank reads the lower layers from {}",
            cluster.ranks(),
            opts.db.display()
        );
    }
    let started = std::time::Instant::now();
    match cluster.build(&opts, observer) {
        Ok(reports) => {
            if root {
                let built = reports.iter().filter(|r| r.built).count();
                say!(
                    "{} layers of '{}' in {} by {} ranks: {} built, {} already there, {:.1} s",
                    reports.len(),
                    opts.rules,
                    awari::store::rules_dir(&opts.db, opts.rules).display(),
                    cluster.ranks(),
                    built,
                    reports.len() - built,
                    started.elapsed().as_secs_f64()
                );
            }
            output::stdout_result()?;
            Ok(true)
        }
        Err(e) => {
            tell!(
                "error: rank {}: {}",
                cluster.rank(),
                output::error_line(&e.into())
            );
            cluster.abort(1)
        }
    }
}

#[cfg(not(feature = "mpi"))]
fn cmd_build_mpi(_opts: BuildOptions, _quiet: bool) -> Result<bool> {
    bail!("this awari was built without MPI; build it with: cargo build --release --features mpi")
}

/// The pass and the lean pass's settings from the command line.
fn lean_options(args: &LeanArgs) -> Result<(PassChoice, LeanOptions)> {
    let pass = match (args.lean, args.in_memory) {
        (true, _) => PassChoice::Lean,
        (_, true) => PassChoice::InMemory,
        _ => PassChoice::Auto,
    };
    let mut lean = LeanOptions::default();
    if let Some(mib) = args.lean_buffer_mib {
        if !(mib > 0.0 && mib < 1e9) {
            bail!("--lean-buffer-mib must be a positive number of MiB");
        }
        lean.buffer_bytes = Some((mib * (1u64 << 20) as f64) as u64);
    }
    let minutes = args.checkpoint_minutes;
    if !(0.0..=1e6).contains(&minutes) {
        bail!("--checkpoint-minutes must be a number of minutes, 0 or more");
    }
    lean.checkpoint_every = std::time::Duration::from_secs_f64(minutes * 60.0);
    lean.scratch = args.scratch.clone();
    Ok((pass, lean))
}

// One argument per flag of the build command, as clap hands them over.
#[allow(clippy::too_many_arguments)]
fn cmd_build(db: DbArgs, build: BuildArgs, lean: LeanArgs) -> Result<bool> {
    let quiet = build.quiet;
    let mut opts = build_options(&db, &build)?;
    (opts.pass, opts.lean) = lean_options(&lean)?;
    if lean.mpi {
        return cmd_build_mpi(opts, quiet);
    }
    let rules = opts.rules;
    output::keep_going_without_stdout();
    let progress = BuildProgress::new(!quiet);
    let building = progress.building.clone();
    let (db_dir, rules_for_handler) = (db.db.clone(), rules);
    let lean_for_handler = opts.lean.clone();
    // Ctrl-C: say what was lost and how to go on. Layers already on disk are whole (each is
    // renamed into place when complete); the one being built is dropped with its temporary
    // files, and the same command resumes there.
    ctrlc::set_handler(move || {
        let n = building.load(Relaxed);
        if n == NO_LAYER {
            tell!("\ninterrupted between layers; every layer on disk is whole, and the same command resumes the build");
        } else {
            for kind in [TableKind::Values, TableKind::Distances] {
                let _ = std::fs::remove_file(temporary_path(&db_dir, rules_for_handler, n, kind));
            }
            let scratch = lean_for_handler.scratch_for(&db_dir, rules_for_handler, n);
            if scratch.exists() {
                tell!("\ninterrupted while building layer {n}; layers below it are whole on disk, and the same command resumes layer {n} from its last checkpoint in {}", scratch.display());
            } else {
                tell!("\ninterrupted while building layer {n}; layers below it are whole on disk, and the same command resumes at layer {n}");
            }
        }
        std::process::exit(130);
    })
    .context("installing the Ctrl-C handler")?;
    let started = std::time::Instant::now();
    let reports = build::build(&opts, &progress)?;
    let built = reports.iter().filter(|r| r.built).count();
    say!(
        "{} layers of '{}' in {}: {} built, {} already there, {:.1} s",
        reports.len(),
        rules,
        awari::store::rules_dir(&db.db, rules).display(),
        built,
        reports.len() - built,
        started.elapsed().as_secs_f64()
    );
    output::stdout_result()?;
    Ok(true)
}

fn parse_captured(text: &str) -> Result<(u32, u32)> {
    let bad = || {
        anyhow!(
            "bad --captured '{}': expected two seed counts like 20,12, at most {} in all",
            shown(text),
            awari::MAX_SEEDS
        )
    };
    let (a, b) = text.split_once(',').ok_or_else(bad)?;
    let a: u32 = a.trim().parse().map_err(|_| bad())?;
    let b: u32 = b.trim().parse().map_err(|_| bad())?;
    // Checked here, before any sum can overflow; the board's seeds are checked later.
    if u64::from(a) + u64::from(b) > u64::from(awari::MAX_SEEDS) {
        return Err(bad());
    }
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

/// The fields of a position that `probe --json` and the web API share.
pub(super) fn position_json(
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

fn answer_json(db: &Database, a: &ProbeAnswer, captured: Option<(u32, u32)>) -> Value {
    let mut obj = position_json(
        db.rules(),
        &a.board,
        a.value,
        a.game_over,
        &a.moves,
        &a.best,
    );
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
        if u64::from(board.seeds()) + u64::from(a) + u64::from(b) > u64::from(awari::MAX_SEEDS) {
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
        say!("{}", answer_json(&db, &a, captured));
        return Ok(true);
    }
    say!(
        "board  {}   ({} seeds, rules {})",
        a.board,
        a.board.seeds(),
        db.rules()
    );
    say!("{}", a.board.picture());
    say!("value  {:+}   ({})", a.value, verdict_words(a.value));
    if a.game_over {
        say!("the game is over: the side to move cannot play");
    }
    for m in &a.moves {
        let cap = super::output::captures_column(m.captured);
        say!(
            "  pit {}  {}  value {:+3}   -> {}  (opponent to move)",
            pit_name(m.pit),
            cap,
            m.value,
            m.child
        );
    }
    if !a.best.is_empty() {
        let names: Vec<String> = a.best.iter().map(|&p| pit_name(p)).collect();
        say!("best   pit {}", names.join(", pit "));
    }
    if let Some((mine, theirs)) = captured {
        let o = awari::probe::outcome(a.value, a.board.seeds(), mine, theirs);
        say!(
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
/// Memory of one batch at most (lines and their answers, as [`Line::bytes`] counts them),
/// so that it stays bounded whatever the input: endless lines of garbage included.
const BATCH_BYTES: usize = 128 << 20;
/// What the answer to a line takes, about: its board, moves and result (measured on
/// `/dev/urandom`, whose lines are nearly all errors, at about 250 bytes).
const ANSWER_BYTES: usize = 256;
/// Lines read ahead of the batch being answered.
const READ_AHEAD: usize = 1 << 16;
/// A batch closes when no new line arrives for this long, so a program that writes one
/// board and waits for its answer is answered at once.
const BATCH_WAIT: std::time::Duration = std::time::Duration::from_millis(20);

fn probe_batch(db: &Database, captured: Option<(u32, u32)>, json_out: bool) -> Result<bool> {
    // A reader thread feeds lines through a channel; the main thread takes as many as have
    // arrived (up to BATCH_LINES or BATCH_BYTES) and answers them together.
    let (tx, rx) = std::sync::mpsc::sync_channel::<std::io::Result<Line>>(READ_AHEAD);
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        loop {
            let line = match super::input::read_line(&mut stdin, super::input::MAX_LINE) {
                Ok(None) => break,
                Ok(Some(l)) => Ok(Line::from_input(l)),
                Err(e) => Err(e),
            };
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
        let first = first.context("reading stdin")?;
        let mut bytes = first.bytes();
        let mut lines = vec![first];
        while lines.len() < BATCH_LINES && bytes < BATCH_BYTES {
            match rx.recv_timeout(BATCH_WAIT) {
                Ok(line) => {
                    let line = line.context("reading stdin")?;
                    bytes += line.bytes();
                    lines.push(line);
                }
                Err(_) => break,
            }
        }
        let answers = answer_lines(db, &lines, captured);
        for (line, result) in lines.iter().zip(answers) {
            line_no += 1;
            let written = if line.is_blank() {
                writeln!(out)
            } else {
                match result {
                    Ok(a) if json_out => writeln!(out, "{}", answer_json(db, &a, captured)),
                    Ok(a) => {
                        let best = if a.best.is_empty() {
                            "game-over".to_string()
                        } else {
                            let names: Vec<String> = a.best.iter().map(|&p| pit_name(p)).collect();
                            format!("best {}", names.join(","))
                        };
                        writeln!(out, "{} {}", a.value, best)
                    }
                    Err(e) => {
                        all_ok = false;
                        writeln!(out, "{}", batch_error(line_no, &e, json_out))
                    }
                }
            };
            written.unwrap_or_else(|e| output::failed(e));
        }
        out.flush().unwrap_or_else(|e| output::failed(e));
    }
    Ok(all_ok)
}

/// The answer to a bad line of `probe --batch`: `error: line N: why`, or with `--json` a
/// JSON object `{"line": N, "error": "why"}`, so that every line of a JSON stream parses.
pub(super) fn batch_error(line_no: usize, message: &str, json_out: bool) -> String {
    if json_out {
        json!({ "line": line_no, "error": message }).to_string()
    } else {
        format!("error: line {line_no}: {message}")
    }
}

/// One line of `probe --batch` input, without its line break.
enum Line {
    Text(String),
    /// Not UTF-8, or too long: an error for this line alone (the reason).
    Bad(String),
}

impl Line {
    fn from_input(line: super::input::BoundedLine) -> Line {
        match line.text() {
            Ok(t) => Line::Text(t.to_string()),
            Err(why) => Line::Bad(why),
        }
    }
    fn is_blank(&self) -> bool {
        matches!(self, Line::Text(t) if t.trim().is_empty())
    }
    /// The memory it and its answer take, for the batch's bound.
    fn bytes(&self) -> usize {
        ANSWER_BYTES
            + match self {
                Line::Text(t) => t.len(),
                Line::Bad(why) => why.len(),
            }
    }
}

/// Answers a batch of lines: every board and every child of its moves is looked up in one
/// grouped pass ([`Database::values_many`]). Lines that fail on their own (bad text, a layer
/// not built) get their own error; a damaged file fails the batch.
fn answer_lines(
    db: &Database,
    lines: &[Line],
    captured: Option<(u32, u32)>,
) -> Vec<Result<ProbeAnswer, String>> {
    let rules = db.rules();
    // Errors are kept as their one line: an error value can hold much more (a backtrace
    // when RUST_BACKTRACE is set), and a batch of garbage is all errors.
    let mut results: Vec<Option<Result<ProbeAnswer, String>>> = Vec::with_capacity(lines.len());
    let mut wanted: Vec<Board> = Vec::new();
    // For each line answered in the grouped pass: its board, its moves, where its values start.
    let mut pending: Vec<(usize, Board, awari::MoveList, usize)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let line = match line {
            Line::Bad(why) => {
                results.push(Some(Err(why.clone())));
                continue;
            }
            Line::Text(t) if t.trim().is_empty() => {
                results.push(Some(Err("blank line".into())));
                continue;
            }
            Line::Text(t) => t,
        };
        let board = match parse_board(line).and_then(|b| check_captured(&b, captured).map(|_| b)) {
            Ok(b) => b,
            Err(e) => {
                results.push(Some(Err(output::error_line(&e))));
                continue;
            }
        };
        let moves = rules.legal_moves(&board);
        let needs_missing =
            !db.has_layer(board.seeds()) || moves.iter().any(|m| !db.has_layer(m.child.seeds()));
        if needs_missing {
            // The single-board path names the missing layer and the command that builds it.
            results.push(Some(answer(db, board).map_err(|e| output::error_line(&e))));
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
                results[i] = Some(Err(msg.clone()));
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
    say!("start  {}   value {:+}", board, db.value(&board)?);
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
        say!(
            "{:>4}. {side} {}  value {:+3}  plays pit {}{cap}",
            ply + 1,
            step.board,
            step.value,
            pit_name(step.pit)
        );
    }
    let side_last = if pv.steps.len() % 2 == 0 { "A" } else { "B" };
    match pv.end {
        PvEnd::GameOver { value } => say!(
            "end    {}   the game is over; {side_last} (to move) gets {:+} of the {} seeds left",
            pv.last,
            value,
            pv.last.seeds()
        ),
        PvEnd::Repetition => {
            let v = db.value(&pv.last)?;
            if v == 0 {
                say!(
                    "end    {}   this position repeats: endless play, the {} seeds left are shared",
                    pv.last,
                    pv.last.seeds()
                );
            } else {
                say!(
                    "end    {}   this position repeats although its value is {v:+}: the stored rounds here are saturated and the bounded search past them ran out of budget, so the line could not be steered to the capture",
                    pv.last
                );
            }
        }
        PvEnd::Limit => say!("end    {}   stopped after {max_plies} moves", pv.last),
    }
    say!("captured along the way: A {first}, B {second} (A moved first)");
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
                    awari::store::shell_word(db.dir())
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
        say!(
            "{:>5} {:>13} {:>12} {:>12} {:>12} {:>12} {:>8}",
            "layer",
            "positions",
            "wins",
            "draws",
            "losses",
            "bytes",
            "B/pos"
        );
    }
    for n in first..=last {
        let Some(file) = db.layer(n) else {
            if json_out {
                tell!("warning: layer {n} is not built; it is left out of the JSON");
                continue;
            }
            say!("{n:>5}   (not built)");
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
        say!(
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
            say!("      values {}", parts.join(" "));
        }
    }
    if json_out {
        say!("{}", serde_json::to_string_pretty(&Value::Array(rows))?);
    }
    Ok(true)
}

fn cmd_verify(args: DbArgs, layers: Option<LayerRange>, sample: Option<u64>) -> Result<bool> {
    let db = open_db(&args)?;
    let (first, last) = layer_span(&db, layers)?;
    let started = std::time::Instant::now();
    if sample == Some(0) {
        bail!("--sample must be at least 1");
    }
    let what = if sample.is_some() {
        " sampled"
    } else {
        ", checksums ok"
    };
    let report = |c: &awari::verify::LayerCheck| {
        let distances = match (c.distances_checked, c.distance_faults) {
            (false, _) => "; no distances file".to_string(),
            (true, 0) => ", every round leads best play out of the layer".to_string(),
            (true, f) => format!("; DISTANCE FAULTS: {f}"),
        };
        if c.mismatches == 0 {
            say!(
                "layer {:>2}: {} positions{what}, every value equals the best of its moves{distances}",
                c.seeds,
                c.positions
            );
        } else {
            say!(
                "layer {:>2}: {} positions, MISMATCHES: {}{distances}",
                c.seeds,
                c.positions,
                c.mismatches
            );
            for m in &c.examples {
                say!(
                    "  {}  stored {:+}  best over moves {:+}",
                    m.board,
                    m.stored,
                    m.expected
                );
            }
        }
    };
    let checks = match sample {
        Some(count) => awari::verify::verify_sampled(&db, first, last, count, report)?,
        None => awari::verify::verify(&db, first, last, report)?,
    };
    let bad: u64 = checks
        .iter()
        .map(|c| c.mismatches + c.distance_faults)
        .sum();
    say!(
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

/// The seeds of the opening with `per_pit` seeds in every pit, if this program can build
/// its layer (so that the build a message suggests is one `build` accepts).
pub(super) fn opening_seeds(per_pit: u8) -> Result<u32> {
    if per_pit == 0 || per_pit > 4 {
        bail!("--seeds-per-pit must be 1..=4 (the standard game has 4)");
    }
    let seeds = 12 * u32::from(per_pit);
    if seeds > awari::solve::MAX_SOLVABLE_SEEDS {
        bail!(
            "the opening with {per_pit} seeds per pit has {seeds} seeds on the board, more than this program builds (at most {} seeds)",
            awari::solve::MAX_SOLVABLE_SEEDS
        );
    }
    Ok(seeds)
}

fn cmd_start(args: DbArgs, per_pit: u8) -> Result<bool> {
    let seeds = opening_seeds(per_pit)?;
    let db = open_db(&args)?;
    if db.layer(seeds).is_none() {
        bail!(
            "the opening with {per_pit} seeds per pit needs the layers up to {seeds}; build them with: awari build --rules {} --max-seeds {seeds} --db {}",
            db.rules(),
            awari::store::shell_word(db.dir())
        );
    }
    let board = Board::opening(per_pit)?;
    let a = answer(&db, board)?;
    say!(
        "opening: {per_pit} per pit, {seeds} seeds, rules {}",
        db.rules()
    );
    say!("value  {:+}   ({})", a.value, verdict_words(a.value));
    for m in &a.moves {
        say!("  pit {}  value {:+}", pit_name(m.pit), m.value);
    }
    let names: Vec<String> = a.best.iter().map(|&p| pit_name(p)).collect();
    say!("best first moves: pit {}", names.join(", pit "));
    Ok(true)
}

fn cmd_moves(rules: &str, board: &str) -> Result<bool> {
    let rules = parse_rules(rules)?;
    let board = parse_board(board)?;
    say!(
        "board  {}   ({} seeds, rules {})",
        board,
        board.seeds(),
        rules
    );
    say!("{}", board.picture());
    match rules.turn(&board) {
        Turn::GameOver { value } => say!(
            "the game is over: the side to move gets {value:+} of the {} seeds left",
            board.seeds()
        ),
        Turn::Moves(moves) => {
            for m in &moves {
                say!(
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
