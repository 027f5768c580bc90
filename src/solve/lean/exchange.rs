//! How the ranks of a partitioned lean pass talk. A single process is one rank that owns
//! the whole layer and never sends anything ([`Alone`]); an MPI job (feature `mpi`) has one
//! rank per process, each owning a contiguous share of the pass's numbering.
//!
//! Every method is collective: every rank calls it, in the same order, from the thread
//! that drives the pass (never from a worker thread).

/// The collectives the partitioned pass needs.
pub(crate) trait Exchange: Sync {
    /// This rank, `0..ranks()`.
    fn rank(&self) -> usize;
    /// How many ranks share the layer.
    fn ranks(&self) -> usize;
    /// Sends `send[d]` to rank `d` and returns what every rank sent this one, in rank
    /// order (what this rank sent itself included), each rank's part in any order.
    fn all_to_all(&self, send: &[Vec<u64>]) -> Vec<u64>;
    /// Sends `send[d]` to rank `d` as they are (bytes already packed) and returns what
    /// every rank sent this one, in rank order (what this rank sent itself included).
    fn all_to_all_bytes(&self, send: Vec<Vec<u8>>) -> Vec<Vec<u8>>;
    /// The sum of `x` over the ranks, on every rank.
    fn sum(&self, x: u64) -> u64;
    /// The largest `x` of any rank, on every rank.
    fn max(&self, x: u64) -> u64;
    /// Every rank's `send` on rank 0, in rank order (nothing on the others), as they are:
    /// bytes already as small as they get (compressed table blocks).
    fn gather_bytes(&self, send: Vec<u8>) -> Vec<Vec<u8>>;
    /// Bytes this rank has sent to other ranks so far.
    fn bytes_sent(&self) -> u64;
    /// Bytes this rank has received from other ranks so far.
    fn bytes_received(&self) -> u64;
}

/// A single process: one rank, nothing to send.
pub(crate) struct Alone;

impl Exchange for Alone {
    fn rank(&self) -> usize {
        0
    }
    fn ranks(&self) -> usize {
        1
    }
    fn all_to_all(&self, send: &[Vec<u64>]) -> Vec<u64> {
        send.concat()
    }
    fn all_to_all_bytes(&self, send: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        send
    }
    fn sum(&self, x: u64) -> u64 {
        x
    }
    fn max(&self, x: u64) -> u64 {
        x
    }
    fn gather_bytes(&self, send: Vec<u8>) -> Vec<Vec<u8>> {
        vec![send]
    }
    fn bytes_sent(&self) -> u64 {
        0
    }
    fn bytes_received(&self) -> u64 {
        0
    }
}

/// The first position (in the pass's numbering) of each rank's share of a layer of `size`
/// positions, and `size` at the end: `ranks + 1` bounds. Shares start at multiples of
/// 2^16, so slices, chunks and the nibbles' bytes never straddle two ranks.
pub(crate) fn shares(size: u64, ranks: usize) -> Vec<u64> {
    const ALIGN: u64 = 1 << 16;
    (0..=ranks as u64)
        .map(|r| {
            if r == ranks as u64 {
                size
            } else {
                (size as u128 * r as u128 / ranks as u128) as u64 / ALIGN * ALIGN
            }
        })
        .collect()
}

/// The rank whose share holds position `q`.
#[inline]
pub(crate) fn owner(bounds: &[u64], q: u64) -> usize {
    bounds.partition_point(|&b| b <= q) - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_the_layer_in_aligned_pieces() {
        for size in [1u64, 5, 65_536, 1_000_000, 417_225_900] {
            for ranks in 1..=5 {
                let b = shares(size, ranks);
                assert_eq!((b[0], b[ranks]), (0, size));
                assert!(b.windows(2).all(|w| w[0] <= w[1]));
                assert!(b[..ranks].iter().all(|x| x % (1 << 16) == 0));
                for q in [0, size / 2, size - 1] {
                    let r = owner(&b, q);
                    assert!(b[r] <= q && q < b[r + 1]);
                }
            }
        }
    }
}
