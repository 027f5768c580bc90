//! The lean pass's working state: four bits a position, two positions a byte.
//!
//! Bits 0..=2 hold the count of in-layer moves whose child is not yet known to be in `W`
//! (0..=6), or 7 once the position is settled; bit 3 says its best exit is `≤ −t` at the
//! current threshold ("low exit"). Settled positions need nothing more here: their value
//! and round are in the run logs. A nibble is updated by compare-and-swap on its byte,
//! so two threads updating the two halves of a byte never lose a write. (bitvec has no
//! compare-and-swap on a field of bits; this is the one structure it would have held.)
//!
//! In a reachability game of the own-row values (`super::Game::Reach`) a position is two
//! nodes, one in `W` and one in `L`, which may both enter at the same threshold (the
//! thresholds run below 0 there): the nibble is then the `L` node's alone, and the `W`
//! node is one bit more, after the nibbles (`1/8` byte a position), set by an atomic or.

use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

pub(crate) const SETTLED: u8 = 7;
pub(crate) const LOW_EXIT: u8 = 8;

#[inline]
pub(crate) fn is_settled(nib: u8) -> bool {
    nib & 7 == SETTLED
}

/// What an update did to a position.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Update {
    /// It was settled already, or stays unsettled.
    Nothing,
    /// This update settled it.
    Settled,
}

pub(crate) struct Nibbles {
    bytes: Vec<AtomicU8>,
    /// Where the `W` bits start in `bytes`, for the two nodes of a reachability game.
    won_at: Option<usize>,
}

impl Nibbles {
    /// `positions` nibbles, all zero; with `won_bits`, a `W` bit a position besides, all
    /// clear.
    pub fn new(positions: u64, won_bits: bool) -> Nibbles {
        let len = Self::bytes_for(positions, won_bits) as usize;
        let mut bytes = Vec::with_capacity(len);
        bytes.resize_with(len, || AtomicU8::new(0));
        Nibbles {
            bytes,
            won_at: won_bits.then(|| positions.div_ceil(2) as usize),
        }
    }

    /// Bytes of state for `positions` positions, with the `W` bits or not.
    pub fn bytes_for(positions: u64, won_bits: bool) -> u64 {
        positions.div_ceil(2) + if won_bits { positions.div_ceil(8) } else { 0 }
    }

    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: AtomicU8 has the size, alignment and bit validity of u8, and the
        // exclusive borrow rules out any atomic access while the bytes are in use.
        unsafe { &mut *(self.bytes.as_mut_slice() as *mut [AtomicU8] as *mut [u8]) }
    }

    /// The bytes, for a snapshot; `&mut` so no update runs meanwhile.
    pub fn snapshot(&mut self) -> &[u8] {
        self.as_bytes_mut()
    }

    #[cfg(test)]
    pub fn get(&self, i: u64) -> u8 {
        (self.bytes[(i >> 1) as usize].load(Relaxed) >> ((i & 1) * 4)) & 0xF
    }

    #[inline]
    pub fn prefetch(&self, i: u64) {
        crate::solve::prefetch(&self.bytes[(i >> 1) as usize]);
        if let Some(at) = self.won_at {
            crate::solve::prefetch(&self.bytes[at + (i / 8) as usize]);
        }
    }

    /// Replaces nibble `i` by `f(nibble)` atomically, retrying if the byte changed; `f`
    /// returns None to leave it. Returns what `f` last returned.
    #[inline]
    fn update(&self, i: u64, mut f: impl FnMut(u8) -> Option<u8>) -> Option<u8> {
        let cell = &self.bytes[(i >> 1) as usize];
        let shift = (i & 1) * 4;
        let mut byte = cell.load(Relaxed);
        loop {
            let next = f((byte >> shift) & 0xF)?;
            let new = (byte & !(0xF << shift)) | (next << shift);
            match cell.compare_exchange_weak(byte, new, Relaxed, Relaxed) {
                Ok(_) => return Some(next),
                Err(now) => byte = now,
            }
        }
    }

    /// A child of `i` entered `L`: `i` enters `W` unless it is settled (its `W` bit, in a
    /// reachability game).
    #[inline]
    pub fn settle(&self, i: u64) -> Update {
        if let Some(at) = self.won_at {
            let bit = 1u8 << (i % 8);
            let before = self.bytes[at + (i / 8) as usize].fetch_or(bit, Relaxed);
            return if before & bit == 0 {
                Update::Settled
            } else {
                Update::Nothing
            };
        }
        match self.update(i, |n| (!is_settled(n)).then_some(SETTLED)) {
            Some(_) => Update::Settled,
            None => Update::Nothing,
        }
    }

    /// `i`'s best exit is `−t` at threshold `t`: from now on it is a low exit, and with no
    /// in-layer move left `i` enters `L`.
    #[inline]
    pub fn mark_low_exit(&self, i: u64) -> Update {
        let done = self.update(i, |n| {
            if is_settled(n) {
                return None;
            }
            Some(if n & 7 == 0 { SETTLED } else { n | LOW_EXIT })
        });
        match done {
            Some(n) if is_settled(n) => Update::Settled,
            _ => Update::Nothing,
        }
    }

    /// A child of `i` entered `W`: one way out fewer; with none left and a low exit, `i`
    /// enters `L`.
    #[inline]
    pub fn count_down(&self, i: u64) -> Update {
        let done = self.update(i, |n| {
            if is_settled(n) {
                return None;
            }
            let left = (n & 7) - 1;
            Some(if left == 0 && n & LOW_EXIT != 0 {
                SETTLED
            } else {
                left | (n & LOW_EXIT)
            })
        });
        match done {
            Some(n) if is_settled(n) => Update::Settled,
            _ => Update::Nothing,
        }
    }
}

