//! The own-row rule along a game (`--cycles own-row-first` or `own-row-third`): `pv`
//! follows the best proved move, `analyze` judges every move of a game record, each
//! position asked with its history (the positions since the last capture) as `probe
//! --moves` asks it. The history of every position is the library's
//! [`own_row_history`] of the moves played so far, so a line and a game are judged
//! exactly as probe judges the same moves.

use super::args::TableArgs;
use super::output::say;
use super::own_row::{answer_json, budget, interval, parse_pits, repetition, why_open};
use super::text::{parse_board, pit_name};
use anyhow::{bail, Result};
use awari::game::{GameRecord, Side};
use awari::Turn;
use awari::{own_row_history, Board, BoundsDatabase, OwnRowAnswer, OwnRowMove, Repetition};
use serde_json::{json, Value};

/// The position after `pits` from `start` and its history.
fn position(db: &BoundsDatabase, r: Repetition, start: &Board, pits: &[u8]) -> Result<Position> {
    let (board, history) = own_row_history(db.rules(), r, start, pits)?;
    Ok(Position { board, history })
}

struct Position {
    board: Board,
    history: Vec<Board>,
}

/// "2nd" or "3rd": the occurrence of a position that ends the game.
pub(super) fn occurrence(r: Repetition) -> &'static str {
    match r.ends_at() {
        2 => "2nd",
        _ => "3rd",
    }
}

/// What the side to move at `child`, reached by a move that repeats it to the end, and
/// its opponent keep: their own rows.
pub(super) fn rows_kept(child: &Board) -> (u32, u32) {
    (child.mover_seeds(), child.opponent_seeds())
}

/// Runs `pv` under the own-row rule: from the position after `moves`, the first best move
/// at each step while the value is proved exact, until the game ends, the line cannot be
/// followed, or `max_plies` moves.
pub fn pv(tables: &TableArgs, board: &str, moves: Option<&str>, max_plies: usize) -> Result<bool> {
    let r = repetition(tables);
    let budget = budget(tables)?;
    let start = parse_board(board)?;
    let mut line = match moves {
        Some(text) => parse_pits(text, "--moves")?,
        None => Vec::new(),
    };
    let db = BoundsDatabase::open(&tables.db.db, tables.db.rules)?;
    let first = position(&db, r, &start, &line)?;
    say!(
        "start  {}   history: {} position{} since the last capture; own-row: the {} repetition ends the game",
        first.board,
        first.history.len(),
        if first.history.len() == 1 { "" } else { "s" },
        r.name()
    );
    // Captures are tallied for the side that moves first in the variation.
    let mut captured = [0u32; 2];
    let from = line.len();
    let end = loop {
        let ply = line.len() - from;
        let at = position(&db, r, &start, &line)?;
        let side = if ply % 2 == 0 { "A" } else { "B" };
        let a = db.own_row(r).answer(&at.board, &at.history, budget)?;
        let v = a.value;
        if a.moves.is_empty() {
            break format!(
                "end    {}   the game is over: {side} (to move) gets {:+} of the {} seeds left",
                at.board,
                v.low,
                at.board.seeds()
            );
        }
        if !v.exact() {
            break format!(
                "end    {}   {side} to move, value {}: the line stops: {}",
                at.board,
                interval(v.low, v.high),
                why_open(v.stuck, v.nodes, budget)
            );
        }
        let Some(m) = a.best_moves().first().copied() else {
            break format!(
                "end    {}   {side} to move, value {:+}: the line stops: no move proved to keep it within --search-budget {budget}",
                at.board, v.low
            );
        };
        if ply == max_plies {
            break format!("end    {}   stopped after {max_plies} moves", at.board);
        }
        captured[ply % 2] += u32::from(m.captured);
        let cap = if m.captured > 0 {
            format!(" captures {}", m.captured)
        } else {
            String::new()
        };
        say!(
            "{:>4}. {side} {}  value {:+3}  plays pit {}{cap}",
            ply + 1,
            at.board,
            v.low,
            pit_name(m.pit)
        );
        line.push(m.pit);
        if m.ends_by_repetition {
            let other = if ply % 2 == 0 { "B" } else { "A" };
            let (mover, opponent) = rows_kept(&m.child);
            break format!(
                "end    {}   the {} occurrence of this position since the last capture ends the game: each side keeps its own row, {other} (to move) {mover} and {side} {opponent}: {other} gets {:+}",
                m.child,
                occurrence(r),
                i64::from(mover) - i64::from(opponent)
            );
        }
    };
    say!("{end}");
    say!(
        "captured along the way: A {}, B {} (A moved first)",
        captured[0],
        captured[1]
    );
    Ok(true)
}

