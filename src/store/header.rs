//! The one definition of a table file's header: its fields, their offsets, and the code
//! that writes and reads them. The writer and the reader both go through [`Header`], so
//! they cannot drift apart.

use super::{Codec, LayerSummary, TableKind, HISTOGRAM_LEN};
use crate::rules::Rules;
use xxhash_rust::xxh3::xxh3_64;

/// First bytes of every table file.
pub const MAGIC: [u8; 8] = *b"AWARIDB\0";
/// The newest format version this program writes and reads. Version 1 files hold zstd
/// blocks (or none); version 2 adds the context-model codecs ([`crate::store::Codec::Context`]
/// and [`crate::store::Codec::DontCares`]), and a file is version 2 exactly when it uses
/// one, so a file of zstd blocks is written byte for byte as before.
pub const VERSION: u32 = 2;
/// The version of a file that uses no context-model codec.
pub(crate) const VERSION_ZSTD: u32 = 1;
/// Index kind 1: every placement of the layer's seeds (stars and bars).
pub(crate) const INDEX_FULL: u8 = 1;
/// Compression 1: each block is one zstd frame.
pub(crate) const COMPRESSION_ZSTD: u8 = 1;
/// Compression 0: the table keeps no entries and has no blocks (a distances table of a
/// layer built without its distances).
pub(crate) const COMPRESSION_NONE: u8 = 0;
/// Compression 2, only for the high file of a pair ([`TableKind::low_of_pair`]): zstd
/// blocks as code 1, except that a block of length 0 is the pair's low file's block of the
/// same number (the same positions hold the same bytes there: an exact stretch), its
/// checksum the low block's. An exact layer's pair thus costs one file of blocks.
pub(crate) const COMPRESSION_SHARED: u8 = 2;
/// Compression 3, only for values (format version 2): each block is one ANS stream under
/// the layer's context model (`context_coder`), which lies between the header and the
/// first block, followed by its own xxh3-64 checksum.
pub(crate) const COMPRESSION_CONTEXT: u8 = 3;
/// Compression 4, only for values (format version 2): blocks and model as code 3, but the
/// values stored are *don't-cares* where a capture among the position's moves gives its
/// value: each stored value is at most the true one, which is the larger of it and the
/// position's best capture (`probe::dont_cares` restores it from the layers below).
/// Read, no longer written: [`COMPRESSION_RANKED`] replaced it.
pub(crate) const COMPRESSION_DONT_CARES: u8 = 4;
/// Compression 5, only for values (format version 2): values with don't-cares as code 4,
/// and the model as code 3, but each block is one zstd frame of the values' ranks under
/// that model (`ranked`): as small as code 4, decoded about three times faster.
pub(crate) const COMPRESSION_RANKED: u8 = 5;
/// Compression 6 (format version 2), for values and both files of a pair: blocks and
/// model as code 5, but every value stored is the position's own (no don't-cares), so the
/// file reads alone, as a zstd file does.
pub(crate) const COMPRESSION_RANKS: u8 = 6;
/// Compression 7 (format version 2), only for the high file of a pair: blocks and model as
/// code 6, except that a block of length 0 is the low file's block of the same number, as
/// in code 2, read and decoded by the low file (under its own model).
pub(crate) const COMPRESSION_RANKS_SHARED: u8 = 7;

/// Whether a file of this compression code keeps a context model between its header and
/// its first block (codes 3 to 7: format version 2).
pub(crate) fn has_model(compression: u8) -> bool {
    matches!(
        compression,
        COMPRESSION_CONTEXT
            | COMPRESSION_DONT_CARES
            | COMPRESSION_RANKED
            | COMPRESSION_RANKS
            | COMPRESSION_RANKS_SHARED
    )
}

/// Whether a file of this compression code may keep some of its blocks in its pair's low
/// file (codes 2 and 7).
pub(crate) fn shares_blocks(compression: u8) -> bool {
    matches!(compression, COMPRESSION_SHARED | COMPRESSION_RANKS_SHARED)
}

