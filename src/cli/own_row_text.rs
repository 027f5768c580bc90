//! The own-row answers as the commands say them in text (`probe`, `start`, `pv`, `analyze`
//! and `play` under `--cycles own-row-first` or `own-row-third`): a value or the interval
//! proved, why a value is left open, every move and the best, and how a repetition ends
//! the game. Their JSON is in `json.rs`.

use super::args::TableArgs;
use super::output::{captures_column, say};
use super::text::{pit_name, pit_names};
use anyhow::{bail, Result};
use awari::{Board, OwnRowAnswer, Repetition};

/// `--search-budget`, checked: a search of no node proves nothing.
pub fn budget(tables: &TableArgs) -> Result<u64> {
    if tables.search_budget == 0 {
        bail!("--search-budget must be at least 1 node");
    }
    Ok(tables.search_budget)
}

/// Why a value is left open: stuck (no budget would prove more), or out of `budget`.
pub fn why_open(stuck: bool, nodes: u64, budget: u64) -> String {
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
pub fn interval(low: i8, high: i8) -> String {
    if low == high {
        format!("{low:+}")
    } else {
        format!("between {low:+} and {high:+}")
    }
}

/// The value (or the interval proved), every move, and the best moves.
pub fn print_answer(a: &OwnRowAnswer, budget: u64) {
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

/// "2nd" or "3rd": the occurrence of a position that ends the game.
pub fn occurrence(r: Repetition) -> &'static str {
    match r.ends_at() {
        2 => "2nd",
        _ => "3rd",
    }
}

/// What the side to move at `child`, reached by a move that repeats it to the end, and
/// its opponent keep: their own rows.
pub fn rows_kept(child: &Board) -> (u32, u32) {
    (child.mover_seeds(), child.opponent_seeds())
}