/// Nibble `i` of `bytes` (for passes that own a range of the state).
#[inline]
pub(crate) fn get_in(bytes: &[u8], i: usize) -> u8 {
    (bytes[i >> 1] >> ((i & 1) * 4)) & 0xF
}

/// Sets nibble `i` of `bytes`.
#[inline]
pub(crate) fn set_in(bytes: &mut [u8], i: usize, nib: u8) {
    let shift = (i & 1) * 4;
    bytes[i >> 1] = (bytes[i >> 1] & !(0xF << shift)) | (nib << shift);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counting_down_settles_only_with_a_low_exit() {
        let mut n = Nibbles::new(3, false);
        set_in(n.as_bytes_mut(), 0, 2 | LOW_EXIT);
        set_in(n.as_bytes_mut(), 1, 1);
        set_in(n.as_bytes_mut(), 2, 3);
        assert_eq!(n.count_down(0), Update::Nothing);
        assert_eq!(n.get(0), 1 | LOW_EXIT);
        assert_eq!(n.count_down(0), Update::Settled);
        assert_eq!(n.count_down(1), Update::Nothing);
        assert_eq!(n.get(1), 0);
        assert_eq!(n.settle(1), Update::Settled);
        assert_eq!(n.settle(1), Update::Nothing);
        assert_eq!(n.get(2), 3, "the neighbour in the same byte is untouched");
    }

    /// In a reachability game the `W` bit is apart from the nibble: a position enters `W`
    /// once, and its `L` node counts down and settles as before, whatever its bit.
    #[test]
    fn the_two_nodes_of_a_position_settle_apart() {
        let mut n = Nibbles::new(9, true);
        assert_eq!(n.as_bytes_mut().len(), 5 + 2);
        set_in(n.as_bytes_mut(), 8, 1 | LOW_EXIT);
        assert_eq!(n.settle(8), Update::Settled);
        assert_eq!(n.settle(8), Update::Nothing);
        assert_eq!(n.get(8), 1 | LOW_EXIT, "the L node is untouched");
        assert_eq!(n.count_down(8), Update::Settled);
        assert_eq!(
            n.settle(7),
            Update::Settled,
            "the neighbour's bit is its own"
        );
        assert_eq!(n.as_bytes_mut()[5..], [0x80, 0x01]);
    }
}
