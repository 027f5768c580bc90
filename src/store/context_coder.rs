//! The values' context-model codec: a static model a layer and an ANS coder a block.
//!
//! A value is coded given its *context*: the value stored before it in its block, and
//! whether that value repeats the one before it (the first position of a block has a
//! context of its own). Each context has its own distribution over the layer's `2n + 1`
//! values, counted over the whole layer and quantized to 12-bit frequencies
//! ([`Model::from_counts`]); the frequencies are what a file keeps of the model
//! ([`Model::to_bytes`]), so that the coder and the decoder build the same tables from the
//! same integers. A block is one ANS stream of 16-bit words (`constriction`'s
//! `SmallAnsCoder`), decoded through lookup tables.
//!
//! Why these contexts: measured on the awari rules' layers 20..=24
//! (`examples/codec_study.rs`), the previous value alone leaves 0.33 byte a position of the
//! values with their don't-cares, the run flag takes it to 0.32, a second previous value in
//! full to 0.31 at twenty times the tables; zstd, with the same don't-cares, 0.37.

use constriction::stream::model::{
    SmallContiguousCategoricalEntropyModel, SmallContiguousLookupDecoderModel,
};
use constriction::stream::stack::SmallAnsCoder;
use constriction::stream::{Decode, Encode};
use rayon::prelude::*;

/// Bits of a quantized frequency: each context's frequencies sum to `1 << PRECISION`.
const PRECISION: u32 = 12;
const TOTAL: u32 = 1 << PRECISION;

/// Why a model or a block could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CodecError {
    #[error("the model holds {found} bytes where layer {seeds} needs {expected}")]
    ModelLength {
        seeds: u32,
        found: usize,
        expected: usize,
    },
    #[error(
        "the model's context {context} has frequencies that are zero or do not sum to {TOTAL}"
    )]
    ModelFrequencies { context: usize },
    #[error("a coded block of {0} bytes (not whole 16-bit words)")]
    OddBlock(usize),
    #[error("a coded block does not decode to its positions")]
    Block,
}

/// Symbols of layer `seeds`: the values `−seeds..=seeds`.
pub(crate) fn symbols(seeds: u32) -> usize {
    2 * seeds as usize + 1
}

/// Contexts of layer `seeds`: each previous symbol, with and without a repeat, and the
/// start of a block.
pub(crate) fn contexts(seeds: u32) -> usize {
    2 * symbols(seeds) + 1
}

/// The two symbols before a position in its block, which make its context: the coder
/// and the decoder walk a block with one each.
struct Recent {
    /// Symbols of the layer.
    k: usize,
    before_prev: Option<usize>,
    prev: Option<usize>,
}

impl Recent {
    fn new(seeds: u32) -> Recent {
        Recent {
            k: symbols(seeds),
            before_prev: None,
            prev: None,
        }
    }

    /// The context of the next position.
    #[inline]
    fn context(&self) -> usize {
        match self.prev {
            None => 2 * self.k,
            Some(p) => p + self.k * usize::from(self.before_prev == Some(p)),
        }
    }

    #[inline]
    fn push(&mut self, symbol: usize) {
        (self.before_prev, self.prev) = (self.prev, Some(symbol));
    }
}

