//! Fixed pseudo-random samples shared by the benches, so every run measures the same
//! positions.

// Each bench compiles this module on its own and uses only part of it.
#![allow(dead_code)]

use awari::index::{size, unrank};
use awari::Board;

/// SplitMix64: a fixed, dependency-free pseudo-random stream.
pub struct SplitMix(pub u64);

impl SplitMix {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// `count` uniform indices of layer `n` (modulo bias is negligible below 2^39 out of 2^64).
pub fn indices(n: u32, count: usize, seed: u64) -> Vec<u64> {
    let mut rng = SplitMix(seed);
    (0..count).map(|_| rng.next() % size(n)).collect()
}

/// `count` uniform positions of layer `n`.
pub fn positions(n: u32, count: usize, seed: u64) -> Vec<Board> {
    indices(n, count, seed)
        .into_iter()
        .map(|i| unrank(n, i))
        .collect()
}