/// One move of a game judged under the own-row rule.
struct Judged {
    side: Side,
    pit: u8,
    /// The value before the move (an interval when not proved).
    before: (i8, i8),
    /// The move played, as the answer gives it.
    played: OwnRowMove,
    best: Vec<u8>,
    /// The position before the move, as `probe --json` gives it.
    position: Value,
}

impl Judged {
    /// The seeds the move gave away, when both values are exact.
    fn lost(&self) -> Option<i64> {
        let (p, b) = (&self.played, self.before);
        (b.0 == b.1 && p.low == p.high).then(|| i64::from(b.0) - i64::from(p.low))
    }

    fn json(&self, number: usize) -> Value {
        let (p, b) = (&self.played, self.before);
        let exact = |l: i8, h: i8| (l == h).then_some(l);
        json!({
            "move": number,
            "side": self.side.name(),
            "pit": self.pit,
            "captured": p.captured,
            "exact": b.0 == b.1,
            "low": b.0,
            "high": b.1,
            "value_before": exact(b.0, b.1),
            "played": { "exact": p.low == p.high, "low": p.low, "high": p.high },
            "value_played": exact(p.low, p.high),
            "best": self.best,
            "lost": self.lost(),
            "ends_by_repetition": p.ends_by_repetition,
            "position": self.position,
        })
    }

    fn text(&self, number: usize) -> String {
        let (p, b) = (&self.played, self.before);
        let short = |l: i8, h: i8| match l == h {
            true => format!("{l:+}"),
            false => format!("[{l:+},{h:+}]"),
        };
        let best: Vec<String> = self.best.iter().map(|p| (p + 1).to_string()).collect();
        let lost = self.lost().map_or("-".to_string(), |l| l.to_string());
        let end = if p.ends_by_repetition {
            "  repeats"
        } else {
            ""
        };
        format!(
            "{:>4}  {:<5}  {:>3}  {:>8}  {:>8}  {:<9}  {:>4}{end}",
            number,
            self.side.name(),
            self.pit + 1,
            short(b.0, b.1),
            short(p.low, p.high),
            best.join(","),
            lost
        )
    }
}

/// How the moves judged end.
enum End {
    /// Move `at` (1-based) repeated a position to the end; `left` moves come after it.
    Repetition { at: usize, left: usize },
    /// Every move judged: the position reached.
    Reached(Board),
}

/// Judges the moves of `record` up to its end under the rule, refusing an illegal move
/// before anything is said.
fn judge_all(
    db: &BoundsDatabase,
    r: Repetition,
    record: &GameRecord,
    budget: u64,
) -> Result<(Vec<Judged>, End)> {
    let mut rows = Vec::new();
    let mut side = record.first;
    for (i, &pit) in record.moves.iter().enumerate() {
        let at = position(db, r, &record.start, &record.moves[..i])?;
        let a = db.own_row(r).answer(&at.board, &at.history, budget)?;
        let Some(played) = a.moves.iter().find(|m| m.pit == pit).copied() else {
            bail!(
                "move {} (pit {} of {side}): {}",
                i + 1,
                pit + 1,
                illegal(&a)
            );
        };
        rows.push(Judged {
            side,
            pit,
            before: (a.value.low, a.value.high),
            played,
            best: a.best_moves().iter().map(|m| m.pit).collect(),
            position: answer_json(db, r, &at.board, at.history.len(), &a),
        });
        if played.ends_by_repetition {
            let left = record.moves.len() - i - 1;
            return Ok((rows, End::Repetition { at: i + 1, left }));
        }
        side = side.other();
    }
    let last = position(db, r, &record.start, &record.moves)?;
    Ok((rows, End::Reached(last.board)))
}

