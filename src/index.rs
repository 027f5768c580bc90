//! The perfect hash of a layer: every placement of `n` seeds in 12 pits gets a unique index
//! in `0..size(n)`, by the combinatorial number system ("stars and bars").
//!
//! # The order
//!
//! Write a board as `n` seeds and 11 bars: bar `j` (1..=11) sits at slot
//! `b_j = p_0 + … + p_{j-1} + j - 1` of `n + 11` slots. The index is the colexicographic
//! rank of that set of bars, `Σ C(b_j, j)`: 11 prefix sums and 11 lookups in a binomial
//! table, no branches, no allocation.
//!
//! Why this order:
//! * The opponent's row (pits 6..=11) holds the high-order bars, so all positions that share
//!   an opponent row are contiguous, and the mover's row varies fastest. Walking a layer in
//!   index order is a cheap successor step ([`next_in_layer`]) that only moves seeds between
//!   neighbouring low pits, so whole-layer passes never unrank.
//! * Consecutive indices are similar positions, so neighbouring values in a stored block are
//!   correlated, which helps the block compressor.
//!
//! The first index of a layer is the board with every seed in pit 11, the last every seed
//! in pit 0.

use crate::board::{bar_slots, from_bits, to_bits, Board, MAX_SEEDS, PITS};

/// Rows of the binomial table: enough for `C(n + 11, 11)` with `n` up to 48 and for the
/// sum over all layers, `C(60, 12)`.
const BINOM_ROWS: usize = 61;
const BINOM_COLS: usize = 13;

const fn binomial_table() -> [[u64; BINOM_COLS]; BINOM_ROWS] {
    let mut t = [[0u64; BINOM_COLS]; BINOM_ROWS];
    let mut k = 0;
    while k < BINOM_ROWS {
        t[k][0] = 1;
        let mut j = 1;
        while j < BINOM_COLS {
            t[k][j] = if k == 0 {
                0
            } else {
                t[k - 1][j - 1] + t[k - 1][j]
            };
            j += 1;
        }
        k += 1;
    }
    t
}

static BINOM: [[u64; BINOM_COLS]; BINOM_ROWS] = binomial_table();

/// `C(k, j)` for `k <= 60`, `j <= 12`.
#[inline]
pub(crate) fn binomial(k: u32, j: u32) -> u64 {
    BINOM[k as usize][j as usize]
}

/// Positions in layer `n`: `C(n + 11, 11)`.
#[inline]
pub fn size(n: u32) -> u64 {
    assert!(
        n <= MAX_SEEDS,
        "layer {n} is beyond the 48 seeds of the game"
    );
    binomial(n + 11, 11)
}

/// Positions in layers `0..=n` together: `C(n + 12, 12)`.
pub fn size_up_to(n: u32) -> u64 {
    assert!(
        n <= MAX_SEEDS,
        "layer {n} is beyond the 48 seeds of the game"
    );
    binomial(n + 12, 12)
}

/// The index of `board` within its layer (`board.seeds()`).
#[inline]
pub fn rank(board: &Board) -> u64 {
    rank_bits(to_bits(board))
}

/// [`rank`] of a packed board ([`crate::board::ROW_MASK`]): bar `j` (1..=11) closes pit
/// `j − 1`, so its slot is byte `j − 1` of [`bar_slots`].
#[inline]
pub(crate) fn rank_bits(bits: u128) -> u64 {
    let mut slots = bar_slots(bits);
    let mut r = 0u64;
    for j in 1..PITS as u32 {
        r += binomial((slots & 0xFF) as u32, j);
        slots >>= 8;
    }
    r
}

/// The board of layer `n` with index `index` (which must be below `size(n)`).
#[inline]
pub fn unrank(n: u32, index: u64) -> Board {
    debug_assert!(index < size(n));
    let mut pits = [0u8; PITS];
    let mut r = index;
    // Recover the bars from the highest down: bar j is the largest slot b with C(b, j) <= r.
    // Each bar lies below the previous one, so the scan over all bars costs n + 11 steps.
    let mut upper = (n + 11) as usize; // exclusive bound for the slot of the current bar
    let mut above = n as usize; // seeds counted above the current bar
    for j in (1..PITS).rev() {
        let mut b = upper - 1;
        while BINOM[b][j] > r {
            b -= 1;
        }
        r -= BINOM[b][j];
        // Seeds between bar j and bar j + 1 belong to pit j.
        let below = b + 1 - j; // seeds in pits 0..j
        pits[j] = (above - below) as u8;
        above = below;
        upper = b;
    }
    pits[0] = above as u8;
    Board::from_pits_unchecked(pits)
}

/// Steps `board` to the next board of its layer in index order; false at the last one.
/// Amortised constant time, so a pass over a layer never unranks.
#[inline]
pub fn next_in_layer(board: &mut Board) -> bool {
    let mut bits = to_bits(board);
    let stepped = next_in_layer_bits(&mut bits);
    *board = from_bits(bits);
    stepped
}

