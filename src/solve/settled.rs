//! A settled position as one `u64`: the board as a bit mask, and whether its mover lost.
//!
//! The board is written in stars and bars (see [`crate::index`]): pit `j`'s seeds are
//! followed by a bar, so bar `j + 1` sits at slot `p_0 + … + p_j + j`; a twelfth bar closes
//! the last pit at slot `n + 11`. The mask has a bit at each bar. Two properties make this
//! the right key:
//!
//! * it fits any layer of the game: `n + 11 ≤ 59` bits, so the top bit is free for the
//!   verdict, where a fixed 5 bits a pit would stop at 31 seeds a pit;
//! * within a layer, masks compare as the boards' indices do: the index is the colex rank
//!   of the bar set, and colex order is the numeric order of the set's bit mask. Sorting
//!   settled positions by key sorts them by index, which the lean pass's logs rely on.

use crate::board::{bar_slots, to_bits, Board, PITS};

/// A settled position and its verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Settled(pub(crate) u64);

impl Settled {
    /// The verdict bit: the mover lost (entered `L`) rather than won.
    pub const LOST: u64 = 1 << 63;

    #[cfg(test)]
    pub fn new(board: &Board, lost: bool) -> Settled {
        Settled(key(board) | if lost { Settled::LOST } else { 0 })
    }

    #[inline]
    pub fn from_key(key: u64, lost: bool) -> Settled {
        Settled(key | if lost { Settled::LOST } else { 0 })
    }

    #[cfg(test)]
    pub fn board(self) -> Board {
        board_of(self.key())
    }

    #[inline]
    pub fn lost(self) -> bool {
        self.0 & Settled::LOST != 0
    }

    /// The board's key, which orders positions of a layer as their indices do.
    #[inline]
    pub fn key(self) -> u64 {
        self.0 & !Settled::LOST
    }
}

/// The bar mask of `board`.
#[inline]
pub(crate) fn key(board: &Board) -> u64 {
    key_of_bits(to_bits(board))
}

/// The index ([`crate::index::rank`]) of the board whose bar mask is `mask`: the colex
/// rank of its first eleven bars, read straight from the mask.
#[inline]
pub(crate) fn index_of_key(mut mask: u64) -> u64 {
    let mut r = 0;
    for j in 1..PITS as u32 {
        r += crate::index::binomial(mask.trailing_zeros(), j);
        mask &= mask - 1;
    }
    r
}

/// The bar mask of a packed board ([`crate::board::ROW_MASK`]), as [`key`] gives it.
#[inline]
pub(crate) fn key_of_bits(bits: u128) -> u64 {
    let slots = bar_slots(bits);
    let mut mask = 0u64;
    for pit in 0..PITS {
        mask |= 1 << ((slots >> (8 * pit)) as u8);
    }
    mask
}

/// The packed board ([`crate::board::ROW_MASK`]) whose bar mask is `mask`.
#[inline]
pub(crate) fn bits_of(mut mask: u64) -> u128 {
    let mut bits = 0u128;
    let mut next = 0u32;
    for pit in 0..PITS {
        let bar = mask.trailing_zeros();
        bits |= u128::from(bar - next) << (8 * pit);
        next = bar + 1;
        mask &= mask - 1;
    }
    bits
}

/// The board whose bar mask is `mask`.
#[cfg(test)]
pub(crate) fn board_of(mask: u64) -> Board {
    crate::board::from_bits(bits_of(mask))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index;

    #[test]
    fn keys_round_trip_and_sort_as_indices() {
        for n in [0, 1, 5, 9] {
            let mut last = None;
            for (_, b) in index::walk(n, 0, index::size(n)) {
                let k = key(&b);
                assert_eq!(board_of(k), b);
                assert_eq!(index_of_key(k), index::rank(&b));
                assert!(
                    last.is_none_or(|l| l < k),
                    "keys out of index order at {b:?}"
                );
                last = Some(k);
                let s = Settled::new(&b, true);
                assert!(s.lost() && s.board() == b && s.key() == k);
            }
        }
    }

    #[test]
    fn the_largest_boards_fit() {
        let mut pits = [0u8; PITS];
        pits[0] = 48;
        let b = Board::from_pits_unchecked(pits);
        assert_eq!(Settled::new(&b, true).board(), b);
        pits[0] = 0;
        pits[11] = 48;
        let b = Board::from_pits_unchecked(pits);
        assert_eq!(Settled::new(&b, false).board(), b);
        assert!(key(&b) < Settled::LOST);
    }
}
