//! The reading side of a pair (a low and a high file of one layer): the high file's blocks
//! kept in its low file, and the blocks both files hold alike.

use super::*;

impl LayerFile {
    /// The low file beside this high file that shares its blocks, opened as this one was
    /// (read or mapped), and checked to be the one it was written with: same layer
    /// layout, and the same checksum for every block shared.
    pub(super) fn open_low(&self, rules: Rules) -> Result<LayerFile, StoreError> {
        let kind = self
            .kind
            .low_of_pair()
            .expect("only a pair's high file shares blocks");
        let path = self.path.with_extension(kind.extension());
        let low = match self.source {
            Source::Read(_) => LayerFile::open_kind(&path, rules, self.seeds, kind),
            // SAFETY: reached only from `open_mapped`, whose caller promised that the files
            // of the database (this high file and its low file) do not change while open.
            Source::Mapped(_) => unsafe { LayerFile::open_mapped(&path, rules, self.seeds, kind) },
        }
        .map_err(|e| {
            self.corrupted(format!(
                "shares blocks with {}, which cannot be read: {e}",
                path.display()
            ))
        })?;
        let mismatch = low.positions() != self.positions()
            || low.block_size != self.block_size
            || (0..self.blocks()).any(|b| {
                self.is_shared(b)
                    && low.table.checksums[b as usize] != self.table.checksums[b as usize]
            });
        if mismatch {
            return Err(self.corrupted(format!(
                "shares blocks with {}, which is not the low file it was written with",
                path.display()
            )));
        }
        Ok(low)
    }

    /// Whether this is a pair's high file that keeps some of its blocks in its low file.
    pub(crate) fn shares(&self) -> bool {
        self.shares
    }

    /// The low file of a high file that shares blocks.
    pub(super) fn low(&self) -> &LayerFile {
        self.low
            .as_ref()
            .expect("a file that shares blocks has its low file")
    }

    /// Whether `block` (in range) is stored in the low file: a block of length 0 in a
    /// high file that shares blocks (compression code 2).
    pub(super) fn is_shared(&self, block: u64) -> bool {
        let b = block as usize;
        self.shares && self.table.offsets[b] == self.table.offsets[b + 1]
    }

    /// Whether block `block` of this file and of `other` hold the same compressed bytes,
    /// under the same checksum: then they decompress alike, and either one's checked
    /// bytes are the other's. Compared byte for byte, not by checksum alone.
    pub(crate) fn same_block(&self, other: &LayerFile, block: u64) -> Result<bool, StoreError> {
        if !self.entries || !other.entries || block >= self.blocks() || block >= other.blocks() {
            return Ok(false);
        }
        // A block one of them keeps in the other, checked at open to carry its checksum.
        if self.is_shared(block) || other.is_shared(block) {
            return Ok(
                self.table.checksums[block as usize] == other.table.checksums[block as usize]
            );
        }
        // The same bytes decode alike under one coding: zstd's is every file's, a model's
        // is its file's own.
        if !matches!((&self.coding, &other.coding), (Coding::Zstd, Coding::Zstd)) {
            return Ok(false);
        }
        let span = |f: &LayerFile| {
            let b = block as usize;
            (f.table.offsets[b], f.table.offsets[b + 1])
        };
        let ((start, end), (other_start, other_end)) = (span(self), span(other));
        if end - start != other_end - other_start
            || self.table.checksums[block as usize] != other.table.checksums[block as usize]
        {
            return Ok(false);
        }
        Ok(match (&self.source, &other.source) {
            (Source::Mapped(a), Source::Mapped(b)) => matches!(
                (a.get(start as usize..end as usize), b.get(other_start as usize..other_end as usize)),
                (Some(x), Some(y)) if x == y
            ),
            _ => {
                let len = (end - start) as usize;
                self.read_at(start, len)? == other.read_at(other_start, len)?
            }
        })
    }

    /// Checks decompressed block bytes (another file's, see [`LayerFile::same_block`])
    /// against this file's block length and table kind's range.
    pub(crate) fn check_block_range(&self, block: u64, bytes: &[u8]) -> Result<(), StoreError> {
        if bytes.len() != self.block_len(block.min(self.blocks().saturating_sub(1))) {
            return Err(self.corrupted(format!("block {block} has the wrong length")));
        }
        self.check_range(block, bytes)
    }

    /// Positions where this file (a pair's low file) and `high` (its high file) hold the
    /// same value: the pair's exact positions. Block by block in parallel, never more than
    /// a block of each a thread; a block `high` stores in this file (an exact stretch,
    /// compression code 2) counts whole without being read.
    ///
    /// # Errors
    ///
    /// The two files of different layouts, or a block that cannot be read or is damaged.
    pub fn count_equal(&self, high: &LayerFile) -> Result<u64, StoreError> {
        if high.positions() != self.positions() || high.block_size != self.block_size {
            return Err(high.corrupted(format!(
                "does not have the layout of {} ({} positions in blocks of {})",
                self.path.display(),
                self.positions(),
                self.block_size
            )));
        }
        (0..self.blocks())
            .into_par_iter()
            .map(|b| {
                if high.is_shared(b) {
                    return Ok(self.block_len(b) as u64);
                }
                let (l, h) = (self.read_block_bytes(b)?, high.read_block_bytes(b)?);
                Ok(l.iter().zip(&h).filter(|(a, b)| a == b).count() as u64)
            })
            .sum()
    }
}