/// Why a pit is not a move here.
fn illegal(a: &OwnRowAnswer) -> String {
    if a.moves.is_empty() {
        return "the game is already over".to_string();
    }
    let legal: Vec<String> = a.moves.iter().map(|m| (m.pit + 1).to_string()).collect();
    format!("not a legal move here; legal: {}", legal.join(", "))
}

/// The sentence that ends the analysis, and the captures along the moves judged (South,
/// North, from the record's own counts).
fn ending(record: &GameRecord, rows: &[Judged], end: &End, r: Repetition) -> (String, [u32; 2]) {
    let mut captured = record.captured;
    for row in rows {
        captured[row.side.index()] += u32::from(row.played.captured);
    }
    let text = match *end {
        End::Repetition { at, left } => {
            let row = &rows[at - 1];
            let next = row.side.other();
            let (mover, opponent) = rows_kept(&row.played.child);
            let mut score = captured;
            score[next.index()] += mover;
            score[row.side.index()] += opponent;
            let after = if left > 0 {
                format!(
                    " (the {left} move{} after it are not judged)",
                    if left == 1 { "" } else { "s" }
                )
            } else {
                String::new()
            };
            format!(
                "move {at} makes the {} occurrence of a position since the last capture: the game ends by repetition, each side keeps its own row: south {}, north {}{after}",
                occurrence(r),
                score[0],
                score[1]
            )
        }
        End::Reached(board) => {
            let to_move = if rows.len().is_multiple_of(2) {
                record.first
            } else {
                record.first.other()
            };
            match record.rules.turn(&board) {
                Turn::GameOver { value } => format!(
                    "the game is over: {to_move} (to move) gets {value:+} of the {} seeds left",
                    board.seeds()
                ),
                Turn::Moves(_) => format!("the game goes on: {to_move} to move"),
            }
        }
    };
    (text, captured)
}

/// Runs `analyze` under the own-row rule on `record`.
pub fn analyze(tables: &TableArgs, record: &GameRecord, json_out: bool) -> Result<bool> {
    let r = repetition(tables);
    let budget = budget(tables)?;
    // The record may name its own rules.
    let db = BoundsDatabase::open(&tables.db.db, record.rules)?;
    let (rows, end) = judge_all(&db, r, record, budget)?;
    let mut lost = [0i64; 2];
    for row in &rows {
        lost[row.side.index()] += row.lost().unwrap_or(0);
    }
    let (text, captured) = ending(record, &rows, &end, r);
    if json_out {
        let moves: Vec<Value> = rows
            .iter()
            .enumerate()
            .map(|(i, row)| row.json(i + 1))
            .collect();
        let v = json!({
            "rules": record.rules.name(),
            "cycles": format!("own-row-{}", r.name()),
            "start": record.start.to_string(),
            "first": record.first.name(),
            "moves": moves,
            "lost": { "south": lost[0], "north": lost[1] },
            "captured": captured,
            "repetition": matches!(end, End::Repetition { .. }),
            "end": text,
        });
        say!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(true);
    }
    say!(
        "rules {}, start {} ({} to move), {} moves; own-row: the {} repetition ends the game",
        record.rules,
        record.start,
        record.first,
        record.moves.len(),
        r.name()
    );
    say!(
        "{:>4}  {:<5}  {:>3}  {:>8}  {:>8}  {:<9}  {:>4}",
        "move",
        "side",
        "pit",
        "before",
        "played",
        "best",
        "lost"
    );
    for (i, row) in rows.iter().enumerate() {
        say!("{}", row.text(i + 1));
    }
    say!(
        "seeds given away (where both values are proved): south {}, north {}; captured: south {}, north {}",
        lost[0],
        lost[1],
        captured[0],
        captured[1]
    );
    say!("{text}");
    Ok(true)
}
