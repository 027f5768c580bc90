//! The real game under the own-row rule, searched exhaustively: written from the rule alone,
//! sharing nothing with the solvers but `Rules::turn` and `Board`.
//!
//! A capture-free game ends at the position (board and side to move) that occurs for the
//! `ends_at`-th time since the last capture (2: the first repetition; 3: the third
//! occurrence), each side keeping the seeds on its own row; a capture empties the history.
//! Plain negamax with alpha-beta over the game tree, which is finite since every
//! capture-free line ends by repetition.

use awari::{Board, Rules, Turn};
use std::collections::HashMap;

/// Own row minus the other row, for the side to move.
pub fn own_row(pits: &[u8; 12]) -> i32 {
    pits[..6].iter().map(|&p| i32::from(p)).sum::<i32>()
        - pits[6..].iter().map(|&p| i32::from(p)).sum::<i32>()
}

/// The real, path-dependent game, with the values of the positions with nothing before
/// them remembered (those right after a capture: nothing earlier can repeat).
pub struct RealGame {
    rules: Rules,
    ends_at: usize,
    fresh: HashMap<[u8; 12], i32>,
}

impl RealGame {
    /// The game of `rules` that ends at the `ends_at`-th occurrence of a position.
    pub fn new(rules: Rules, ends_at: usize) -> Self {
        RealGame {
            rules,
            ends_at,
            fresh: HashMap::new(),
        }
    }

    /// The value, for the side to move, of the game from `board` with nothing before it.
    pub fn value(&mut self, board: [u8; 12]) -> i32 {
        if let Some(&v) = self.fresh.get(&board) {
            return v;
        }
        let v = self.value_after(board, &[]);
        self.fresh.insert(board, v);
        v
    }

    /// The value of `board` after `history` (the positions since the last capture, oldest
    /// first, each from its own mover).
    pub fn value_after(&mut self, board: [u8; 12], history: &[[u8; 12]]) -> i32 {
        let len = history.len();
        // A position is its board and who moves: the parity of its distance to `board`.
        let mut path: Vec<([u8; 12], bool)> = history
            .iter()
            .enumerate()
            .map(|(i, b)| (*b, (len - i) % 2 == 1))
            .collect();
        let n = board.iter().map(|&p| i32::from(p)).sum::<i32>();
        self.search(board, false, &mut path, -n - 1, n + 1)
    }

    /// Whether the game from `board` (nothing before it) scores at least `d` for its mover:
    /// a null-window search, which prunes far more than a full one.
    pub fn at_least(&mut self, board: [u8; 12], d: i32) -> bool {
        let mut path: Vec<([u8; 12], bool)> = Vec::new();
        self.search(board, false, &mut path, d - 1, d) >= d
    }

    /// Negamax with alpha-beta pruning (fail-hard: the result is exact when it lies strictly
    /// inside `(alpha, beta)`, and otherwise on the right side of the window). `path` holds
    /// the positions before `board` since the last capture with who was to move (boards are
    /// stored from the mover's side, so the side is the depth's parity).
    fn search(
        &mut self,
        board: [u8; 12],
        side: bool,
        path: &mut Vec<([u8; 12], bool)>,
        mut alpha: i32,
        beta: i32,
    ) -> i32 {
        let seen = path.iter().filter(|&&p| p == (board, side)).count();
        if seen + 1 >= self.ends_at {
            // The repetition ends the game: each side keeps its own row.
            return own_row(&board).clamp(alpha, beta);
        }
        let b = Board::new(board).expect("a valid board");
        match self.rules.turn(&b) {
            Turn::GameOver { value } => i32::from(value).clamp(alpha, beta),
            Turn::Moves(moves) => {
                for m in moves.iter() {
                    let child = *m.child.pits();
                    let v = if m.captured > 0 {
                        i32::from(m.captured) - self.value(child)
                    } else {
                        path.push((board, side));
                        let v = -self.search(child, !side, path, -beta, -alpha);
                        path.pop();
                        v
                    };
                    if v >= beta {
                        return beta;
                    }
                    alpha = alpha.max(v);
                }
                alpha
            }
        }
    }
}