/// 16-bit little-endian words of an even number of bytes.
fn words_of(bytes: &[u8]) -> Vec<u16> {
    bytes
        .chunks_exact(2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .collect()
}

/// The bytes of 16-bit words, little-endian.
fn bytes_of(words: &[u16]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The symbol of a value of layer `seeds`.
#[inline]
fn symbol(seeds: u32, v: i8) -> usize {
    (i32::from(v) + seeds as i32) as usize
}

/// Each position's context in a block, in order.
fn block_contexts(seeds: u32, block: &[i8]) -> impl Iterator<Item = usize> + '_ {
    let mut recent = Recent::new(seeds);
    block.iter().map(move |&v| {
        let c = recent.context();
        recent.push(symbol(seeds, v));
        c
    })
}

/// How often each value follows each context, over the blocks given so far.
#[derive(Clone, Debug)]
pub(crate) struct Counts {
    seeds: u32,
    /// `contexts × symbols`, row by row.
    table: Vec<u64>,
}

impl Counts {
    pub(crate) fn new(seeds: u32) -> Counts {
        Counts {
            seeds,
            table: vec![0; contexts(seeds) * symbols(seeds)],
        }
    }

    /// Counts one block's values (each in `−seeds..=seeds`, as a layer's reader checks).
    pub(crate) fn add(&mut self, block: &[i8]) {
        let k = symbols(self.seeds);
        for (c, &v) in block_contexts(self.seeds, block).zip(block) {
            self.table[c * k + symbol(self.seeds, v)] += 1;
        }
    }

    /// The counts of both.
    pub(crate) fn merge(mut self, other: &Counts) -> Counts {
        self.absorb(other);
        self
    }

    /// Adds `other`'s counts to these.
    pub(crate) fn absorb(&mut self, other: &Counts) {
        debug_assert_eq!(self.seeds, other.seeds);
        self.table
            .iter_mut()
            .zip(&other.table)
            .for_each(|(a, b)| *a += b);
    }
}

/// One context's counts quantized: every frequency at least 1 (a value never seen in a
/// context can still be coded there), the sum exactly [`TOTAL`], the rest of the room
/// shared in proportion to the counts and what rounding leaves given to the commonest value.
fn quantize(counts: &[u64]) -> Vec<u16> {
    let k = counts.len() as u64;
    let total: u64 = counts.iter().sum();
    let room = u64::from(TOTAL) - k;
    let mut freqs: Vec<u64> = counts
        .iter()
        .map(|&c| 1 + (c * room).checked_div(total).unwrap_or(0))
        .collect();
    let left = u64::from(TOTAL) - freqs.iter().sum::<u64>();
    let commonest = (0..counts.len())
        .max_by_key(|&i| (counts[i], std::cmp::Reverse(i)))
        .expect("at least one value");
    freqs[commonest] += left;
    freqs.into_iter().map(|f| f as u16).collect()
}

/// A layer's model: its quantized frequencies and the coder's tables built from them.
pub(crate) struct Model {
    seeds: u32,
    /// `contexts × symbols`, row by row, each row summing to [`TOTAL`].
    freqs: Vec<u16>,
    encoders: Vec<SmallContiguousCategoricalEntropyModel>,
    decoders: Vec<SmallContiguousLookupDecoderModel>,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("seeds", &self.seeds)
            .field("contexts", &self.encoders.len())
            .finish()
    }
}

impl Model {
    /// The model of the counted values.
    pub(crate) fn from_counts(counts: &Counts) -> Model {
        let k = symbols(counts.seeds);
        let freqs = counts.table.chunks(k).flat_map(quantize).collect();
        Model::from_freqs(counts.seeds, freqs).expect("quantized frequencies are valid")
    }

    /// The layer the model codes.
    pub(crate) fn seeds(&self) -> u32 {
        self.seeds
    }

