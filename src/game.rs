//! Games in progress: the move-list text form, replaying it, and the rules that end a real
//! game (which a score-free table does not know).
//!
//! # The move-list format
//!
//! One record per game, line by line; `#` starts a comment. Three optional header lines,
//! each a keyword and its values:
//!
//! ```text
//! rules abapa                      # awari (the default), abapa or grand-slam-captures
//! start 4 4 4 4 4 4 4 4 4 4 4 4    # the first mover's six pits, then the other's (default: 4 each)
//! first south                      # who moves first: south (the default) or north
//! captured 0 0                     # seeds south and north had captured before the start
//! 1. 3 2  2. 6 1  3. 4             # the moves
//! ```
//!
//! Every other token is a move: the pit the side to move sows, `1`..`6` counted from that
//! side's left (the keys of `awari play`, the pit names of `probe`). Move numbers such as
//! `12.` are ignored, and so are commas. South is the player at the bottom of the board
//! (whose pits are numbered left to right), North the one at the top. [`GameRecord`]'s
//! `Display` writes this form back (headers, then ten numbered moves per line).
//!
//! # How a game ends
//!
//! [`GameRecord::replay`] applies, after each move:
//! * a side that has captured more than half of the seeds in play (25 of 48) wins at once;
//! * both sides holding exactly half (24–24) is a draw;
//! * a side to move that cannot move ends the game as the rules say ([`Rules::turn`]): a
//!   side with no seeds loses the rest to the other; under `abapa` and
//!   `grand-slam-captures` a side that cannot feed its starved opponent takes the seeds left;
//! * the third occurrence of a position (same pits, same side to move) ends the game. Under
//!   `abapa` each side then keeps the seeds on its own row (the tournament rule); under
//!   `awari` and `grand-slam-captures` the seeds left are shared equally, which is what the
//!   tables assume of endless play. So under `abapa` a game's result can differ from what
//!   the tables' value predicts when play goes round.

use crate::board::{Board, ROW};
use crate::rules::{Rules, Turn};
use std::collections::HashMap;
use std::fmt;

/// One of the two players.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// The player at the bottom of the board.
    South,
    /// The player at the top.
    North,
}

impl Side {
    /// The opponent.
    pub fn other(self) -> Side {
        match self {
            Side::South => Side::North,
            Side::North => Side::South,
        }
    }
    /// `south` or `north`, as the move-list format and the JSON spell it.
    pub fn name(self) -> &'static str {
        match self {
            Side::South => "south",
            Side::North => "north",
        }
    }
    /// 0 for South, 1 for North: the index into per-side arrays.
    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A side name that is neither `south` nor `north`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}': expected south or north")]
pub struct SideError(pub String);

impl std::str::FromStr for Side {
    type Err = SideError;
    /// `south` or `north`, in any case, spaces around ignored: the one reading of a side's
    /// name, for the move-list format and the command line alike.
    fn from_str(text: &str) -> Result<Side, SideError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "south" => Ok(Side::South),
            "north" => Ok(Side::North),
            _ => Err(SideError(crate::board::clip(text))),
        }
    }
}

/// A game as written down: where it started and the pits played.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameRecord {
    /// The rules preset the game is played under.
    pub rules: Rules,
    /// The start position, from the first mover's side.
    pub start: Board,
    /// Who moves first.
    pub first: Side,
    /// Seeds South and North had captured before the start.
    pub captured: [u32; 2],
    /// The pits played, 0..=5 from each mover's left.
    pub moves: Vec<u8>,
}

/// Why a move list was refused. Each message is one line and names the line or the move.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    /// A header line (`rules`, `start`, `first`, `captured`) that does not read.
    #[error("line {line}: {message}")]
    Header {
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// A token that is neither a pit number 1..6 nor a move number.
    #[error("move {number} ('{token}'): not a pit number 1..6")]
    NotAPit {
        /// 1-based number of the move.
        number: usize,
        /// The token as written (escaped and cut).
        token: String,
    },
    /// A move the rules do not allow where it is played.
    #[error("move {number} (pit {pit} of {side}): {reason}")]
    Illegal {
        /// 1-based number of the move.
        number: usize,
        /// The pit, 1..6 from the mover's left.
        pit: u8,
        /// Who played it.
        side: Side,
        /// Why it is refused.
        reason: String,
    },
    #[error("captured {south},{north} with {board} seeds on the board makes more than 48 seeds")]
    /// The captured counts and the start board hold more than 48 seeds.
    TooManySeeds {
        /// Seeds South had captured.
        south: u32,
        /// Seeds North had captured.
        north: u32,
        /// Seeds on the start board.
        board: u32,
    },
}

