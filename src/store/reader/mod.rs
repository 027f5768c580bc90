//! Reading a table file: check the header, then read and decompress blocks on demand.
//!
//! Blocks are read with positioned reads (`pread`) by default. A memory map would save a
//! copy, but a safe function must not crash when someone truncates or rewrites the file
//! after it was opened: a read past the new end of a map raises SIGBUS, a positioned read
//! returns an error. Mapping stays available as an `unsafe` opt-in
//! ([`LayerFile::open_mapped`]) for callers who can promise the files will not change.

use super::context_coder::{Codec, Coding, Model};
pub(crate) use super::files::open_regular;
use super::files::read_exact_at;
use super::header::{
    has_model, shares_blocks, BlockTable, FixedProblem, Header, COMPRESSION_CONTEXT,
    COMPRESSION_DONT_CARES, COMPRESSION_NONE, COMPRESSION_RANKED, COMPRESSION_RANKS,
    COMPRESSION_RANKS_SHARED, COMPRESSION_SHARED, COMPRESSION_ZSTD, FIXED_LEN, INDEX_FULL,
};
use super::ranked::Ranking;
use super::zstd_contexts;
use super::{histogram_bucket, LayerSummary, StoreError, TableKind, HISTOGRAM_LEN};
use crate::rules::Rules;
use memmap2::Mmap;
use rayon::prelude::*;
use std::cell::RefCell;
use std::fs::File;
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::xxh3_64;

mod pairs;

/// Where the bytes come from.
#[derive(Debug)]
enum Source {
    Read(File),
    Mapped(Mmap),
}

/// An open, header-checked table file of one layer.
#[derive(Debug)]
pub struct LayerFile {
    path: PathBuf,
    kind: TableKind,
    source: Source,
    len: u64,
    seeds: u32,
    block_size: u32,
    table: BlockTable,
    summary: LayerSummary,
    /// False for a table that keeps no entries ([`LayerFile::keeps_entries`]).
    entries: bool,
    /// For a pair's high file that shares blocks with its low file (compression code 2):
    /// that low file, opened beside it; its blocks of length 0 are read there.
    low: Option<Box<LayerFile>>,
    /// Whether this is such a high file (its header's compression code is 2).
    shares: bool,
    /// How its blocks are coded.
    coding: Coding,
    /// Whether the values stored keep don't-cares (compression code 4 or 5): see
    /// [`LayerFile::dont_cares`].
    dont_cares: bool,
}