    /// Each context's frequencies, one row a context.
    pub(crate) fn frequency_rows(&self) -> std::slice::Chunks<'_, u16> {
        self.freqs.chunks(symbols(self.seeds))
    }

    /// The model a file keeps: its frequencies as 16-bit little-endian integers.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        bytes_of(&self.freqs)
    }

    /// How many bytes [`Model::to_bytes`] gives for layer `seeds`.
    pub(crate) fn bytes_len(seeds: u32) -> usize {
        2 * contexts(seeds) * symbols(seeds)
    }

    /// The model of layer `seeds` from [`Model::to_bytes`].
    ///
    /// # Errors
    ///
    /// [`CodecError::ModelLength`] if the bytes are not one row a context;
    /// [`CodecError::ModelFrequencies`] if a row has a zero or does not sum to 4096.
    pub(crate) fn from_bytes(seeds: u32, bytes: &[u8]) -> Result<Model, CodecError> {
        let expected = Model::bytes_len(seeds);
        if bytes.len() != expected {
            return Err(CodecError::ModelLength {
                seeds,
                found: bytes.len(),
                expected,
            });
        }
        Model::from_freqs(seeds, words_of(bytes))
    }

    fn from_freqs(seeds: u32, freqs: Vec<u16>) -> Result<Model, CodecError> {
        let k = symbols(seeds);
        let mut encoders = Vec::with_capacity(contexts(seeds));
        let mut decoders = Vec::with_capacity(contexts(seeds));
        for (context, row) in freqs.chunks(k).enumerate() {
            let bad = || CodecError::ModelFrequencies { context };
            let sum: u32 = row.iter().map(|&f| u32::from(f)).sum();
            if sum != TOTAL || row.contains(&0) {
                return Err(bad());
            }
            encoders.push(
                SmallContiguousCategoricalEntropyModel::from_nonzero_fixed_point_probabilities(
                    row, false,
                )
                .map_err(|()| bad())?,
            );
            decoders.push(
                SmallContiguousLookupDecoderModel::from_nonzero_fixed_point_probabilities(
                    row, false,
                )
                .map_err(|()| bad())?,
            );
        }
        Ok(Model {
            seeds,
            freqs,
            encoders,
            decoders,
        })
    }

    /// A block's values (each in `−seeds..=seeds`) coded: 16-bit little-endian words.
    pub(crate) fn encode(&self, block: &[i8]) -> Vec<u8> {
        let contexts: Vec<usize> = block_contexts(self.seeds, block).collect();
        let mut coder = SmallAnsCoder::new();
        for (&v, &c) in block.iter().zip(&contexts).rev() {
            coder
                .encode_symbol(symbol(self.seeds, v), &self.encoders[c])
                .expect("every value has a nonzero frequency in every context");
        }
        bytes_of(&coder.into_compressed().expect("a vector takes every word"))
    }

    /// The values of a block coded by [`Model::encode`], one byte each (an `i8` as a
    /// `u8`, as a table's reader keeps them), into `out`, which holds the block's length.
    ///
    /// # Errors
    ///
    /// [`CodecError::OddBlock`] if the bytes are not whole words; [`CodecError::Block`] if
    /// the stream ends before `out` is full or goes on after it. (A block's checksum is
    /// checked before it is decoded: these catch a stream coded with another model.)
    pub(crate) fn decode_into(&self, bytes: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
        if !bytes.len().is_multiple_of(2) {
            return Err(CodecError::OddBlock(bytes.len()));
        }
        let mut coder =
            SmallAnsCoder::from_compressed(words_of(bytes)).map_err(|_| CodecError::Block)?;
        let mut recent = Recent::new(self.seeds);
        for byte in out.iter_mut() {
            let s = coder
                .decode_symbol(&self.decoders[recent.context()])
                .map_err(|_| CodecError::Block)?;
            *byte = (s as i32 - self.seeds as i32) as i8 as u8;
            recent.push(s);
        }
        if !coder.is_empty() {
            return Err(CodecError::Block);
        }
        Ok(())
    }
}

/// Parts a block of don't-cares is cut into: contiguous, each with contexts of its own
/// (its first position has the context of a block's start), decoded side by side so that
/// the processor overlaps their chains of dependent table lookups (a position is decoded
/// only once the previous one, its context, is known). Compression 4 codes each part as
/// its own ANS stream (`Model::encode_split`), compression 5 ranks each part's values
/// (`ranked`).
pub(crate) const SPLIT: usize = 4;

/// The bounds of part `k` of a block of `len` positions cut into [`SPLIT`] parts.
pub(crate) fn part(len: usize, k: usize) -> std::ops::Range<usize> {
    (len * k / SPLIT)..(len * (k + 1) / SPLIT)
}

impl Model {
    /// A block coded as [`SPLIT`] streams, one a part ([`part`]): the word counts of all
    /// but the last stream (16-bit words each), then the streams' words, all little-endian.
    /// Compression 4, which is read but no longer written: here for the tests.
    #[cfg(test)]
    pub(crate) fn encode_split(&self, block: &[i8]) -> Vec<u8> {
        let streams: Vec<Vec<u8>> = (0..SPLIT)
            .map(|k| self.encode(&block[part(block.len(), k)]))
            .collect();
        let mut out = Vec::new();
        for s in &streams[..SPLIT - 1] {
            let words = u16::try_from(s.len() / 2).expect("a part of a block is short");
            out.extend_from_slice(&words.to_le_bytes());
        }
        streams.iter().for_each(|s| out.extend_from_slice(s));
        out
    }

