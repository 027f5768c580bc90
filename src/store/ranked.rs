//! Values with don't-cares as *ranks*, then zstd (compression code 5): the codec that
//! `Codec::DontCares` writes.
//!
//! Each value is replaced by its rank among the layer's values in its context, the
//! commonest first: the context is the one of the context model (`context_coder`: the
//! value before it, and whether that one repeats the value before it), and the order is
//! read from that model's frequencies, which the file keeps as for compression 3 and 4.
//! About half of a layer's ranks are then 0 and three in five at most 1, and a zstd frame a
//! block codes them at about the model's entropy: at the awari rules' layer 20, 0.323 byte
//! a position in blocks of 16,384 at level 15 where the ANS coder of compression 4 takes
//! 0.326 in blocks of 4,096. What it buys is the decode: zstd's, then one table lookup a
//! position, in [`SPLIT`] parts of a block side by side (each part's contexts start
//! afresh), where the ANS coder spent about 6 ns a position (docs/measurements.md).

use super::context_coder::{contexts, part, symbols, CodecError, Model, SPLIT};
use super::zstd_contexts;

/// The zstd level of the blocks: at the awari rules' layer 20, level 9 gives 0.366 byte a
/// position, 12 gives 0.327, 15 gives 0.323 and 19 no better.
pub(crate) const RANKED_LEVEL: i32 = 15;

/// A row of [`Ranking::symbol_of`]: one entry for each rank a byte can hold, so that a
/// damaged rank reads inside its row (and is caught, [`Ranking::decode_into`]).
const ROW: usize = 256;

/// A layer's ranking: in each context, its symbols (the values `−seeds..=seeds` as
/// `0..=2·seeds`) from the commonest to the rarest, ties to the smaller symbol.
#[derive(Debug)]
pub(crate) struct Ranking {
    seeds: u32,
    /// Symbols of the layer.
    k: usize,
    /// `rank_of[context · k + symbol]`: the symbol's rank in that context.
    rank_of: Vec<u8>,
    /// `symbol_of[context · ROW + rank]`: the symbol of that rank (0 past the last rank).
    symbol_of: Vec<u8>,
}

impl Ranking {
    /// The ranking of a layer's context model, from its frequencies.
    pub(crate) fn of(model: &Model) -> Ranking {
        let seeds = model.seeds();
        let k = symbols(seeds);
        let mut rank_of = vec![0u8; contexts(seeds) * k];
        let mut symbol_of = vec![0u8; contexts(seeds) * ROW];
        for (context, freqs) in model.frequency_rows().enumerate() {
            let mut order: Vec<usize> = (0..k).collect();
            order.sort_by_key(|&s| (std::cmp::Reverse(freqs[s]), s));
            for (rank, &s) in order.iter().enumerate() {
                rank_of[context * k + s] = rank as u8;
                symbol_of[context * ROW + rank] = s as u8;
            }
        }
        Ranking {
            seeds,
            k,
            rank_of,
            symbol_of,
        }
    }

    /// A block's values (each in `−seeds..=seeds`) as ranks, in a zstd frame.
    pub(crate) fn encode(&self, block: &[i8]) -> Vec<u8> {
        let mut ranks = Vec::with_capacity(block.len());
        for lane in 0..SPLIT {
            let mut walk = Walk::new(self.k);
            for &v in &block[part(block.len(), lane)] {
                let s = (i32::from(v) + self.seeds as i32) as usize;
                ranks.push(self.rank_of[walk.context * self.k + s]);
                walk.push(s);
            }
        }
        zstd_contexts::compress(&ranks, RANKED_LEVEL)
    }

    /// The values of a block coded by [`Ranking::encode`], one byte each (an `i8` as a
    /// `u8`), into `out`, which holds the block's length.
    ///
    /// # Errors
    ///
    /// [`CodecError::Block`] if the frame does not decompress to exactly `out`'s length,
    /// or holds a rank that no symbol has. (A block's checksum is checked before it is
    /// decoded: these catch a frame coded under another ranking.)
    pub(crate) fn decode_into(&self, bytes: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
        match zstd_contexts::decompress_to_buffer(bytes, out) {
            Ok(len) if len == out.len() => {}
            _ => return Err(CodecError::Block),
        }
        let len = out.len();
        let mut lanes = split_parts(out);
        let mut walks = [Walk::new(self.k); SPLIT];
        let offset = self.seeds as u8;
        let mut bad = false;
        let mut step = |lane: &mut [u8], walk: &mut Walk, at: usize| {
            let rank = usize::from(lane[at]);
            bad |= rank >= self.k;
            let s = self.symbol_of[walk.context * ROW + rank];
            lane[at] = s.wrapping_sub(offset);
            walk.push(usize::from(s));
        };
        // The parts differ by a position at most: side by side up to the shortest's end
        // (the lanes' chains of lookups overlap), then each part's last position.
        let shortest = part(len, 0).len().min(part(len, SPLIT - 1).len());
        for at in 0..shortest {
            for (lane, walk) in lanes.iter_mut().zip(&mut walks) {
                step(lane, walk, at);
            }
        }
        for (lane, walk) in lanes.iter_mut().zip(&mut walks) {
            for at in shortest..lane.len() {
                step(lane, walk, at);
            }
        }
        match bad {
            true => Err(CodecError::Block),
            false => Ok(()),
        }
    }
}