/// The compression code a table written with `codec` says: `shares` where some of its
/// blocks are its pair's low file's.
pub(crate) fn compression_code(codec: Codec, shares: bool) -> u8 {
    match (codec, shares) {
        (Codec::Zstd, false) => COMPRESSION_ZSTD,
        (Codec::Zstd, true) => COMPRESSION_SHARED,
        (Codec::Ranks, false) => COMPRESSION_RANKS,
        (Codec::Ranks, true) => COMPRESSION_RANKS_SHARED,
        (Codec::Context, _) => COMPRESSION_CONTEXT,
        (Codec::DontCares, _) => COMPRESSION_RANKED,
    }
}

/// Byte offsets of the fixed fields.
mod at {
    pub const MAGIC: usize = 0;
    pub const VERSION: usize = 8;
    pub const RULES: usize = 12;
    pub const INDEX_KIND: usize = 13;
    pub const COMPRESSION: usize = 14;
    pub const ENCODING: usize = 15;
    pub const SEEDS: usize = 16;
    pub const BLOCK_SIZE: usize = 20;
    pub const POSITIONS: usize = 24;
    pub const BLOCKS: usize = 32;
    pub const HISTOGRAM: usize = 40;
}

/// Bytes before the block table.
pub const FIXED_LEN: usize = at::HISTOGRAM + 8 * HISTOGRAM_LEN;

/// The fixed fields of a header, as numbers. Nothing here is trusted until
/// [`Header::sizes_agree`] and the header checksum say so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    pub rules_code: u8,
    pub index_kind: u8,
    pub compression: u8,
    pub encoding: u8,
    pub seeds: u32,
    pub block_size: u32,
    pub positions: u64,
    pub blocks: u64,
    pub histogram: [u64; HISTOGRAM_LEN],
}

/// What is wrong with the fixed part of a header, before any path is attached.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum FixedProblem {
    /// Not a table file at all.
    NotATable,
    /// Shorter than the fixed part.
    Short,
    /// Another format version.
    Version(u32),
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"))
}
fn u64_at(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"))
}

impl Header {
    /// The header of a table of `kind` for layer `summary.seeds` of `rules`.
    pub fn new(rules: Rules, kind: TableKind, block_size: u32, summary: &LayerSummary) -> Header {
        Header {
            rules_code: rules.code(),
            index_kind: INDEX_FULL,
            compression: COMPRESSION_ZSTD,
            encoding: kind.code(),
            seeds: summary.seeds,
            block_size,
            positions: summary.positions,
            blocks: summary.positions.div_ceil(u64::from(block_size)),
            histogram: summary.histogram,
        }
    }

    /// The header of a table of `kind` that keeps no entries ([`COMPRESSION_NONE`]).
    pub fn without_entries(
        rules: Rules,
        kind: TableKind,
        block_size: u32,
        summary: &LayerSummary,
    ) -> Header {
        Header {
            compression: COMPRESSION_NONE,
            blocks: 0,
            ..Header::new(rules, kind, block_size, summary)
        }
    }

    /// The header of a table whose blocks say `compression` ([`compression_code`]).
    pub fn coded(
        rules: Rules,
        kind: TableKind,
        block_size: u32,
        summary: &LayerSummary,
        compression: u8,
    ) -> Header {
        Header {
            compression,
            ..Header::new(rules, kind, block_size, summary)
        }
    }

    /// Length of the whole header of a file with `blocks` blocks: the fixed part, the block
    /// offsets (one more than the blocks: the last is the file length), one checksum a
    /// block, and the header checksum.
    pub fn len_with_tables(blocks: u64) -> usize {
        Self::tables_end(blocks) + 8
    }

    /// Where the block checksums end and the header checksum starts.
    pub fn tables_end(blocks: u64) -> usize {
        FIXED_LEN + 8 * (blocks as usize + 1) + 8 * blocks as usize
    }

