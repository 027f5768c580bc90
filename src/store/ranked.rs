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

/// Entries of [`Ranking::steps`]: a row of 256 (one for each rank a byte can hold, so that
/// a damaged rank reads inside its row) for each of up to 256 contexts. Indexed by a `u16`,
/// a step needs no bounds check.
const STEPS: usize = 1 << 16;

// Every context of every layer fits a byte: `2k + 1` contexts of `k = 2·seeds + 1` symbols.
const _: () = assert!(2 * (2 * crate::board::MAX_SEEDS as usize + 1) < 256);

/// What a rank no symbol has decodes to: a byte no layer's value has (every value is within
/// `−48..=48`), found after the block is decoded ([`Ranking::decode_into`]).
const DAMAGED: u8 = i8::MAX as u8;

/// A layer's ranking: in each context, its symbols (the values `−seeds..=seeds` as
/// `0..=2·seeds`) from the commonest to the rarest, ties to the smaller symbol.
pub(crate) struct Ranking {
    seeds: u32,
    /// Symbols of the layer.
    k: usize,
    /// `rank_of[context · k + symbol]`: the symbol's rank in that context.
    rank_of: Vec<u8>,
    /// `steps[rank << 8 | context]`: the value of that rank in that context as a byte,
    /// `<< 8`, or'ed with the context after it. A part's whole state is the step it last
    /// took, whose low byte picks the next step's entry in the rank's row: each position
    /// costs one read that waits on the one before (where a table of symbols and the
    /// context worked out from them took more than twice as long, docs/measurements.md).
    steps: Box<[u16; STEPS]>,
}

impl std::fmt::Debug for Ranking {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ranking")
            .field("seeds", &self.seeds)
            .finish_non_exhaustive()
    }
}

impl Ranking {
    /// The ranking of a layer's context model, from its frequencies.
    pub(crate) fn of(model: &Model) -> Ranking {
        let seeds = model.seeds();
        let k = symbols(seeds);
        let mut rank_of = vec![0u8; contexts(seeds) * k];
        let mut steps: Box<[u16; STEPS]> = vec![u16::from(DAMAGED) << 8; STEPS]
            .into_boxed_slice()
            .try_into()
            .expect("STEPS entries");
        for (context, freqs) in model.frequency_rows().enumerate() {
            let mut order: Vec<usize> = (0..k).collect();
            order.sort_by_key(|&s| (std::cmp::Reverse(freqs[s]), s));
            for (rank, &s) in order.iter().enumerate() {
                rank_of[context * k + s] = rank as u8;
                let next = Walk::after(k, context, s);
                let value = (s as i32 - seeds as i32) as i8 as u8;
                steps[rank << 8 | context] = u16::from(value) << 8 | next as u16;
            }
        }
        Ranking {
            seeds,
            k,
            rank_of,
            steps,
        }
    }

    /// A block's values (each in `−seeds..=seeds`) as ranks, in a zstd frame.
    pub(crate) fn encode(&self, block: &[i8]) -> Vec<u8> {
        let mut ranks = Vec::with_capacity(block.len());
        for lane in 0..SPLIT {
            let mut context = Walk::START * self.k;
            for &v in &block[part(block.len(), lane)] {
                let s = (i32::from(v) + self.seeds as i32) as usize;
                ranks.push(self.rank_of[context * self.k + s]);
                context = Walk::after(self.k, context, s);
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
        let lanes = split_parts(out);
        let start = (Walk::START * self.k) as u16;
        let mut last = [start; SPLIT];
        let step = |last: &mut u16, at: &mut u8| {
            *last = self.steps[usize::from(u16::from(*at) << 8 | (*last & 0xFF))];
            *at = (*last >> 8) as u8;
        };
        // The parts differ by a position at most: side by side up to the shortest's end
        // (the lanes' chains of reads overlap), then each part's last position.
        let shortest = part(len, 0).len().min(part(len, SPLIT - 1).len());
        let [a, b, c, d] = lanes;
        let (a0, a1) = a.split_at_mut(shortest);
        let (b0, b1) = b.split_at_mut(shortest);
        let (c0, c1) = c.split_at_mut(shortest);
        let (d0, d1) = d.split_at_mut(shortest);
        for (((a, b), c), d) in a0.iter_mut().zip(b0).zip(c0).zip(d0) {
            step(&mut last[0], a);
            step(&mut last[1], b);
            step(&mut last[2], c);
            step(&mut last[3], d);
        }
        for (tail, last) in [a1, b1, c1, d1].into_iter().zip(&mut last) {
            tail.iter_mut().for_each(|at| step(last, at));
        }
        match out.contains(&DAMAGED) {
            true => Err(CodecError::Block),
            false => Ok(()),
        }
    }
}

/// The context model's contexts (`context_coder`) as a part's symbols go by: `START · k`
/// before the first, then the previous symbol, plus `k` where it repeats the one before it.
struct Walk;

impl Walk {
    /// The context of a part's first position, in units of `k`.
    const START: usize = 2;

    /// The context after `symbol` is read in `context`.
    fn after(k: usize, context: usize, symbol: usize) -> usize {
        let previous = (context < Walk::START * k).then_some(context % k);
        symbol + k * usize::from(previous == Some(symbol))
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
        assert_eq!((r.steps[one] >> 8) as u8 as i8, one as i8 - seeds as i8);
        assert_eq!(r.steps[one] & 0xFF, (one + k) as u16);
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