impl GameRecord {
    /// A game from `start` with no moves yet.
    pub fn new(rules: Rules, start: Board, first: Side) -> GameRecord {
        GameRecord {
            rules,
            start,
            first,
            captured: [0, 0],
            moves: Vec::new(),
        }
    }

    /// Reads the move-list format (see the module documentation). `rules` applies when the
    /// text has no `rules` line. The moves are checked only by [`GameRecord::replay`]; here
    /// only that each is a pit number 1..6.
    ///
    /// # Errors
    ///
    /// A bad header line, or a token that is not a pit number (named with its move number).
    pub fn parse(text: &str, rules: Rules) -> Result<GameRecord, GameError> {
        let mut record = GameRecord::new(rules, Board::opening(4).expect("48 seeds"), Side::South);
        for (n, raw) in text.lines().enumerate() {
            let line_no = n + 1;
            let line = raw.split('#').next().unwrap_or("").trim();
            let header = |message: String| GameError::Header {
                line: line_no,
                message,
            };
            let (keyword, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
            let rest = rest.trim();
            match keyword.to_ascii_lowercase().as_str() {
                "" => continue,
                "rules" => {
                    record.rules = rest.parse().map_err(|e| header(format!("{e}")))?;
                    continue;
                }
                "start" => {
                    record.start = rest.parse().map_err(|e| {
                        header(format!(
                            "bad start board '{}': {e}",
                            crate::board::clip(rest)
                        ))
                    })?;
                    continue;
                }
                "first" => {
                    record.first = rest.parse().map_err(|_| {
                        header(format!(
                            "'first {}': expected 'first south' or 'first north'",
                            crate::board::clip(rest)
                        ))
                    })?;
                    continue;
                }
                "captured" => {
                    let nums: Vec<&str> = rest
                        .split(|c: char| c.is_whitespace() || c == ',')
                        .filter(|t| !t.is_empty())
                        .collect();
                    let parsed: Vec<u32> = nums.iter().filter_map(|t| t.parse().ok()).collect();
                    if nums.len() != 2 || parsed.len() != 2 || parsed.iter().any(|&x| x > 48) {
                        return Err(header(format!(
                            "'captured {}': expected two seed counts (south, north), e.g. captured 3 5",
                            crate::board::clip(rest)
                        )));
                    }
                    record.captured = [parsed[0], parsed[1]];
                    continue;
                }
                _ => {}
            }
            for token in line
                .split(|c: char| c.is_whitespace() || c == ',')
                .filter(|t| !t.is_empty())
            {
                let is_number = token.len() > 1
                    && token.ends_with('.')
                    && token[..token.len() - 1].bytes().all(|b| b.is_ascii_digit());
                if is_number {
                    continue;
                }
                let number = record.moves.len() + 1;
                match token.parse::<u8>() {
                    Ok(p @ 1..=6) if token.len() == 1 => record.moves.push(p - 1),
                    _ => {
                        return Err(GameError::NotAPit {
                            number,
                            token: crate::board::clip(token),
                        })
                    }
                }
            }
        }
        Ok(record)
    }

    /// Plays the moves from the start, checking each, and applies the end-of-game rules.
    ///
    /// # Errors
    ///
    /// The captured counts and the board hold more than 48 seeds, or a move is illegal or
    /// comes after the end of the game (named with its number, pit and side).
    pub fn replay(&self) -> Result<Game, GameError> {
        let [south, north] = self.captured;
        if self.start.seeds() + south + north > crate::board::MAX_SEEDS {
            return Err(GameError::TooManySeeds {
                south,
                north,
                board: self.start.seeds(),
            });
        }
        let mut game = Game {
            rules: self.rules,
            board: self.start,
            to_move: self.first,
            captured: self.captured,
            plies: Vec::new(),
            end: None,
            seen: HashMap::new(),
        };
        game.settle();
        for (i, &pit) in self.moves.iter().enumerate() {
            game.play(pit).map_err(|reason| GameError::Illegal {
                number: i + 1,
                pit: pit + 1,
                side: game.to_move,
                reason,
            })?;
        }
        Ok(game)
    }
}

impl fmt::Display for GameRecord {
    /// The move-list format, headers first; [`GameRecord::parse`] reads it back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "rules {}", self.rules)?;
        writeln!(f, "start {}", self.start)?;
        writeln!(f, "first {}", self.first)?;
        if self.captured != [0, 0] {
            writeln!(f, "captured {} {}", self.captured[0], self.captured[1])?;
        }
        for (row, chunk) in self.moves.chunks(20).enumerate() {
            let mut line = String::new();
            for (k, pair) in chunk.chunks(2).enumerate() {
                if k > 0 {
                    line.push_str("  ");
                }
                line.push_str(&format!("{}.", row * 10 + k + 1));
                for p in pair {
                    line.push_str(&format!(" {}", p + 1));
                }
            }
            writeln!(f, "{line}")?;
        }
        Ok(())
    }
}