    /// The format version of a file with this header.
    pub fn version(&self) -> u32 {
        if has_model(self.compression) {
            VERSION
        } else {
            VERSION_ZSTD
        }
    }

    /// The whole header for compressed blocks of these lengths and checksums, the first
    /// block `gap` bytes after the header (the context model's room, 0 for other codecs).
    pub fn encode(&self, gap: u64, block_lens: &[u64], block_sums: &[u64]) -> Vec<u8> {
        assert_eq!(block_lens.len() as u64, self.blocks);
        assert_eq!(block_sums.len() as u64, self.blocks);
        let len = Self::len_with_tables(self.blocks);
        let mut h = Vec::with_capacity(len);
        h.extend_from_slice(&MAGIC);
        h.extend_from_slice(&self.version().to_le_bytes());
        h.extend_from_slice(&[
            self.rules_code,
            self.index_kind,
            self.compression,
            self.encoding,
        ]);
        h.extend_from_slice(&self.seeds.to_le_bytes());
        h.extend_from_slice(&self.block_size.to_le_bytes());
        h.extend_from_slice(&self.positions.to_le_bytes());
        h.extend_from_slice(&self.blocks.to_le_bytes());
        for c in self.histogram {
            h.extend_from_slice(&c.to_le_bytes());
        }
        debug_assert_eq!(h.len(), FIXED_LEN);
        let mut offset = len as u64 + gap;
        h.extend_from_slice(&offset.to_le_bytes());
        for l in block_lens {
            offset += l;
            h.extend_from_slice(&offset.to_le_bytes());
        }
        for s in block_sums {
            h.extend_from_slice(&s.to_le_bytes());
        }
        let sum = xxh3_64(&h);
        h.extend_from_slice(&sum.to_le_bytes());
        debug_assert_eq!(h.len(), len);
        h
    }

    /// Reads the fixed fields from the first bytes of a file.
    pub fn decode_fixed(bytes: &[u8]) -> Result<Header, FixedProblem> {
        if bytes.len() < MAGIC.len() || bytes[at::MAGIC..at::MAGIC + 8] != MAGIC {
            return Err(FixedProblem::NotATable);
        }
        if bytes.len() < FIXED_LEN {
            return Err(FixedProblem::Short);
        }
        let version = u32_at(bytes, at::VERSION);
        if version != VERSION && version != VERSION_ZSTD {
            return Err(FixedProblem::Version(version));
        }
        let mut histogram = [0u64; HISTOGRAM_LEN];
        for (i, h) in histogram.iter_mut().enumerate() {
            *h = u64_at(bytes, at::HISTOGRAM + 8 * i);
        }
        let header = Header {
            rules_code: bytes[at::RULES],
            index_kind: bytes[at::INDEX_KIND],
            compression: bytes[at::COMPRESSION],
            encoding: bytes[at::ENCODING],
            seeds: u32_at(bytes, at::SEEDS),
            block_size: u32_at(bytes, at::BLOCK_SIZE),
            positions: u64_at(bytes, at::POSITIONS),
            blocks: u64_at(bytes, at::BLOCKS),
            histogram,
        };
        // The version and the codec go together: a mismatch is damage, told as a version
        // this program does not read.
        if header.version() != version {
            return Err(FixedProblem::Version(version));
        }
        Ok(header)
    }

    /// Whether the sizes agree with each other, so the block table can be located. A
    /// damaged count must read as corruption, not as truncation.
    pub fn sizes_agree(&self) -> bool {
        self.seeds <= crate::board::MAX_SEEDS
            && self.positions == crate::index::size(self.seeds)
            && self.block_size != 0
            && self.blocks
                == if self.compression == COMPRESSION_NONE {
                    0
                } else {
                    self.positions.div_ceil(u64::from(self.block_size))
                }
    }
}

/// The block table of a checked header: offsets and checksums, kept in memory.
#[derive(Clone, Debug)]
pub(crate) struct BlockTable {
    /// `blocks + 1` offsets from the start of the file; the last is the file length.
    pub offsets: Vec<u64>,
    pub checksums: Vec<u64>,
}

