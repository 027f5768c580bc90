//! Random-board strategies shared by the property tests.

// Each test binary compiles this module on its own and uses only part of it.
#![allow(dead_code)]

use awari::Board;
use proptest::prelude::*;

/// A random board of `n` seeds: `n` cut into 12 pits at 11 sorted cut points in 0..=n.
pub fn board_of(n: u8) -> impl Strategy<Value = Board> {
    proptest::collection::vec(0..=n, 11).prop_map(move |mut cuts| {
        cuts.sort_unstable();
        let mut pits = [0u8; 12];
        let mut prev = 0;
        for (i, &c) in cuts.iter().enumerate() {
            pits[i] = c - prev;
            prev = c;
        }
        pits[11] = n - prev;
        Board::new(pits).unwrap()
    })
}

/// A random board of up to 48 seeds: a random total, then a random placement.
pub fn any_board() -> impl Strategy<Value = Board> {
    (0u8..=48).prop_flat_map(board_of)
}