    /// The values of a block coded as `Model::encode_split` codes it (compression 4) into
    /// `out` (its length).
    ///
    /// # Errors
    ///
    /// As [`Model::decode_into`], and [`CodecError::Block`] for word counts that do not
    /// fit the block.
    pub(crate) fn decode_split_into(&self, bytes: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
        if !bytes.len().is_multiple_of(2) {
            return Err(CodecError::OddBlock(bytes.len()));
        }
        let words = words_of(bytes);
        let (counts, mut rest) = words.split_at_checked(SPLIT - 1).ok_or(CodecError::Block)?;
        let mut coders = Vec::with_capacity(SPLIT);
        for k in 0..SPLIT {
            let take = counts.get(k).map_or(rest.len(), |&c| usize::from(c));
            let (stream, after) = rest.split_at_checked(take).ok_or(CodecError::Block)?;
            coders.push(
                SmallAnsCoder::from_compressed(stream.to_vec()).map_err(|_| CodecError::Block)?,
            );
            rest = after;
        }
        let mut coders: [SmallAnsCoder; SPLIT] =
            coders.try_into().map_err(|_| CodecError::Block)?;
        let mut recent: [Recent; SPLIT] = std::array::from_fn(|_| Recent::new(self.seeds));
        let parts: [std::ops::Range<usize>; SPLIT] = std::array::from_fn(|k| part(out.len(), k));
        // The parts differ by a position at most: side by side up to the shortest's end,
        // then each part's last position.
        let shortest = parts.iter().map(|p| p.len()).min().unwrap_or(0);
        let offset = self.seeds as i32;
        for i in 0..shortest {
            for k in 0..SPLIT {
                let s = coders[k]
                    .decode_symbol(&self.decoders[recent[k].context()])
                    .map_err(|_| CodecError::Block)?;
                out[parts[k].start + i] = (s as i32 - offset) as i8 as u8;
                recent[k].push(s);
            }
        }
        for k in 0..SPLIT {
            for i in shortest..parts[k].len() {
                let s = coders[k]
                    .decode_symbol(&self.decoders[recent[k].context()])
                    .map_err(|_| CodecError::Block)?;
                out[parts[k].start + i] = (s as i32 - offset) as i8 as u8;
                recent[k].push(s);
            }
        }
        if coders.iter().any(|c| !c.is_empty()) {
            return Err(CodecError::Block);
        }
        Ok(())
    }
}

/// How a file's blocks are coded, with what its header and model give to decode them.
#[derive(Debug)]
pub(crate) enum Coding {
    /// zstd frames (compression 1 and 2), or no blocks at all (0).
    Zstd,
    /// One ANS stream a block under the context model (compression 3).
    Ans(Model),
    /// [`SPLIT`] ANS streams a block (compression 4).
    Split(Model),
    /// A zstd frame of ranks a block (compression 5).
    Ranked(super::ranked::Ranking),
}

impl Coding {
    /// A block's values into `out` (its length), for the codings with a model.
    ///
    /// # Errors
    ///
    /// As each coding's decoder; [`CodecError::Block`] for [`Coding::Zstd`], whose blocks
    /// the reader decompresses itself.
    pub(crate) fn decode_into(&self, bytes: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
        match self {
            Coding::Zstd => Err(CodecError::Block),
            Coding::Ans(model) => model.decode_into(bytes, out),
            Coding::Split(model) => model.decode_split_into(bytes, out),
            Coding::Ranked(ranking) => ranking.decode_into(bytes, out),
        }
    }
}

/// How the blocks of a values table are coded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Codec {
    /// Each block one zstd frame at [`super::WriteOptions::zstd_level`] (format version 1).
    #[default]
    Zstd,
    /// Each block one ANS stream under a context model of the whole layer, kept in the
    /// file (format version 2; docs/format.md): 11% smaller than zstd at level 9 at the
    /// awari rules' layers 20..=24, but a block decodes about four times slower, so it goes
    /// with blocks of [`super::CONTEXT_BLOCK`] positions.
    Context,
    /// Values with *don't-cares* (format version 2, compression code 5): where a capture
    /// among a position's moves gives its value, the file stores whatever value up to it
    /// codes cheapest (the one stored before it, where not larger), and a probe restores
    /// the true value as the larger of the stored one and the best capture, looking up the
    /// captures' positions in the layers below (and theirs where they keep don't-cares
    /// too). Each value is stored as its rank in its context under a context model of the
    /// layer, kept in the file, and each block of ranks is one zstd frame: a third smaller
    /// than zstd at the awari rules' layers 20..=24, in blocks of
    /// [`super::DEFAULT_BLOCK`]. Written only by [`crate::Database::recode_layer`], which
    /// reads the layers below; read only through a [`crate::Database`]
    /// ([`super::LayerFile::dont_cares`]). Files of compression code 4 (the same values,
    /// coded by ANS) are read too.
    DontCares,
    /// Each value as its rank in its context under a context model of the layer, kept in
    /// the file, each block of ranks one zstd frame, as [`Codec::DontCares`] codes them,
    /// but every value the position's own (format version 2, compression code 6, and 7 for
    /// a pair's high file that keeps some blocks in its low file): 10–11% smaller than
    /// zstd at level 9 for the awari rules' values and the abapa own-row pairs, decoded
    /// about as fast, and read alone. For values and both files of a pair (bounds and
    /// own-row values), not distances; blocks of [`super::DEFAULT_BLOCK`].
    Ranks,
}