impl BlockTable {
    /// Splits the tables out of the whole header, checking the header checksum first.
    /// `None` when the checksum fails.
    pub fn decode(header: &[u8], blocks: u64) -> Option<BlockTable> {
        let end = Header::tables_end(blocks);
        if header.len() < end + 8 || xxh3_64(&header[..end]) != u64_at(header, end) {
            return None;
        }
        let b = blocks as usize;
        let offsets = (0..=b).map(|i| u64_at(header, FIXED_LEN + 8 * i)).collect();
        let sums_at = FIXED_LEN + 8 * (b + 1);
        let checksums = (0..b).map(|i| u64_at(header, sums_at + 8 * i)).collect();
        Some(BlockTable { offsets, checksums })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_then_decode_gives_the_same_fields() {
        let values = vec![1i8, -1, 0, 2, 2];
        let mut summary = LayerSummary::from_values(2, &values);
        summary.positions = crate::index::size(2);
        let header = Header::new(Rules::ABAPA, TableKind::Values, 7, &summary);
        let lens: Vec<u64> = (0..header.blocks).map(|b| 3 + b % 5).collect();
        let sums: Vec<u64> = (0..header.blocks).map(|b| b * 31 + 5).collect();
        let bytes = header.encode(0, &lens, &sums);
        assert_eq!(bytes.len(), Header::len_with_tables(header.blocks));
        assert_eq!(Header::decode_fixed(&bytes), Ok(header.clone()));
        assert!(header.sizes_agree());
        let table = BlockTable::decode(&bytes, header.blocks).expect("checksum holds");
        assert_eq!(table.checksums, sums);
        assert_eq!(table.offsets[0], bytes.len() as u64);
        assert_eq!(
            *table.offsets.last().unwrap(),
            bytes.len() as u64 + lens.iter().sum::<u64>()
        );
        let mut damaged = bytes.clone();
        damaged[FIXED_LEN + 3] ^= 1;
        assert!(BlockTable::decode(&damaged, header.blocks).is_none());
    }

    /// A table without entries has no blocks, and only its compression code allows that.
    #[test]
    fn a_table_without_entries_has_no_blocks() {
        let summary = LayerSummary::from_values(0, &[0]);
        let header = Header::without_entries(Rules::AWARI, TableKind::Distances, 16, &summary);
        assert_eq!((header.blocks, header.compression), (0, COMPRESSION_NONE));
        assert!(header.sizes_agree());
        let bytes = header.encode(0, &[], &[]);
        assert_eq!(Header::decode_fixed(&bytes), Ok(header.clone()));
        assert!(BlockTable::decode(&bytes, 0).is_some());
        let zstd_without_blocks = Header {
            compression: COMPRESSION_ZSTD,
            ..header.clone()
        };
        assert!(!zstd_without_blocks.sizes_agree());
        let none_with_blocks = Header {
            blocks: 1,
            ..header
        };
        assert!(!none_with_blocks.sizes_agree());
    }

    #[test]
    fn foreign_short_and_future_files_are_told_apart() {
        assert_eq!(
            Header::decode_fixed(b"PNG....."),
            Err(FixedProblem::NotATable)
        );
        assert_eq!(Header::decode_fixed(&MAGIC), Err(FixedProblem::Short));
        let mut future = vec![0u8; FIXED_LEN];
        future[..8].copy_from_slice(&MAGIC);
        future[8..12].copy_from_slice(&3u32.to_le_bytes());
        assert_eq!(Header::decode_fixed(&future), Err(FixedProblem::Version(3)));
        // Version 2 is the context-model codec's alone.
        future[8..12].copy_from_slice(&2u32.to_le_bytes());
        future[14] = COMPRESSION_ZSTD;
        assert_eq!(Header::decode_fixed(&future), Err(FixedProblem::Version(2)));
        future[14] = COMPRESSION_CONTEXT;
        assert!(Header::decode_fixed(&future).is_ok());
    }
}
