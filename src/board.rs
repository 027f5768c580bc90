//! The board: twelve pit counts seen from the side to move, its text form and its display.
//!
//! Pits 0..=5 belong to the side to move (left to right from its own seat, which is the
//! sowing direction), pits 6..=11 to the opponent (again in sowing order). Every position
//! in the databases is stored this way, so a move's child is the sown board with its two
//! rows swapped.

use std::fmt;
use std::str::FromStr;

/// Pits on the board.
pub const PITS: usize = 12;
/// Pits in one row.
pub const ROW: usize = 6;
/// Seeds in the standard game; no position of any layer holds more.
pub const MAX_SEEDS: u32 = 48;

/// A position seen from the side to move.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Board {
    pits: [u8; PITS],
}

/// The solver's hot loops work on a board as one 128-bit integer, pit `i` in byte `i`
/// (bytes 12..=15 zero): sowing adds a precomputed increment, un-sowing subtracts one
/// seed at a time, and the rows swap with two shifts, all in registers. No pit ever holds
/// more than 48 seeds, so byte lanes never carry into each other.
pub(crate) const ROW_MASK: u128 = (1 << 48) - 1;

/// The packed form of `board` (see [`ROW_MASK`]).
#[inline]
pub(crate) fn to_bits(board: &Board) -> u128 {
    let mut bytes = [0u8; 16];
    bytes[..PITS].copy_from_slice(board.pits());
    u128::from_le_bytes(bytes)
}

/// The board whose packed form is `bits`.
#[inline]
pub(crate) fn from_bits(bits: u128) -> Board {
    let bytes = bits.to_le_bytes();
    let mut pits = [0u8; PITS];
    pits.copy_from_slice(&bytes[..PITS]);
    Board::from_pits_unchecked(pits)
}

/// The two rows exchanged: the board as the other side sees it.
#[inline]
pub(crate) fn swap_rows(bits: u128) -> u128 {
    ((bits >> 48) & ROW_MASK) | ((bits & ROW_MASK) << 48)
}

/// Whether the opponent's row (pits 6..=11) of a packed board is empty.
#[inline]
pub(crate) fn opponent_row_empty(bits: u128) -> bool {
    (bits >> 48) & ROW_MASK == 0
}

/// The seeds in pit `pit` of a packed board.
#[inline]
pub(crate) fn pit_of(bits: u128, pit: usize) -> u8 {
    (bits >> (8 * pit)) as u8
}

/// A one in byte `i`, for `i` in `0..16`.
const ONES: u128 = u128::from_le_bytes([1; 16]);
/// Byte `i` holds `i`.
const STEPS: u128 = u128::from_le_bytes([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0, 0, 0, 0]);

/// The seeds on a packed board (byte 15 of `bits · 0x0101…` adds all the others).
#[inline]
pub(crate) fn seeds_in(bits: u128) -> u32 {
    (bits.wrapping_mul(ONES) >> 120) as u32
}

/// The slots of the twelve bars in stars and bars (see [`crate::index`]): byte `k` is
/// the number of seeds in pits `0..=k` plus `k`, where the bar closing pit `k` sits. One
/// multiplication makes every prefix sum at once (byte `k` of `bits · 0x0101…` adds bytes
/// `0..=k`; sums stay at most 48 + 11, so no byte carries).
#[inline]
pub(crate) fn bar_slots(bits: u128) -> u128 {
    bits.wrapping_mul(ONES) + STEPS
}

/// Why a board's text was refused. Each message is one line and names the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BoardError {
    /// Not 12 counts.
    #[error("a board needs 12 pit counts, found {found}")]
    WrongPitCount {
        /// How many there were.
        found: usize,
    },
    /// A count that is not a number.
    #[error("pit {pit}: '{token}' is not a seed count")]
    NotANumber {
        /// The pit, 1..=12.
        pit: usize,
        /// The text, quoted (escaped, and cut if long).
        token: String,
    },
    /// A negative count.
    #[error("pit {pit}: a seed count cannot be negative ('{token}')")]
    Negative {
        /// The pit, 1..=12.
        pit: usize,
        /// The text, quoted (escaped, and cut if long).
        token: String,
    },
    /// A count over 48.
    #[error("pit {pit}: {count} seeds do not fit in one pit (at most {MAX_SEEDS})")]
    PitTooLarge {
        /// The pit, 1..=12.
        pit: usize,
        /// The count as given (cut if long).
        count: String,
    },
    /// More than 48 seeds in all.
    #[error("the board holds {total} seeds, more than the {MAX_SEEDS} of the game")]
    TooManySeeds {
        /// The sum of the counts.
        total: u32,
    },
}

impl Board {
    /// A board from its pit counts, refusing more than 48 seeds in all.
    pub fn new(pits: [u8; PITS]) -> Result<Board, BoardError> {
        for (pit, &count) in pits.iter().enumerate() {
            if u32::from(count) > MAX_SEEDS {
                return Err(BoardError::PitTooLarge {
                    pit: pit + 1,
                    count: count.to_string(),
                });
            }
        }
        let board = Board { pits };
        let total = board.seeds();
        if total > MAX_SEEDS {
            return Err(BoardError::TooManySeeds { total });
        }
        Ok(board)
    }