impl Codec {
    /// Whether blocks are coded by a context model kept in the file (format version 2).
    pub(crate) fn has_model(self) -> bool {
        self != Codec::Zstd
    }

    /// Whether a table of `kind` may be written with this codec: zstd for any, ranks for
    /// a table of values of any kind (not distances), the others for values alone.
    pub(crate) fn fits(self, kind: super::TableKind) -> bool {
        use super::TableKind;
        match self {
            Codec::Zstd => true,
            Codec::Ranks => kind != TableKind::Distances,
            Codec::Context | Codec::DontCares => kind == TableKind::Values,
        }
    }
}

/// The context model of a layer's values, counted block by block as they will be coded.
pub(crate) fn layer_model(seeds: u32, bytes: &[u8], block_size: u32) -> Model {
    Model::from_counts(&block_counts(seeds, bytes, block_size))
}

/// The counts of `bytes`, cut into blocks of `block_size` from its start, each block's
/// counted as it will be coded (in parallel).
pub(crate) fn block_counts(seeds: u32, bytes: &[u8], block_size: u32) -> Counts {
    bytes
        .par_chunks(block_size as usize)
        .fold(
            || Counts::new(seeds),
            |mut c, block| {
                c.add(&as_values(block));
                c
            },
        )
        .reduce(|| Counts::new(seeds), |a, b| a.merge(&b))
}

