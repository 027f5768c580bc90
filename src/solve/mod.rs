//! The retrograde pass (work in progress).
use crate::rules::Rules;

/// Exact values of every position of layers `0..=max_seeds`: `result[n][index]`.
pub fn solve_all(rules: Rules, max_seeds: u32) -> Vec<Vec<i8>> {
    let _ = (rules, max_seeds);
    todo!("solver in progress")
}
