//! The own-row values on the command line (`--cycles own-row-first` or `own-row-third`):
//! probe and start answer by the library's proof search from the tables, with a history
//! given as moves; `probe --batch` answers many boards with an empty history from the
//! tables alone; verify checks the tables (stats, shared with the bounds, is `stats.rs`).

use super::args::TableArgs;
use super::batch::Line;
use super::layers::LayerRange;
use super::output::{self, captures_column, say};
use super::probe::{the_board, ProbeRequest};
use super::text::{parse_board, pit_name, pit_names};
use anyhow::{anyhow, bail, Result};
use awari::{own_row_history, Board, BoundsDatabase, OwnRowAnswer, Repetition};
use serde_json::{json, Value};

pub(super) fn repetition(tables: &TableArgs) -> Repetition {
    tables
        .cycles
        .repetition()
        .expect("only the own-row kinds come here")
}

/// The moves of `--moves` (or of the API's `moves`, named by `what`): pits 1..6,
/// separated by spaces or commas.
pub(super) fn parse_pits(text: &str, what: &str) -> Result<Vec<u8>> {
    text.split(|c: char| c.is_whitespace() || c == ',')
        .filter(|t| !t.is_empty())
        .map(|t| match t.parse::<u8>() {
            Ok(p @ 1..=6) => Ok(p - 1),
            _ => Err(anyhow!(
                "bad {what}: '{}' is not a pit 1..6",
                super::output::shown(t)
            )),
        })
        .collect()
}

/// `probe`: the position after `--moves` from the board, with its history.
pub fn probe(tables: &TableArgs, request: ProbeRequest) -> Result<bool> {
    if request.captured.is_some() {
        bail!("--captured is for the values");
    }
    if request.batch {
        return batch(tables, request.json);
    }
    let start = the_board(request.board)?;
    let pits = match &request.moves {
        Some(text) => parse_pits(text, "--moves")?,
        None => Vec::new(),
    };
    let rules = tables.db.rules;
    let r = repetition(tables);
    let db = BoundsDatabase::open(&tables.db.db, rules)?;
    let (board, history) = own_row_history(rules, r, &start, &pits)?;
    let answer = db.own_row(r).answer(&board, &history, budget(tables)?)?;
    if request.json {
        say!("{}", answer_json(&db, r, &board, history.len(), &answer));
        return Ok(true);
    }
    say!(
        "board  {}   ({} seeds, rules {}, own-row: the {} repetition ends the game)",
        board,
        board.seeds(),
        rules,
        r.name()
    );
    say!("{}", board.picture());
    say!(
        "history: {} position{} since the last capture",
        history.len(),
        if history.len() == 1 { "" } else { "s" }
    );
    print_answer(&answer, tables.search_budget);
    Ok(true)
}

/// `probe --batch`: each line a board, answered with an empty history from the tables
/// alone (no search: `--search-budget` is not used), every board and child looked up in
/// one grouped pass. A line: "LOW HIGH best P,Q" (the stored interval, exact when the two
/// meet; when exact, the moves the tables prove to keep it, else those with the largest
/// proved low), "LOW HIGH game-over", or "V V unproved" (exact, but no move is proved to
/// keep it without a search: probe the board alone); or `--json`'s object.
fn batch(tables: &TableArgs, json_out: bool) -> Result<bool> {
    let r = repetition(tables);
    let db = BoundsDatabase::open(&tables.db.db, tables.db.rules)?;
    super::batch::run(json_out, |lines| {
        batch_answers(&db, r, lines)
            .into_iter()
            .map(|a| a.map(|(board, a)| batch_line(&db, r, &board, &a, json_out)))
            .collect()
    })
}

/// A batch's line for an answer (see [`batch`]).
fn batch_line(
    db: &BoundsDatabase,
    r: Repetition,
    board: &Board,
    a: &OwnRowAnswer,
    json_out: bool,
) -> String {
    if json_out {
        let mut obj = answer_json(db, r, board, 0, a);
        obj["from_tables"] = Value::Bool(true);
        return obj.to_string();
    }
    let (low, high) = (a.value.low, a.value.high);
    if a.moves.is_empty() {
        return format!("{low} {high} game-over");
    }
    let best = a.best_moves();
    if best.is_empty() {
        return format!("{low} {high} unproved");
    }
    format!(
        "{low} {high} best {}",
        pit_names(best.iter().map(|m| m.pit), ",")
    )
}

/// Answers a batch of lines: the boards whose layers (and their children's) are there in
/// one grouped pass ([`awari::OwnRowTables::table_answers`]); a line that fails on its
/// own (bad text, a layer not built) gets its own error, and a damaged file fails every
/// line of the pass.
fn batch_answers(
    db: &BoundsDatabase,
    r: Repetition,
    lines: &[Line],
) -> Vec<std::result::Result<(Board, OwnRowAnswer), String>> {
    let rules = db.rules();
    let mut results: Vec<Option<std::result::Result<(Board, OwnRowAnswer), String>>> =
        Vec::with_capacity(lines.len());
    let mut pending: Vec<(usize, Board)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let text = match line.board_text() {
            Err(why) => {
                results.push(Some(Err(why)));
                continue;
            }
            Ok(None) => {
                results.push(Some(Err("blank line".into())));
                continue;
            }
            Ok(Some(t)) => t,
        };
        let board = match parse_board(text) {
            Ok(b) => b,
            Err(e) => {
                results.push(Some(Err(output::error_line(&e))));
                continue;
            }
        };
        let readable = |b: &Board| db.own_row(r).has_intervals(b.seeds());
        let moves = rules.legal_moves(&board);
        if !readable(&board) || moves.iter().any(|m| !readable(&m.child)) {
            // The board alone, for the error that names the missing layer.
            let one = db.own_row(r).table_answers(&[board]);
            results.push(Some(
                one.map(|mut a| (board, a.remove(0)))
                    .map_err(|e| output::error_line(&e.into())),
            ));
            continue;
        }
        pending.push((i, board));
        results.push(None);
    }
    let boards: Vec<Board> = pending.iter().map(|&(_, b)| b).collect();
    match db.own_row(r).table_answers(&boards) {
        Ok(answers) => {
            for ((i, board), a) in pending.into_iter().zip(answers) {
                results[i] = Some(Ok((board, a)));
            }
        }
        Err(e) => {
            let msg = output::error_line(&e.into());
            for (i, _) in pending {
                results[i] = Some(Err(msg.clone()));
            }
        }
    }
    results
        .into_iter()
        .map(|r| r.expect("every line answered"))
        .collect()
}