/// A block's bytes as the values they hold.
pub(crate) fn as_values(bytes: &[u8]) -> Vec<i8> {
    bytes.iter().map(|&b| b as i8).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// [`Model::decode_into`] as values.
    fn decode(model: &Model, bytes: &[u8], len: usize) -> Result<Vec<i8>, CodecError> {
        let mut out = vec![0u8; len];
        model.decode_into(bytes, &mut out)?;
        Ok(out.into_iter().map(|b| b as i8).collect())
    }

    fn model_of(seeds: u32, blocks: &[Vec<i8>]) -> Model {
        let mut counts = Counts::new(seeds);
        for b in blocks {
            counts.add(b);
        }
        Model::from_counts(&counts)
    }

    /// A block drawn from a source with runs: each value repeats the previous one with
    /// probability 3/4, else is drawn near 0.
    fn runs(seeds: u32, len: usize, mut state: u64) -> Vec<i8> {
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as u32
        };
        let n = seeds as i32;
        let mut out: Vec<i8> = Vec::with_capacity(len);
        for _ in 0..len {
            let fresh = ((next() % 7) as i32 - 3).clamp(-n, n) as i8;
            let v = match out.last() {
                Some(&p) if next() % 4 != 0 => p,
                _ => fresh,
            };
            out.push(v);
        }
        out
    }

    #[test]
    fn quantized_frequencies_are_positive_and_sum_to_the_total() {
        for counts in [
            vec![0u64; 5],
            vec![1, 0, 0],
            vec![1 << 40, 3, 0, 7],
            vec![9; 97],
        ] {
            let q = quantize(&counts);
            assert_eq!(q.len(), counts.len());
            assert!(q.iter().all(|&f| f >= 1), "{q:?}");
            assert_eq!(q.iter().map(|&f| u32::from(f)).sum::<u32>(), TOTAL, "{q:?}");
        }
    }

    #[test]
    fn a_source_with_runs_codes_near_its_model_entropy() {
        let seeds = 20;
        let blocks: Vec<Vec<i8>> = (0..16).map(|i| runs(seeds, 4096, i)).collect();
        let model = model_of(seeds, &blocks);
        let mut counts = Counts::new(seeds);
        blocks.iter().for_each(|b| counts.add(b));
        let k = symbols(seeds);
        let entropy_bits: f64 = counts
            .table
            .chunks(k)
            .map(|row| {
                let t: u64 = row.iter().sum();
                row.iter()
                    .filter(|&&c| c > 0)
                    .map(|&c| c as f64 * (t as f64 / c as f64).log2())
                    .sum::<f64>()
            })
            .sum();
        let coded_bits: f64 = blocks
            .iter()
            .map(|b| 8.0 * model.encode(b).len() as f64)
            .sum();
        assert!(
            coded_bits < 1.03 * entropy_bits + 16.0 * 32.0,
            "coded {coded_bits} bits against an entropy of {entropy_bits}"
        );
        assert!(
            coded_bits > 0.99 * entropy_bits,
            "below the entropy: the count is wrong"
        );
    }

    #[test]
    fn a_model_survives_its_bytes_and_refuses_damaged_ones() {
        let seeds = 7;
        let model = model_of(seeds, &[runs(seeds, 1000, 1)]);
        let bytes = model.to_bytes();
        let back = Model::from_bytes(seeds, &bytes).expect("its own bytes");
        assert_eq!(back.freqs, model.freqs);
        assert!(matches!(
            Model::from_bytes(seeds + 1, &bytes),
            Err(CodecError::ModelLength { .. })
        ));
        let mut zero = bytes.clone();
        // The first context's first frequency set to 0, its second raised to keep the sum.
        let (a, b) = (
            u16::from_le_bytes([zero[0], zero[1]]),
            u16::from_le_bytes([zero[2], zero[3]]),
        );
        zero[0..2].copy_from_slice(&0u16.to_le_bytes());
        zero[2..4].copy_from_slice(&(a + b).to_le_bytes());
        assert_eq!(
            Model::from_bytes(seeds, &zero).unwrap_err(),
            CodecError::ModelFrequencies { context: 0 }
        );
        let mut sum = bytes;
        sum[0] ^= 1;
        assert!(matches!(
            Model::from_bytes(seeds, &sum),
            Err(CodecError::ModelFrequencies { context: 0 })
        ));
    }

    #[test]
    fn a_block_of_odd_length_is_refused() {
        let model = model_of(3, &[vec![0, 1, -1]]);
        assert_eq!(decode(&model, &[1, 2, 3], 3), Err(CodecError::OddBlock(3)));
    }

    proptest! {
        /// Any block round-trips, under a model of its own values or of other values (a
        /// value never counted still has a frequency), in each way a block is coded.
        #[test]
        fn blocks_round_trip(
            seeds in 0u32..=48,
            raw in proptest::collection::vec(any::<i8>(), 0..3000),
            own in any::<bool>(),
        ) {
            let n = seeds as i32;
            let block: Vec<i8> = raw.iter().map(|&v| (i32::from(v) % (n + 1)) as i8).collect();
            let model = if own {
                model_of(seeds, std::slice::from_ref(&block))
            } else {
                model_of(seeds, &[runs(seeds, 500, 9)])
            };
            let coded = model.encode(&block);
            prop_assert_eq!(decode(&model, &coded, block.len()).expect("decodes"), block.clone());
            // In parts, as don't-cares are coded: the same values back, and a block cut
            // inside its word counts refused. (A block's checksum catches other damage: an
            // ANS stream has no redundancy of its own to tell.)
            let split = model.encode_split(&block);
            let mut out = vec![0u8; block.len()];
            model.decode_split_into(&split, &mut out).expect("decodes");
            prop_assert_eq!(as_values(&out), block.clone());
            prop_assert!(model.decode_split_into(&split[..4], &mut out).is_err());
            // As ranks in a zstd frame (compression 5), under the same model's ranking.
            let ranking = super::super::ranked::Ranking::of(&model);
            let mut out = vec![0u8; block.len()];
            ranking.decode_into(&ranking.encode(&block), &mut out).expect("decodes");
            prop_assert_eq!(as_values(&out), block.clone());
        }
    }
}