/// One move of a replayed game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ply {
    /// Who played it.
    pub side: Side,
    /// 0..=5 from the mover's left.
    pub pit: u8,
    /// Seeds it captured.
    pub captured: u8,
    /// The position before the move, from the mover's side.
    pub before: Board,
}

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndReason {
    /// A side captured more than half of the seeds.
    Majority,
    /// Both sides captured exactly half (24–24).
    EvenSplit,
    /// The side to move has no seeds: the other takes the rest.
    CannotMove,
    /// The side to move cannot feed its starved opponent and takes the seeds left.
    CannotFeed,
    /// The same position came up a third time.
    Repetition,
}

/// The end of a game: why, and the final scores.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GameEnd {
    /// Which rule ended it.
    pub reason: EndReason,
    /// Final seeds of South and North (halves when seeds left are shared).
    pub score: [f64; 2],
}

impl GameEnd {
    /// The winner, `None` for a draw.
    pub fn winner(&self) -> Option<Side> {
        if self.score[0] > self.score[1] {
            Some(Side::South)
        } else if self.score[1] > self.score[0] {
            Some(Side::North)
        } else {
            None
        }
    }
}

/// A game replayed to its current position.
#[derive(Clone, Debug)]
pub struct Game {
    /// The rules preset.
    pub rules: Rules,
    /// The current position, from the side to move.
    pub board: Board,
    /// Who is to move.
    pub to_move: Side,
    /// Seeds South and North have captured.
    pub captured: [u32; 2],
    /// The moves played.
    pub plies: Vec<Ply>,
    /// `Some` once the game is over.
    pub end: Option<GameEnd>,
    /// Occurrences of each position so far.
    seen: HashMap<(Board, Side), u32>,
}

impl Game {
    /// The pits as the page shows them: South's six (left to right), then North's six in
    /// North's sowing order (right to left along the top row).
    pub fn absolute(&self) -> [u8; 12] {
        let b = match self.to_move {
            Side::South => self.board,
            Side::North => self.board.swapped(),
        };
        *b.pits()
    }

    /// How often the current position has occurred (1 the first time).
    pub fn occurrences(&self) -> u32 {
        self.seen
            .get(&(self.board, self.to_move))
            .copied()
            .unwrap_or(0)
    }

    /// Plays `pit` (0..=5 of the side to move) and applies the end rules. On an illegal move
    /// the game is unchanged and the reason is returned.
    ///
    /// # Errors
    ///
    /// The game is over, the pit is empty or the rules forbid the move; the message says
    /// which.
    pub fn play(&mut self, pit: u8) -> Result<(), String> {
        if let Some(end) = self.end {
            return Err(format!(
                "the game is already over ({})",
                self.end_text(&end)
            ));
        }
        let legal = self.rules.legal_moves(&self.board);
        let Some(m) = legal.iter().find(|m| m.pit == pit).copied() else {
            if usize::from(pit) >= ROW {
                return Err("not a pit number 1..6".to_string());
            }
            if self.board.pit(pit.into()) == 0 {
                return Err("that pit is empty".to_string());
            }
            let names: Vec<String> = legal.iter().map(|m| (m.pit + 1).to_string()).collect();
            return Err(format!(
                "not allowed here (the opponent must be fed and a grand slam is refused under these rules); legal: {}",
                names.join(", ")
            ));
        };
        self.plies.push(Ply {
            side: self.to_move,
            pit,
            captured: m.captured,
            before: self.board,
        });
        self.captured[self.to_move.index()] += u32::from(m.captured);
        self.board = m.child;
        self.to_move = self.to_move.other();
        self.settle();
        Ok(())
    }