    /// A board from counts already known to be valid (indexer, move generator).
    #[inline]
    pub(crate) const fn from_pits_unchecked(pits: [u8; PITS]) -> Board {
        Board { pits }
    }

    /// The standard opening with `per_pit` seeds in every pit.
    pub fn opening(per_pit: u8) -> Result<Board, BoardError> {
        Board::new([per_pit; PITS])
    }

    /// The 12 counts: the mover's pits 0..=5, then the opponent's 6..=11.
    #[inline]
    pub fn pits(&self) -> &[u8; PITS] {
        &self.pits
    }

    /// The seeds in `pit` (0..=11).
    ///
    /// # Panics
    ///
    /// If `pit` is 12 or more.
    #[inline]
    pub fn pit(&self, pit: usize) -> u8 {
        self.pits[pit]
    }

    /// Seeds on the whole board: the layer this position belongs to.
    #[inline]
    pub fn seeds(&self) -> u32 {
        self.pits.iter().map(|&p| u32::from(p)).sum()
    }

    /// Seeds in the row of the side to move.
    #[inline]
    pub fn mover_seeds(&self) -> u32 {
        self.pits[..ROW].iter().map(|&p| u32::from(p)).sum()
    }

    /// Seeds in the opponent's row.
    #[inline]
    pub fn opponent_seeds(&self) -> u32 {
        self.pits[ROW..].iter().map(|&p| u32::from(p)).sum()
    }

    /// The same position seen from the other side (the two rows swapped).
    #[inline]
    pub fn swapped(&self) -> Board {
        let mut pits = [0u8; PITS];
        pits[..ROW].copy_from_slice(&self.pits[ROW..]);
        pits[ROW..].copy_from_slice(&self.pits[..ROW]);
        Board { pits }
    }

    /// A picture with the two rows facing each other, the opponent on top. Sowing runs left
    /// to right along the bottom row and right to left along the top row; the mover's pits
    /// are labelled 1..6 (a..f), as players name them.
    pub fn picture(&self) -> String {
        let top: Vec<String> = (ROW..PITS)
            .rev()
            .map(|p| format!("{:>3}", self.pits[p]))
            .collect();
        let bottom: Vec<String> = (0..ROW).map(|p| format!("{:>3}", self.pits[p])).collect();
        format!(
            "  opponent {}\n  to move  {}\n  pit      {}",
            top.join(""),
            bottom.join(""),
            (1..=ROW).map(|p| format!("{p:>3}")).collect::<String>()
        )
    }
}

impl FromStr for Board {
    type Err = BoardError;

    /// Twelve counts, the mover's six first, separated by spaces, commas, `/` or `|`.
    fn from_str(text: &str) -> Result<Board, BoardError> {
        let tokens: Vec<&str> = text
            .split(|c: char| c.is_whitespace() || c == ',' || c == '/' || c == '|')
            .filter(|t| !t.is_empty())
            .collect();
        if tokens.len() != PITS {
            return Err(BoardError::WrongPitCount {
                found: tokens.len(),
            });
        }
        let mut pits = [0u8; PITS];
        let mut total = 0u32;
        for (i, token) in tokens.iter().enumerate() {
            let pit = i + 1;
            let digits = token.strip_prefix('+').unwrap_or(token);
            if let Some(rest) = token.strip_prefix('-') {
                if !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(BoardError::Negative {
                        pit,
                        token: clip(token),
                    });
                }
            }
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(BoardError::NotANumber {
                    pit,
                    token: clip(token),
                });
            }
            // A count too long for u64 is refused like any other count over 48, and the
            // message names it as typed.
            let count = digits.parse::<u64>().unwrap_or(u64::MAX);
            if count > u64::from(MAX_SEEDS) {
                return Err(BoardError::PitTooLarge {
                    pit,
                    count: clip(digits),
                });
            }
            pits[i] = count as u8;
            total += count as u32;
        }
        if total > MAX_SEEDS {
            return Err(BoardError::TooManySeeds { total });
        }
        Ok(Board { pits })
    }
}

impl fmt::Display for Board {
    /// The text form `parse` reads back: the twelve counts separated by spaces.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.pits.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Board({self})")
    }
}

/// User text quoted in an error: control characters escaped (so it stays on one line and
/// cannot forge another) and cut to a few dozen characters (so a huge input does not make
/// a huge message).
pub(crate) fn clip(text: &str) -> String {
    const SHOWN: usize = 40;
    let escaped: String = text.chars().flat_map(char::escape_debug).collect();
    match escaped.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{}… ({} bytes)", &escaped[..cut], text.len()),
        None => escaped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swapping_twice_is_identity() {
        let b: Board = "1 2 3 4 5 6 7 8 0 0 0 1".parse().unwrap();
        assert_eq!(b.swapped().swapped(), b);
        assert_eq!(b.swapped().to_string(), "7 8 0 0 0 1 1 2 3 4 5 6");
    }
}