thread_local! {
    /// The compressed bytes of the block being read, reused from block to block.
    static READ_BUF: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

impl LayerFile {
    /// Opens the values of layer `seeds` of `rules` (see [`LayerFile::open_kind`]).
    ///
    /// # Errors
    ///
    /// As [`LayerFile::open_kind`].
    pub fn open(path: &Path, rules: Rules, seeds: u32) -> Result<LayerFile, StoreError> {
        Self::open_kind(path, rules, seeds, TableKind::Values)
    }

    /// Opens the table of `kind` for layer `seeds` of `rules`, checking its header.
    ///
    /// # Errors
    ///
    /// [`StoreError::Io`] when the system refuses to read it, [`StoreError::NotAFile`] for a
    /// directory, FIFO or device (never opened, so this never blocks), and for anything but
    /// the expected table: another file type, another version, another rule set, layer or
    /// table kind, a truncated file, a header that fails its checksum.
    pub fn open_kind(
        path: &Path,
        rules: Rules,
        seeds: u32,
        kind: TableKind,
    ) -> Result<LayerFile, StoreError> {
        let file = open_regular(path)?;
        Self::from_source(path, rules, seeds, kind, Source::Read(file))
    }

    /// As [`LayerFile::open_kind`], but memory-maps the file: a cold block read then costs
    /// no copy.
    ///
    /// # Safety
    ///
    /// The caller promises that nobody truncates or modifies the file while the returned
    /// value (or anything read through it) is alive. If the file shrinks, reading a block
    /// past its new end kills the process with SIGBUS; if it is modified, the checksums
    /// catch it only for blocks not read yet. Layer files written by this crate are never
    /// changed in place (they are written under another name and renamed), so the promise
    /// holds as long as nothing else writes to the database folder.
    ///
    /// # Errors
    ///
    /// As [`LayerFile::open_kind`].
    pub unsafe fn open_mapped(
        path: &Path,
        rules: Rules,
        seeds: u32,
        kind: TableKind,
    ) -> Result<LayerFile, StoreError> {
        let file = open_regular(path)?;
        // SAFETY: read-only map; the caller promises the file does not change under it.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| io_error(path, e))?;
        Self::from_source(path, rules, seeds, kind, Source::Mapped(map))
    }

    fn from_source(
        path: &Path,
        rules: Rules,
        seeds: u32,
        kind: TableKind,
        source: Source,
    ) -> Result<LayerFile, StoreError> {
        let mut file = LayerFile {
            path: path.to_path_buf(),
            kind,
            len: 0,
            source,
            seeds,
            block_size: 1,
            table: BlockTable {
                offsets: Vec::new(),
                checksums: Vec::new(),
            },
            summary: LayerSummary {
                seeds,
                positions: 0,
                histogram: [0; HISTOGRAM_LEN],
            },
            entries: true,
            low: None,
            shares: false,
            coding: Coding::Zstd,
            dont_cares: false,
        };
        file.len = match &file.source {
            Source::Read(f) => f.metadata().map_err(|e| io_error(path, e))?.len(),
            Source::Mapped(m) => m.len() as u64,
        };
        let header = file.read_header()?;
        file.check_identity(&header, rules, seeds, kind)?;
        file.check_layout()?;
        file.block_size = header.block_size;
        file.entries = header.compression != COMPRESSION_NONE;
        file.summary = LayerSummary {
            seeds,
            positions: header.positions,
            histogram: header.histogram,
        };
        file.shares = shares_blocks(header.compression);
        if file.shares {
            file.low = Some(Box::new(file.open_low(rules)?));
        }
        file.dont_cares = matches!(
            header.compression,
            COMPRESSION_DONT_CARES | COMPRESSION_RANKED
        );
        if has_model(header.compression) {
            let model = file.read_model()?;
            file.coding = match header.compression {
                COMPRESSION_CONTEXT => Coding::Ans(model),
                COMPRESSION_DONT_CARES => Coding::Split(model),
                _ => Coding::Ranked(Ranking::of(&model)),
            };
        }
        Ok(file)
    }

    /// The context model between the header and the first block, checked against the
    /// checksum that follows it.
    fn read_model(&self) -> Result<Model, StoreError> {
        let start = Header::len_with_tables(self.blocks()) as u64;
        let end = self.table.offsets[0];
        // Its length is the layer's: checked before anything that size is read.
        if end != start + Model::bytes_len(self.seeds) as u64 + 8 {
            return Err(self.corrupted("its context model has the wrong length".into()));
        }
        let bytes = self.read_at(start, (end - start) as usize)?;
        let (model, sum) = bytes.split_at(bytes.len() - 8);
        if xxh3_64(model).to_le_bytes() != sum {
            return Err(self.corrupted("its context model fails its checksum".into()));
        }
        Model::from_bytes(self.seeds, model)
            .map_err(|e| self.corrupted(format!("its context model is unusable: {e}")))
    }

    /// Reads and checks the header (fixed part, sizes, checksum), keeping the block table.
    fn read_header(&mut self) -> Result<Header, StoreError> {
        let fixed = self.read_at(0, FIXED_LEN.min(self.len as usize))?;
        let header = match Header::decode_fixed(&fixed) {
            Ok(h) => h,
            Err(FixedProblem::NotATable) => {
                return Err(StoreError::NotADatabase {
                    path: self.path.clone(),
                })
            }
            Err(FixedProblem::Short) => return Err(self.truncated(FIXED_LEN as u64)),
            Err(FixedProblem::Version(found)) => {
                return Err(StoreError::Version {
                    path: self.path.clone(),
                    found,
                })
            }
        };
        if !header.sizes_agree() {
            return Err(self.corrupted("inconsistent sizes in the header".into()));
        }
        // The file length bounds the table before anything that size is allocated.
        let whole = Header::len_with_tables(header.blocks) as u64;
        if self.len < whole {
            return Err(self.truncated(whole));
        }
        let bytes = self.read_at(0, whole as usize)?;
        self.table = BlockTable::decode(&bytes, header.blocks)
            .ok_or_else(|| self.corrupted("header checksum mismatch".into()))?;
        Ok(header)
    }

    /// The header is intact: now its fields can be judged against what was asked for.
    fn check_identity(
        &self,
        header: &Header,
        rules: Rules,
        seeds: u32,
        kind: TableKind,
    ) -> Result<(), StoreError> {
        if header.rules_code != rules.code() {
            let found = Rules::from_code(header.rules_code)
                .map(|r| r.name().to_string())
                .unwrap_or_else(|| format!("unknown code {}", header.rules_code));
            return Err(StoreError::WrongRules {
                path: self.path.clone(),
                expected: rules.name().to_string(),
                found,
            });
        }
        if header.seeds != seeds {
            return Err(StoreError::WrongLayer {
                path: self.path.clone(),
                expected: seeds,
                found: header.seeds,
            });
        }
        // Only a distances table may keep no entries: a layer's values are always kept.
        let values = kind == TableKind::Values;
        let high = kind.low_of_pair().is_some();
        let compression_known = match header.compression {
            COMPRESSION_ZSTD => true,
            COMPRESSION_CONTEXT | COMPRESSION_DONT_CARES | COMPRESSION_RANKED => values,
            COMPRESSION_RANKS => kind != TableKind::Distances,
            COMPRESSION_NONE => kind == TableKind::Distances,
            COMPRESSION_SHARED | COMPRESSION_RANKS_SHARED => high,
            _ => false,
        };
        if header.index_kind != INDEX_FULL || !compression_known {
            return Err(self.corrupted("unknown index kind or compression".into()));
        }
        if header.encoding != kind.code() {
            return Err(self.corrupted(format!(
                "holds table kind {}, expected {} ({kind:?})",
                header.encoding,
                kind.code()
            )));
        }
        Ok(())
    }

    /// The block offsets must run in order from the end of the header to the end of the
    /// file.
    fn check_layout(&self) -> Result<(), StoreError> {
        let offsets = &self.table.offsets;
        let expected_len = *offsets.last().expect("blocks + 1 offsets");
        if expected_len != self.len {
            return Err(if self.len < expected_len {
                self.truncated(expected_len)
            } else {
                self.corrupted("trailing bytes after the last block".into())
            });
        }
        let header_end = Header::len_with_tables(self.table.checksums.len() as u64) as u64;
        if offsets[0] < header_end || offsets.windows(2).any(|w| w[1] < w[0]) {
            return Err(self.corrupted("block offsets out of order".into()));
        }
        Ok(())
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// What the file holds.
    pub fn kind(&self) -> TableKind {
        self.kind
    }
    /// The layer: seeds on the board.
    pub fn seeds(&self) -> u32 {
        self.seeds
    }
    /// Positions in the layer.
    pub fn positions(&self) -> u64 {
        self.summary.positions
    }
    /// Positions per block.
    pub fn block_size(&self) -> u32 {
        self.block_size
    }
    /// Blocks in the file.
    pub fn blocks(&self) -> u64 {
        self.table.checksums.len() as u64
    }
    /// File size in bytes (when it was opened).
    pub fn bytes(&self) -> u64 {
        self.len
    }
    /// Whether the table keeps an entry for each position. A distances table of a layer
    /// built without its distances keeps none: it has no blocks, and reading one is an
    /// error ([`StoreError::Corrupted`]).
    pub fn keeps_entries(&self) -> bool {
        self.entries
    }
    /// The summary of the layer's values stored in the header at build time (for a file
    /// with don't-cares, of the true values).
    pub fn summary(&self) -> &LayerSummary {
        &self.summary
    }
    /// Whether the values stored keep *don't-cares* ([`crate::store::Codec::DontCares`]):
    /// where a capture among a position's moves gives its value, the file may store any
    /// value up to it, and the true value is the larger of the stored one and the best
    /// capture, which only the layers below can tell. Such a file's values are read
    /// through a [`crate::Database`], which restores them; this file's own readers
    /// ([`LayerFile::read_block`], [`LayerFile::read_all`] and the like) refuse it.
    pub fn dont_cares(&self) -> bool {
        self.dont_cares
    }

    /// How the file's blocks are coded ([`Codec`]; compression code 4 reads as
    /// [`Codec::DontCares`], which now writes code 5).
    pub fn codec(&self) -> Codec {
        match (&self.coding, self.dont_cares) {
            (_, true) => Codec::DontCares,
            (Coding::Zstd, false) => Codec::Zstd,
            (Coding::Ans(_), false) => Codec::Context,
            (Coding::Ranked(_) | Coding::Split(_), false) => Codec::Ranks,
        }
    }

    /// The error of a reader that would take stored don't-cares for values.
    fn refuse_dont_cares(&self) -> Result<(), StoreError> {
        if self.dont_cares {
            return Err(StoreError::Unusable {
                path: self.path.clone(),
                what: "its values keep don't-cares, which only the layers below restore: \
                       read it through a Database, or recode it with --codec ranks"
                    .into(),
            });
        }
        Ok(())
    }

    /// Positions in `block` (the last one may be short).
    pub fn block_len(&self, block: u64) -> usize {
        let start = block * u64::from(self.block_size);
        (self.positions() - start).min(u64::from(self.block_size)) as usize
    }

    fn corrupted(&self, what: String) -> StoreError {
        StoreError::Corrupted {
            path: self.path.clone(),
            what,
        }
    }

    fn truncated(&self, expected: u64) -> StoreError {
        StoreError::Truncated {
            path: self.path.clone(),
            expected,
            found: self.len,
        }
    }

    /// `len` bytes from `offset`, copied. A file that has shrunk since it was opened reads
    /// as damaged, never as a crash.
    fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>, StoreError> {
        let mut buf = vec![0u8; len];
        self.read_into(offset, &mut buf)?;
        Ok(buf)
    }

    fn read_into(&self, offset: u64, buf: &mut [u8]) -> Result<(), StoreError> {
        match &self.source {
            Source::Read(f) => read_exact_at(f, buf, offset).map_err(|e| {
                if e.kind() == std::io::ErrorKind::UnexpectedEof {
                    self.corrupted("the file is shorter than when it was opened".into())
                } else {
                    io_error(&self.path, e)
                }
            }),
            Source::Mapped(m) => {
                let start = offset as usize;
                let bytes = m
                    .get(start..start + buf.len())
                    .ok_or_else(|| self.corrupted("read past the end of the map".into()))?;
                buf.copy_from_slice(bytes);
                Ok(())
            }
        }
    }

    /// Calls `f` with the compressed bytes of `block`, checked against its checksum.
    fn with_checked_block<R>(
        &self,
        block: u64,
        f: impl FnOnce(&[u8]) -> R,
    ) -> Result<R, StoreError> {
        if !self.entries {
            return Err(self.corrupted("the table keeps no entries (built without them)".into()));
        }
        if block >= self.blocks() {
            return Err(self.corrupted(format!(
                "no block {block} (the layer has {})",
                self.blocks()
            )));
        }
        if self.is_shared(block) {
            return self.low().with_checked_block(block, f);
        }
        let (start, end) = (
            self.table.offsets[block as usize],
            self.table.offsets[block as usize + 1],
        );
        let sum = self.table.checksums[block as usize];
        let check = |data: &[u8]| {
            if xxh3_64(data) == sum {
                Ok(())
            } else {
                Err(self.corrupted(format!("block {block} fails its checksum")))
            }
        };
        match &self.source {
            Source::Mapped(m) => {
                let data = &m[start as usize..end as usize];
                check(data)?;
                Ok(f(data))
            }
            Source::Read(_) => READ_BUF.with(|cell| {
                let mut buf = cell.borrow_mut();
                buf.resize((end - start) as usize, 0);
                self.read_into(start, &mut buf)?;
                check(&buf)?;
                Ok(f(&buf))
            }),
        }
    }

    fn check_range(&self, block: u64, bytes: &[u8]) -> Result<(), StoreError> {
        // Whether a byte fits depends only on its magnitude, so the block's largest one
        // decides for all. A fold over the block vectorises where a search for the first
        // bad byte did not (that search was a sixth of a big batch probe's time); the
        // search runs only to name the byte of a damaged block.
        let widest = bytes
            .iter()
            .fold(0u8, |m, &b| m.max((b as i8).unsigned_abs()));
        if !self.kind.holds(self.seeds, widest) {
            if let Some(&b) = bytes.iter().find(|&&b| !self.kind.holds(self.seeds, b)) {
                return Err(self.corrupted(format!("block {block} holds value {}", b as i8)));
            }
        }
        Ok(())
    }

    /// The bytes of one block, checked against its checksum and the table kind's range.
    ///
    /// # Errors
    ///
    /// A block that cannot be read or is damaged; [`StoreError::Unusable`] for a file whose
    /// values keep don't-cares ([`LayerFile::dont_cares`]).
    pub fn read_block_bytes(&self, block: u64) -> Result<Vec<u8>, StoreError> {
        self.refuse_dont_cares()?;
        self.stored_block_bytes(block)
    }

    /// The bytes of one block as stored (don't-cares and all), checked.
    pub(crate) fn stored_block_bytes(&self, block: u64) -> Result<Vec<u8>, StoreError> {
        if block < self.blocks() && self.is_shared(block) {
            // The low file's block, coded as the low file codes its blocks.
            let bytes = self.low().stored_block_bytes(block)?;
            self.check_range(block, &bytes)?;
            return Ok(bytes);
        }
        let want = self.block_len(block.min(self.blocks().saturating_sub(1)));
        let mut bytes = vec![0u8; want];
        if !matches!(self.coding, Coding::Zstd) {
            self.with_checked_block(block, |data| self.coding.decode_into(data, &mut bytes))?
                .map_err(|e| self.corrupted(format!("block {block} does not decode: {e}")))?;
            self.check_range(block, &bytes)?;
            return Ok(bytes);
        }
        let got = self.with_checked_block(block, |data| {
            zstd_contexts::decompress_to_buffer(data, &mut bytes[..])
        })?;
        match got {
            Ok(len) if len == want => {}
            Ok(_) => return Err(self.corrupted(format!("block {block} has the wrong length"))),
            Err(e) => return Err(self.corrupted(format!("block {block} does not decompress: {e}"))),
        }
        self.check_range(block, &bytes)?;
        Ok(bytes)
    }

    /// The bytes of positions `start..start + len` as stored, from the blocks that hold
    /// them (each checked as read).
    pub(crate) fn stored_span(&self, start: u64, len: u64) -> Result<Vec<u8>, StoreError> {
        let size = u64::from(self.block_size);
        let mut out = Vec::with_capacity(len as usize);
        let mut at = start;
        while at < start + len {
            let block = at / size;
            let bytes = self.stored_block_bytes(block)?;
            let from = (at - block * size) as usize;
            let to = ((start + len).min((block + 1) * size) - block * size) as usize;
            out.extend_from_slice(&bytes[from..to]);
            at = block * size + to as u64;
        }
        Ok(out)
    }

    /// The values of one block of a values file, checked against its checksum.
    pub fn read_block(&self, block: u64) -> Result<Vec<i8>, StoreError> {
        // Same size and alignment: this reuses the buffer.
        Ok(self
            .read_block_bytes(block)?
            .into_iter()
            .map(|b| b as i8)
            .collect())
    }

    /// Checks every block's checksum without decompressing.
    pub fn check_blocks(&self) -> Result<(), StoreError> {
        (0..self.blocks())
            .into_par_iter()
            .try_for_each(|b| self.with_checked_block(b, |_| ()))
    }

    /// Every byte of the table, decompressed (in parallel).
    ///
    /// # Errors
    ///
    /// As [`LayerFile::read_block_bytes`].
    pub fn read_all_bytes(&self) -> Result<Vec<u8>, StoreError> {
        self.refuse_dont_cares()?;
        self.stored_bytes()
    }

    /// Every byte of the table as stored (don't-cares and all), decompressed in parallel.
    pub(crate) fn stored_bytes(&self) -> Result<Vec<u8>, StoreError> {
        if !self.entries {
            // Not a layer of zeros: there is nothing to read.
            return self.with_checked_block(0, |_| Vec::new());
        }
        // A whole layer is read to be looked up at random (the in-memory pass's lower
        // layers): on huge pages (`memory.rs`).
        let mut out = crate::memory::huge_vec(self.positions() as usize, || 0u8);
        out.par_chunks_mut(self.block_size as usize)
            .enumerate()
            .try_for_each(|(b, chunk)| {
                chunk.copy_from_slice(&self.stored_block_bytes(b as u64)?);
                Ok(())
            })?;
        Ok(out)
    }

    /// Every value of the layer, decompressed (in parallel).
    ///
    /// # Errors
    ///
    /// As [`LayerFile::read_block_bytes`].
    pub fn read_all(&self) -> Result<Vec<i8>, StoreError> {
        self.refuse_dont_cares()?;
        self.read_all_stored()
    }

    /// Every value of the layer as stored (don't-cares and all).
    pub(crate) fn read_all_stored(&self) -> Result<Vec<i8>, StoreError> {
        Ok(self.stored_bytes()?.into_iter().map(|b| b as i8).collect())
    }

    /// Recounts the value histogram from the stored values, block by block in parallel,
    /// never holding more than one block per thread.
    pub fn recount(&self) -> Result<LayerSummary, StoreError> {
        let histogram = (0..self.blocks())
            .into_par_iter()
            .try_fold(
                || [0u64; HISTOGRAM_LEN],
                |mut h, b| {
                    for v in self.read_block(b)? {
                        h[histogram_bucket(v)] += 1;
                    }
                    Ok::<_, StoreError>(h)
                },
            )
            .try_reduce(
                || [0u64; HISTOGRAM_LEN],
                |mut a, b| {
                    for (x, y) in a.iter_mut().zip(b) {
                        *x += y;
                    }
                    Ok(a)
                },
            )?;
        Ok(LayerSummary {
            seeds: self.seeds,
            positions: self.positions(),
            histogram,
        })
    }
}

fn io_error(path: &Path, source: std::io::Error) -> StoreError {
    StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}
