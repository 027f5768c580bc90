//! Reading a layer file: memory-map it, check the header, decompress blocks on demand.

use super::*;
use crate::index;
use memmap2::Mmap;
use rayon::prelude::*;
use std::fs::File;
use xxhash_rust::xxh3::xxh3_64;

/// An open, header-checked layer file.
#[derive(Debug)]
pub struct LayerFile {
    path: PathBuf,
    map: Mmap,
    seeds: u32,
    block_size: u32,
    blocks: u64,
    summary: LayerSummary,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

impl LayerFile {
    /// Opens the layer `seeds` of `rules`, refusing anything else: another file type, another
    /// version, another rule set or layer, a truncated file, a header that fails its checksum.
    pub fn open(path: &Path, rules: Rules, seeds: u32) -> Result<LayerFile, StoreError> {
        let path = path.to_path_buf();
        let io = |source| StoreError::Io {
            path: path.clone(),
            source,
        };
        let file = File::open(&path).map_err(io)?;
        // SAFETY: the map is read-only and layer files are never modified in place (they
        // are written under another name and renamed), so the bytes cannot change under us
        // unless someone edits the file by hand, which the checksums then report.
        let map = unsafe { Mmap::map(&file) }.map_err(io)?;
        let len = map.len() as u64;
        let corrupted = |what: &str| StoreError::Corrupted {
            path: path.clone(),
            what: what.to_string(),
        };
        let truncated = |expected: u64| StoreError::Truncated {
            path: path.clone(),
            expected,
            found: len,
        };

        if map.len() < MAGIC.len() || map[..MAGIC.len()] != MAGIC {
            return Err(StoreError::NotADatabase { path });
        }
        if map.len() < FIXED_HEADER {
            return Err(truncated(FIXED_HEADER as u64));
        }
        let version = u32_at(&map, 8);
        if version != VERSION {
            return Err(StoreError::Version {
                path,
                found: version,
            });
        }
        let (rules_code, index_kind, compression, encoding) = (map[12], map[13], map[14], map[15]);
        let file_seeds = u32_at(&map, 16);
        let block_size = u32_at(&map, 20);
        let positions = u64_at(&map, 24);
        let blocks = u64_at(&map, 32);

        // The table's length comes from the header, so check the sizes against each other
        // before trusting them to find the table (a damaged count must read as corruption,
        // not as truncation).
        if file_seeds > MAX_SEEDS
            || positions != index::size(file_seeds)
            || block_size == 0
            || blocks != positions.div_ceil(u64::from(block_size))
        {
            return Err(corrupted("inconsistent sizes in the header"));
        }
        let table_end = FIXED_HEADER + 8 * (blocks as usize + 1) + 8 * blocks as usize;
        if map.len() < table_end + 8 {
            return Err(truncated(table_end as u64 + 8));
        }
        if xxh3_64(&map[..table_end]) != u64_at(&map, table_end) {
            return Err(corrupted("header checksum mismatch"));
        }
        // The header is intact: now its fields can be judged.
        if rules_code != rules.code() {
            let found = Rules::from_code(rules_code)
                .map(|r| r.name().to_string())
                .unwrap_or_else(|| format!("unknown code {rules_code}"));
            return Err(StoreError::WrongRules {
                path,
                expected: rules.name().to_string(),
                found,
            });
        }
        if file_seeds != seeds {
            return Err(StoreError::WrongLayer {
                path,
                expected: seeds,
                found: file_seeds,
            });
        }
        if index_kind != INDEX_FULL || compression != COMPRESSION_ZSTD || encoding != ENCODING_I8 {
            return Err(corrupted(
                "unknown index kind, compression or value encoding",
            ));
        }
        let mut histogram = [0u64; HISTOGRAM_LEN];
        for (i, h) in histogram.iter_mut().enumerate() {
            *h = u64_at(&map, 40 + 8 * i);
        }
        let expected_len = u64_at(&map, FIXED_HEADER + 8 * blocks as usize);
        if expected_len != len {
            return Err(if len < expected_len {
                truncated(expected_len)
            } else {
                corrupted("trailing bytes after the last block")
            });
        }
        let mut prev = (table_end + 8) as u64;
        for b in 0..=blocks as usize {
            let off = u64_at(&map, FIXED_HEADER + 8 * b);
            if off < prev {
                return Err(corrupted("block offsets out of order"));
            }
            prev = off;
        }
        Ok(LayerFile {
            path,
            map,
            seeds,
            block_size,
            blocks,
            summary: LayerSummary {
                seeds,
                positions,
                histogram,
            },
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
    pub fn seeds(&self) -> u32 {
        self.seeds
    }
    pub fn positions(&self) -> u64 {
        self.summary.positions
    }
    pub fn block_size(&self) -> u32 {
        self.block_size
    }
    pub fn blocks(&self) -> u64 {
        self.blocks
    }
    /// File size in bytes.
    pub fn bytes(&self) -> u64 {
        self.map.len() as u64
    }
    /// The summary stored in the header at build time.
    pub fn summary(&self) -> &LayerSummary {
        &self.summary
    }

    fn block_range(&self, block: u64) -> (usize, usize) {
        let at = FIXED_HEADER + 8 * block as usize;
        (
            u64_at(&self.map, at) as usize,
            u64_at(&self.map, at + 8) as usize,
        )
    }

    fn block_checksum(&self, block: u64) -> u64 {
        u64_at(
            &self.map,
            FIXED_HEADER + 8 * (self.blocks as usize + 1) + 8 * block as usize,
        )
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

    /// The compressed bytes of one block, checked against its checksum.
    fn checked_block_data(&self, block: u64) -> Result<&[u8], StoreError> {
        if block >= self.blocks {
            return Err(self.corrupted(format!("no block {block} (the layer has {})", self.blocks)));
        }
        let (start, end) = self.block_range(block);
        let data = &self.map[start..end];
        if xxh3_64(data) != self.block_checksum(block) {
            return Err(self.corrupted(format!("block {block} fails its checksum")));
        }
        Ok(data)
    }

    /// The values of one block, checked against its checksum.
    pub fn read_block(&self, block: u64) -> Result<Vec<i8>, StoreError> {
        let data = self.checked_block_data(block)?;
        let want = self.block_len(block);
        let mut bytes = vec![0u8; want];
        // A decompression context per thread, reused: creating one costs about as much as
        // decompressing a small block.
        thread_local! {
            static DCTX: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
                const { std::cell::RefCell::new(None) };
        }
        let got = DCTX.with(|cell| {
            let mut slot = cell.borrow_mut();
            if slot.is_none() {
                *slot = Some(zstd::bulk::Decompressor::new()?);
            }
            let dctx = slot.as_mut().expect("just set");
            dctx.decompress_to_buffer(data, &mut bytes[..])
        });
        match got {
            Ok(len) if len == want => {}
            Ok(_) => return Err(self.corrupted(format!("block {block} has the wrong length"))),
            Err(e) => return Err(self.corrupted(format!("block {block} does not decompress: {e}"))),
        }
        let limit = self.seeds as i8;
        if let Some(&b) = bytes
            .iter()
            .find(|&&b| !(-limit..=limit).contains(&(b as i8)))
        {
            return Err(self.corrupted(format!("block {block} holds value {}", b as i8)));
        }
        // Same size and alignment: this reuses the buffer.
        Ok(bytes.into_iter().map(|b| b as i8).collect())
    }

    /// Checks every block's checksum without decompressing.
    pub fn check_blocks(&self) -> Result<(), StoreError> {
        (0..self.blocks)
            .into_par_iter()
            .try_for_each(|b| self.checked_block_data(b).map(|_| ()))
    }

    /// Every value of the layer, decompressed (in parallel).
    pub fn read_all(&self) -> Result<Vec<i8>, StoreError> {
        let mut out = vec![0i8; self.positions() as usize];
        out.par_chunks_mut(self.block_size as usize)
            .enumerate()
            .try_for_each(|(b, chunk)| {
                let values = self.read_block(b as u64)?;
                chunk.copy_from_slice(&values);
                Ok(())
            })?;
        Ok(out)
    }
}

impl LayerFile {
    /// Recounts the value histogram from the stored values, block by block in parallel,
    /// never holding more than one block per thread.
    pub fn recount(&self) -> Result<LayerSummary, StoreError> {
        let histogram = (0..self.blocks)
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