/// `start`: the opening, its history empty.
pub fn start(tables: &TableArgs, board: &Board) -> Result<bool> {
    let rules = tables.db.rules;
    let r = repetition(tables);
    let db = BoundsDatabase::open(&tables.db.db, rules)?;
    let answer = db.own_row(r).answer(board, &[], budget(tables)?)?;
    say!(
        "opening: {} seeds, rules {rules}, own-row: the {} repetition ends the game",
        board.seeds(),
        r.name()
    );
    print_answer(&answer, tables.search_budget);
    Ok(true)
}

pub(super) fn budget(tables: &TableArgs) -> Result<u64> {
    if tables.search_budget == 0 {
        bail!("--search-budget must be at least 1 node");
    }
    Ok(tables.search_budget)
}

/// Why a value is left open: stuck (no budget would prove more), or out of `budget`.
pub(super) fn why_open(stuck: bool, nodes: u64, budget: u64) -> String {
    if stuck {
        format!(
            "not proved, whatever the budget: every line left open ends at a capture whose \
             own value neither the tables nor a search of it decide; {nodes} nodes searched"
        )
    } else {
        format!(
            "not proved within --search-budget {budget} nodes a search; {nodes} nodes searched in all"
        )
    }
}

/// `+2`, or `between -1 and +2` for an interval.
pub(super) fn interval(low: i8, high: i8) -> String {
    if low == high {
        format!("{low:+}")
    } else {
        format!("between {low:+} and {high:+}")
    }
}

/// The value (or the interval proved), every move, and the best moves.
pub(super) fn print_answer(a: &OwnRowAnswer, budget: u64) {
    let v = a.value;
    if v.exact() {
        say!(
            "value  {:+}   (exact: proved with {} search nodes)",
            v.low,
            v.nodes
        );
    } else {
        say!(
            "value  {}   ({})",
            interval(v.low, v.high),
            why_open(v.stuck, v.nodes, budget)
        );
    }
    for m in &a.moves {
        let what = if m.low == m.high {
            format!("value {:+}", m.low)
        } else {
            interval(m.low, m.high)
        };
        let end = if m.ends_by_repetition {
            "  (repeats: the game ends, each side keeps its row)"
        } else {
            ""
        };
        say!(
            "  pit {}  {}  {what}   -> {}{end}",
            pit_name(m.pit),
            captures_column(m.captured),
            m.child
        );
    }
    let best = a.best_moves();
    if !best.is_empty() {
        let proved = if v.exact() {
            "proved"
        } else {
            "the largest proved low"
        };
        say!(
            "best   pit {}   ({proved})",
            pit_names(best.iter().map(|m| m.pit), ", pit ")
        );
    }
}

/// The JSON of `probe --json` under the own-row rule, which the API answers too.
pub(super) fn answer_json(
    db: &BoundsDatabase,
    r: Repetition,
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
        "rules": db.rules().to_string(),
        "cycles": format!("own-row-{}", r.name()),
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

/// The layers to read: those asked, or every layer built.
pub(super) fn span(
    db: &BoundsDatabase,
    r: Repetition,
    layers: Option<LayerRange>,
) -> Result<(u32, u32)> {
    let top = db.own_row(r).complete_up_to().ok_or_else(|| {
        anyhow!(
            "no own-row layer ({} repetition) is built for rules '{}'",
            r.name(),
            db.rules()
        )
    })?;
    Ok(match layers {
        Some(range) if range.last > top => bail!(
            "own-row layer {} is not built (layers 0..={top} are)",
            range.last
        ),
        Some(range) => (range.first, range.last),
        None => (0, top),
    })
}

/// `verify`: every layer read whole and its local checks; `Ok(false)` on a fault.
pub fn verify(tables: &TableArgs, layers: Option<LayerRange>, sample: Option<u64>) -> Result<bool> {
    if sample == Some(0) {
        bail!("--sample must be at least 1");
    }
    let r = repetition(tables);
    let db = BoundsDatabase::open(&tables.db.db, tables.db.rules)?;
    let (first, last) = span(&db, r, layers)?;
    let mut sound = true;
    for n in first..=last {
        let checked = match sample {
            Some(count) => awari::check_own_row_sampled(&db.own_row(r), n, count)?,
            None => awari::check_own_row(&db.own_row(r), n)?,
        };
        let Some(c) = checked else {
            continue;
        };
        // A sample at least the layer's size is the whole check.
        let sampled = if c.positions < awari::index::size(n) {
            " sampled"
        } else {
            ""
        };
        match &c.first_fault {
            None => say!(
                "layer {n:>2}: {} positions{sampled}, {} exact, every check holds",
                c.positions,
                c.exact
            ),
            Some(first) => {
                sound = false;
                say!(
                    "layer {n:>2}: {} positions, FAULTS: {} (first: {first})",
                    c.positions,
                    c.faults
                );
            }
        }
    }
    Ok(sound)
}
