//! `awari moves`: the legal moves of a board, from the rules alone (no database).

use super::output::say;
use super::text::{parse_board, pit_name};
use anyhow::Result;
use awari::{Rules, Turn};

/// Runs `moves`.
pub fn run(rules: Rules, board: &str) -> Result<bool> {
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