/// [`next_in_layer`] on a packed board ([`crate::board::ROW_MASK`]).
#[inline]
pub(crate) fn next_in_layer_bits(bits: &mut u128) -> bool {
    // The lowest pit j >= 1 holding a seed gives one seed to pit j - 1, which also takes the
    // seeds of pit 0 (pits 1..j are empty): the colex successor of the bar positions.
    let above = *bits & !0xFF;
    if above == 0 {
        return false;
    }
    let j = above.trailing_zeros() / 8;
    let low = *bits & 0xFF;
    *bits = *bits - low - (1 << (8 * j)) + ((low + 1) << (8 * (j - 1)));
    true
}

/// The farthest [`Cursor`] steps rather than unranks. A step is a handful of instructions;
/// an unrank cost about 62 ns at layer 22 (its share of a lean build's profile over the
/// entries it served). With 8, `unrank` kept 2.05% of that profile; with 24, 1.17%.
const CURSOR_STEPS: u64 = 24;

/// Packed boards ([`crate::board::ROW_MASK`]) of layer `n` by index, for indices asked for
/// mostly in increasing order (a sorted list of hits): each is stepped to from the last
/// one when that is at most [`CURSOR_STEPS`] before it, else unranked.
pub(crate) struct Cursor {
    n: u32,
    /// The last index asked for, and its board.
    at: Option<(u64, u128)>,
}

impl Cursor {
    pub(crate) fn new(n: u32) -> Cursor {
        Cursor { n, at: None }
    }

    /// The board with index `index` (which must be below `size(n)`).
    #[inline]
    pub(crate) fn bits_at(&mut self, index: u64) -> u128 {
        let bits = match self.at {
            Some((last, mut bits)) if (last..=last + CURSOR_STEPS).contains(&index) => {
                for _ in last..index {
                    next_in_layer_bits(&mut bits);
                }
                bits
            }
            _ => to_bits(&unrank(self.n, index)),
        };
        self.at = Some((index, bits));
        bits
    }
}

/// Walks the boards of layer `n` with indices `start..end`, in order.
pub fn walk(n: u32, start: u64, end: u64) -> impl Iterator<Item = (u64, Board)> {
    walk_bits(n, start, end).map(|(i, bits)| (i, from_bits(bits)))
}

/// [`walk`] with packed boards ([`crate::board::ROW_MASK`]).
pub(crate) fn walk_bits(n: u32, start: u64, end: u64) -> impl Iterator<Item = (u64, u128)> {
    let mut bits = (start < end).then(|| to_bits(&unrank(n, start)));
    let mut index = start;
    std::iter::from_fn(move || {
        let b = bits?;
        let here = index;
        index += 1;
        if index < end {
            let mut next = b;
            next_in_layer_bits(&mut next);
            bits = Some(next);
        } else {
            bits = None;
        }
        Some((here, b))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cursor gives every index its board, whether it steps or unranks: indices one
    /// apart, a few apart, the same twice, far apart, and going back, up to the layer's
    /// last position.
    #[test]
    fn a_cursor_gives_the_board_of_every_index() {
        for n in [0, 1, 5, 13, 48] {
            let size = size(n);
            let mut indices: Vec<u64> = vec![0, 0, 1, 2, 5, 13, 13, 14, 22, 23, 31, 40, 41, 7, 8];
            let mut i = 100;
            for gap in [1, 3, 8, 9, 1, 1000, 2, 7, 24, 25, 100_000, 4, 123_456_789] {
                i += gap;
                indices.push(i);
            }
            indices.extend([9, 1, 2, 1].map(|back| size.saturating_sub(back)));
            let mut cursor = Cursor::new(n);
            for i in indices.into_iter().filter(|&i| i < size) {
                assert_eq!(
                    cursor.bits_at(i),
                    to_bits(&unrank(n, i)),
                    "layer {n}, index {i}"
                );
            }
        }
    }

    #[test]
    fn small_layer_walk_matches_unrank() {
        for n in 0..=6 {
            let mut count = 0;
            for (i, b) in walk(n, 0, size(n)) {
                assert_eq!(b.seeds(), n);
                assert_eq!(unrank(n, i), b);
                assert_eq!(rank(&b), i);
                count += 1;
            }
            assert_eq!(count, size(n));
        }
    }

    /// The packed rank and step hold up to the largest layer, where a pit or a prefix sum
    /// reaches 48 and a bar slot 59: checked against `unrank`, which walks the binomial
    /// table its own way.
    #[test]
    fn the_largest_layer_ranks_and_steps_like_unrank() {
        let mut pits = [0u8; PITS];
        pits[11] = 48;
        assert_eq!(rank(&Board::from_pits_unchecked(pits)), 0);
        pits[11] = 0;
        pits[0] = 48;
        assert_eq!(rank(&Board::from_pits_unchecked(pits)), size(48) - 1);
        let step = (size(48) / 9973) as usize;
        for i in (0..size(48) - 1).step_by(step) {
            let mut board = unrank(48, i);
            assert_eq!(rank(&board), i);
            assert!(next_in_layer(&mut board));
            assert_eq!(board, unrank(48, i + 1));
        }
        let mut last = unrank(48, size(48) - 1);
        assert!(!next_in_layer(&mut last));
    }
}
