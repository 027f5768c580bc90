//! What the examples share: every position of the lowest layers in batches, and a fixed
//! sample of positions drawn uniformly from a range of layers.

use awari::{index, Board};

/// `count` positions drawn uniformly from layers `from..=top` (every position of those
/// layers equally likely), by SplitMix64 from a fixed seed: the same boards every run.
pub fn uniform_boards(from: u32, top: u32, count: usize) -> Vec<Board> {
    let base = from.checked_sub(1).map_or(0, index::size_up_to);
    let span = index::size_up_to(top) - base;
    let mut state = 0x5EED_5A4E_u64;
    (0..count)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            let at = base + (z ^ (z >> 31)) % span;
            let mut n = from;
            while at >= index::size_up_to(n) {
                n += 1;
            }
            index::unrank(n, at - (index::size_up_to(n) - index::size(n)))
        })
        .collect()
}

/// Calls `f` with every position of layers `0..=top`, in index order, in batches of at most
/// 4 Mi boards; stops at its first error. What `f` returns is summed.
#[allow(dead_code)] // Not every example that shares this module walks whole layers.
pub fn sum_over_layers<E>(
    top: u32,
    mut f: impl FnMut(&[Board]) -> Result<u64, E>,
) -> Result<u64, E> {
    let mut sum = 0;
    for n in 0..=top {
        let size = index::size(n);
        let mut start = 0;
        while start < size {
            let end = (start + (1 << 22)).min(size);
            let boards: Vec<Board> = index::walk(n, start, end).map(|(_, b)| b).collect();
            sum += f(&boards)?;
            start = end;
        }
    }
    Ok(sum)
}