/// A part's context as its symbols go by: the context model's (`context_coder`), kept
/// in two integers.
#[derive(Clone, Copy)]
struct Walk {
    k: usize,
    /// The context of the next position: `2k` at the start of a part, then the previous
    /// symbol, plus `k` where it repeats the one before it.
    context: usize,
    /// The previous symbol (`usize::MAX` before the first).
    previous: usize,
}

impl Walk {
    fn new(k: usize) -> Walk {
        Walk {
            k,
            context: 2 * k,
            previous: usize::MAX,
        }
    }

    #[inline(always)]
    fn push(&mut self, symbol: usize) {
        self.context = symbol + self.k * usize::from(symbol == self.previous);
        self.previous = symbol;
    }
}

/// A block's [`SPLIT`] parts ([`part`]), each its own slice.
fn split_parts(out: &mut [u8]) -> [&mut [u8]; SPLIT] {
    let len = out.len();
    let mut rest = out;
    std::array::from_fn(|lane| {
        let (this, after) = std::mem::take(&mut rest).split_at_mut(part(len, lane).len());
        rest = after;
        this
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::context_coder::Counts;

    fn ranking_of(seeds: u32, blocks: &[&[i8]]) -> Ranking {
        let mut counts = Counts::new(seeds);
        blocks.iter().for_each(|b| counts.add(b));
        Ranking::of(&Model::from_counts(&counts))
    }

    fn decode(ranking: &Ranking, bytes: &[u8], len: usize) -> Result<Vec<i8>, CodecError> {
        let mut out = vec![0u8; len];
        ranking.decode_into(bytes, &mut out)?;
        Ok(out.into_iter().map(|b| b as i8).collect())
    }

    #[test]
    fn the_commonest_value_of_a_context_ranks_first() {
        // After a 1 comes a 1 (a repeat) more often than anything else, so in the context
        // "a 1, not repeated" symbol 1 + seeds ranks 0; a 0 follows a repeated 1.
        let block: Vec<i8> = [1, 1, 0, 1, 1, 0, 1, 1, 0, -1].to_vec();
        let seeds = 1;
        let r = ranking_of(seeds, &[&block]);
        let k = symbols(seeds);
        let one = 2;
        assert_eq!(r.rank_of[one * k + one], 0);
        assert_eq!(r.rank_of[(one + k) * k + 1], 0);
        assert_eq!(r.symbol_of[one * ROW], one as u8);
    }

    #[test]
    fn frames_of_the_wrong_length_or_with_a_rank_no_symbol_has_are_refused() {
        let seeds = 2;
        let block: Vec<i8> = (0..100).map(|i| (i % 5 - 2) as i8).collect();
        let r = ranking_of(seeds, &[&block]);
        let coded = r.encode(&block);
        assert_eq!(decode(&r, &coded, block.len()), Ok(block.clone()));
        assert_eq!(decode(&r, &coded, block.len() - 1), Err(CodecError::Block));
        assert_eq!(decode(&r, &coded, block.len() + 1), Err(CodecError::Block));
        assert_eq!(decode(&r, &coded[1..], block.len()), Err(CodecError::Block));
        // Layer 2 has 5 symbols: ranks 0..=4. A 5 anywhere is damage, and so is 255.
        for bad in [5u8, 255] {
            let mut ranks = vec![0u8; 100];
            ranks[37] = bad;
            let frame = zstd_contexts::compress(&ranks, RANKED_LEVEL);
            assert_eq!(
                decode(&r, &frame, 100),
                Err(CodecError::Block),
                "rank {bad}"
            );
        }
    }

    // Blocks round-trip under any model's ranking: `context_coder`'s proptest, which
    // codes each block every way a block is coded.
}