    /// Records the current position and ends the game if an end rule applies.
    fn settle(&mut self) {
        *self.seen.entry((self.board, self.to_move)).or_insert(0) += 1;
        let on_board = self.board.seeds();
        let total = on_board + self.captured[0] + self.captured[1];
        let [s, n] = self.captured.map(f64::from);
        let mover = self.to_move.index();
        let reason = if 2 * self.captured[0] > total || 2 * self.captured[1] > total {
            Some((EndReason::Majority, [s, n]))
        } else if 2 * self.captured[0] == total && 2 * self.captured[1] == total {
            Some((EndReason::EvenSplit, [s, n]))
        } else if let Turn::GameOver { value } = self.rules.turn(&self.board) {
            let mut score = [s, n];
            let nb = f64::from(on_board);
            let v = f64::from(value);
            score[mover] += (nb + v) / 2.0;
            score[1 - mover] += (nb - v) / 2.0;
            let why = if self.board.mover_seeds() == 0 {
                EndReason::CannotMove
            } else {
                EndReason::CannotFeed
            };
            Some((why, score))
        } else if self.occurrences() >= 3 {
            let mut score = [s, n];
            if self.rules == Rules::ABAPA {
                score[mover] += f64::from(self.board.mover_seeds());
                score[1 - mover] += f64::from(self.board.opponent_seeds());
            } else {
                score[0] += f64::from(on_board) / 2.0;
                score[1] += f64::from(on_board) / 2.0;
            }
            Some((EndReason::Repetition, score))
        } else {
            None
        };
        self.end = reason.map(|(reason, score)| GameEnd { reason, score });
    }

    /// One line saying why and how the game ended.
    pub fn end_text(&self, end: &GameEnd) -> String {
        let mover = self.to_move;
        let why = match end.reason {
            EndReason::Majority => "a side has captured more than half of the seeds".to_string(),
            EndReason::EvenSplit => "each side has captured half of the seeds".to_string(),
            EndReason::CannotMove => format!(
                "{mover} has no seeds to move: {} takes the seeds left",
                mover.other()
            ),
            EndReason::CannotFeed => format!(
                "{mover} cannot feed {}: {mover} takes the seeds left",
                mover.other()
            ),
            EndReason::Repetition if self.rules == Rules::ABAPA => {
                "third repetition: each side keeps the seeds on its own row".to_string()
            }
            EndReason::Repetition => {
                "third repetition: the seeds left are shared equally".to_string()
            }
        };
        let result = match end.winner() {
            Some(side) => format!("{side} wins"),
            None => "draw".to_string(),
        };
        format!("{why}; {result} {}-{}", end.score[0], end.score[1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_side_reads_in_any_case_and_a_wrong_one_says_what_is_expected() {
        assert_eq!("South".parse::<Side>(), Ok(Side::South));
        assert_eq!(" north ".parse::<Side>(), Ok(Side::North));
        let e = "east".parse::<Side>().unwrap_err().to_string();
        assert!(e.contains("'east'") && e.contains("south or north"), "{e}");
    }

    #[test]
    fn record_round_trips_through_its_text() {
        let text = "rules abapa\nstart 4 4 4 4 4 4 4 4 4 4 4 4\nfirst north\n1. 3 2 2. 6";
        let r = GameRecord::parse(text, Rules::AWARI).unwrap();
        assert_eq!(r.rules, Rules::ABAPA);
        assert_eq!(r.first, Side::North);
        assert_eq!(r.moves, vec![2, 1, 5]);
        assert_eq!(GameRecord::parse(&r.to_string(), Rules::AWARI).unwrap(), r);
    }
}
