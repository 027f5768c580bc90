//! `awari analyze --cycles own-row-first` (or `own-row-third`): every move of a game
//! judged under the own-row rule, each position asked with its history (the positions
//! since the last capture, the library's [`own_row_history`] of the moves played so far),
//! as `probe --moves` asks it; the analysis ends at a repetition that ends the game.

use crate::cli::args::TableArgs;
use crate::cli::json::{own_row_analysis_json, own_row_json, own_row_judged_json, OwnRowEnd};
use crate::cli::output::say;
use crate::cli::own_row_text::{budget, occurrence, rows_kept};
use anyhow::{bail, Result};
use awari::game::{GameRecord, Side};
use awari::{
    own_row_history, Board, BoundsDatabase, OwnRowAnswer, OwnRowMove, OwnRowTables, Repetition,
    Tables, Turn,
};
use serde_json::Value;

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
        own_row_judged_json(
            number,
            self.side,
            self.before,
            &self.played,
            &self.best,
            self.lost(),
            &self.position,
        )
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
    own_row: &OwnRowTables,
    record: &GameRecord,
    budget: u64,
) -> Result<(Vec<Judged>, End)> {
    let (rules, r) = (own_row.rules(), own_row.repetition());
    let mut rows = Vec::new();
    let mut side = record.first;
    for (i, &pit) in record.moves.iter().enumerate() {
        let (board, history) = own_row_history(rules, r, &record.start, &record.moves[..i])?;
        let a = own_row.answer(&board, &history, budget)?;
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
            position: own_row_json(own_row, &board, history.len(), &a),
        });
        if played.ends_by_repetition {
            let left = record.moves.len() - i - 1;
            return Ok((rows, End::Repetition { at: i + 1, left }));
        }
        side = side.other();
    }
    let (last, _) = own_row_history(rules, r, &record.start, &record.moves)?;
    Ok((rows, End::Reached(last)))
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

/// Runs `analyze` under the own-row rule of `r` on `record`.
pub fn run(tables: &TableArgs, r: Repetition, record: &GameRecord, json_out: bool) -> Result<bool> {
    let budget = budget(tables)?;
    // The record may name its own rules.
    let db = BoundsDatabase::open(&tables.db.db, record.rules)?;
    let (rows, end) = judge_all(&db.own_row(r), record, budget)?;
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
        let end = OwnRowEnd {
            captured,
            repetition: matches!(end, End::Repetition { .. }),
            text: &text,
        };
        let v = own_row_analysis_json(record, Tables::OwnRow(r), moves, lost, &end);
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
