//! Boards, pits and values as the command line reads and writes them, and the checks of
//! numbers that several commands take.

use super::output::shown;
use anyhow::{anyhow, bail, Result};
use awari::probe::Verdict;
use awari::Board;

/// A board as the user typed it; the error quotes it.
pub fn parse_board(text: &str) -> Result<Board> {
    text.parse::<Board>()
        .map_err(|e| anyhow!("bad board '{}': {e}", shown(text.trim())))
}

/// The board of a one-board command that may read boards from stdin instead (`probe`).
pub fn the_board(text: Option<String>) -> Result<Board> {
    let text =
        text.ok_or_else(|| anyhow!("give a board to probe, or --batch to read boards from stdin"))?;
    parse_board(&text)
}

/// The moves of `--moves` (or of the API's `moves`, named by `what`): pits 1..6,
/// separated by spaces or commas.
pub fn parse_pits(text: &str, what: &str) -> Result<Vec<u8>> {
    text.split(|c: char| c.is_whitespace() || c == ',')
        .filter(|t| !t.is_empty())
        .map(|t| match t.parse::<u8>() {
            Ok(p @ 1..=6) => Ok(p - 1),
            _ => Err(anyhow!("bad {what}: '{}' is not a pit 1..6", shown(t))),
        })
        .collect()
}

/// The words of a value for the side to move.
pub fn verdict_words(v: i8) -> &'static str {
    match Verdict::of_difference(v.into()) {
        Verdict::Win => "the side to move wins",
        Verdict::Draw => "draw",
        Verdict::Loss => "the side to move loses",
    }
}

/// A pit as players name it: 1..6 from the mover's left.
pub fn pit_name(pit: u8) -> String {
    (pit + 1).to_string()
}

/// Pits as players name them, joined by `sep`.
pub fn pit_names(pits: impl IntoIterator<Item = u8>, sep: &str) -> String {
    pits.into_iter().map(pit_name).collect::<Vec<_>>().join(sep)
}

/// `--think-ms`, which a search divides: at least 1, at most an hour
/// ([`awari::search::MAX_THINK`]).
pub fn check_think(think_ms: u64) -> Result<std::time::Duration> {
    let most = awari::search::MAX_THINK.as_millis();
    if think_ms == 0 || u128::from(think_ms) > most {
        bail!("--think-ms must be from 1 to {most} (an hour)");
    }
    Ok(std::time::Duration::from_millis(think_ms))
}

/// The seeds of the opening with `per_pit` seeds in every pit, if this program can build
/// its layer (so that the build a message suggests is one `build` accepts).
pub fn opening_seeds(per_pit: u8) -> Result<u32> {
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
