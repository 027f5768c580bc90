//! The block cache every kind of table is probed through: decompressed blocks by table
//! kind, layer and block number, evicted oldest first.

use super::{LayerFile, StoreError, TableKind};
use crate::board::Board;
use crate::index;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

/// Bytes of decompressed blocks a database keeps: 1,024 blocks at the default block size,
/// 4,096 of the context codecs', enough for the children of a few hundred positions of a
/// batch or a search, and for the captures a probe of don't-cares restores them by.
pub(crate) const CACHE_BYTES: usize = 16 << 20;

/// A cached block: its table kind, layer and number.
type BlockKey = (TableKind, u32, u64);

/// Recently read blocks of any table kind, shared by the threads that probe. A lock
/// poisoned by a panicking prober is taken over: the map and queue are always consistent
/// between two statements, so what a panic left behind is still a valid cache.
#[derive(Debug)]
pub(crate) struct BlockCache {
    /// Bytes of blocks kept at most (the newest block is kept whatever its size).
    capacity: usize,
    inner: Mutex<Blocks>,
}

#[derive(Debug, Default)]
struct Blocks {
    blocks: HashMap<BlockKey, Arc<Vec<u8>>>,
    order: VecDeque<BlockKey>,
    /// Bytes of the blocks held.
    bytes: usize,
}

impl BlockCache {
    /// A cache that keeps at most `capacity` bytes of blocks.
    pub(crate) fn new(capacity: usize) -> BlockCache {
        BlockCache {
            capacity,
            inner: Mutex::new(Blocks::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Blocks> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The byte of `board` in `file`, read from the cache or from the file (the block is
    /// then cached, the oldest block making room).
    pub(crate) fn byte(&self, file: &LayerFile, board: &Board) -> Result<u8, StoreError> {
        let idx = index::rank(board);
        let block = idx / u64::from(file.block_size());
        let within = (idx % u64::from(file.block_size())) as usize;
        Ok(self.block(file, block)?[within])
    }

    /// The bytes of `board` in the two files of a pair (the low and the high file of one
    /// layer), read together. Where a block of `high` is the same compressed data as the
    /// block of `low` (a stretch of positions whose low and high agree: an exact stretch),
    /// it is decompressed once and cached under both keys. A probe of a layer whose
    /// positions are exact then reads half the blocks it read.
    pub(crate) fn pair(
        &self,
        low: &LayerFile,
        high: &LayerFile,
        board: &Board,
    ) -> Result<(u8, u8), StoreError> {
        if low.block_size() != high.block_size() || low.positions() != high.positions() {
            return Ok((self.byte(low, board)?, self.byte(high, board)?));
        }
        let idx = index::rank(board);
        let block = idx / u64::from(low.block_size());
        let within = (idx % u64::from(low.block_size())) as usize;
        let low_bytes = self.block(low, block)?;
        let high_key = (high.kind(), high.seeds(), block);
        let cached = self.lock().blocks.get(&high_key).cloned();
        let high_bytes = match cached {
            Some(bytes) => bytes,
            None => {
                let bytes = if low.same_block(high, block)? {
                    high.check_block_range(block, &low_bytes)?;
                    low_bytes.clone()
                } else {
                    Arc::new(high.read_block_bytes(block)?)
                };
                self.put(high_key, bytes.clone());
                bytes
            }
        };
        Ok((low_bytes[within], high_bytes[within]))
    }

    /// Block `block` of `file`, from the cache or read (and cached).
    fn block(&self, file: &LayerFile, block: u64) -> Result<Arc<Vec<u8>>, StoreError> {
        let key = (file.kind(), file.seeds(), block);
        if let Some(bytes) = self.lock().blocks.get(&key).cloned() {
            return Ok(bytes);
        }
        // As stored: a values file with don't-cares is restored by the probe above.
        let bytes = Arc::new(file.stored_block_bytes(block)?);
        self.put(key, bytes.clone());
        Ok(bytes)
    }

    fn put(&self, key: BlockKey, bytes: Arc<Vec<u8>>) {
        let mut cache = self.lock();
        let len = bytes.len();
        match cache.blocks.insert(key, bytes) {
            None => cache.order.push_back(key),
            Some(old) => cache.bytes -= old.len(),
        }
        cache.bytes += len;
        while cache.bytes > self.capacity && cache.order.len() > 1 {
            if let Some(old) = cache.order.pop_front() {
                let gone = cache.blocks.remove(&old).map_or(0, |b| b.len());
                cache.bytes -= gone;
            }
        }
    }

    /// Forgets every block.
    pub(crate) fn clear(&self) {
        let mut cache = self.lock();
        cache.blocks.clear();
        cache.order.clear();
        cache.bytes = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Rules;
    use crate::store::{layer_path, write_layer, WriteOptions};

    const N: u32 = 4;

    /// Layer 4 (1,365 positions) in blocks of 100, and its values.
    fn layer(dir: &std::path::Path) -> (LayerFile, Vec<i8>) {
        let values: Vec<i8> = (0..index::size(N)).map(|i| (i % 9) as i8 - 4).collect();
        let opts = WriteOptions {
            block_size: 100,
            zstd_level: 1,
            codec: crate::store::Codec::Zstd,
        };
        write_layer(dir, Rules::AWARI, N, &values, opts).unwrap();
        let path = layer_path(dir, Rules::AWARI, N);
        (LayerFile::open(&path, Rules::AWARI, N).unwrap(), values)
    }

    #[test]
    fn the_oldest_block_goes_first_and_every_answer_is_right() {
        let dir = tempfile::tempdir().unwrap();
        let (file, values) = layer(dir.path());
        let cache = BlockCache::new(200);
        for (i, board) in index::walk(N, 0, index::size(N)) {
            assert_eq!(cache.byte(&file, &board).unwrap() as i8, values[i as usize]);
            assert!(cache.lock().blocks.len() <= 2);
        }
        // Blocks of 100 bytes (the last of 65) under 200 bytes: the last two.
        let held: Vec<u64> = cache.lock().order.iter().map(|k| k.2).collect();
        assert_eq!(held, vec![12, 13]);
    }

    /// A bounds pair of layer 4 in blocks of 100: `high` equals `low` except in block 3.
    fn pair_files(dir: &std::path::Path) -> (LayerFile, LayerFile, Vec<i8>, Vec<i8>) {
        use crate::store::{table_path, write_table, LayerSummary};
        let low: Vec<i8> = (0..index::size(N)).map(|i| (i % 5) as i8 - 4).collect();
        let mut high = low.clone();
        high[300..400].iter_mut().for_each(|v| *v += 2);
        let opts = WriteOptions {
            block_size: 100,
            zstd_level: 1,
            codec: crate::store::Codec::Zstd,
        };
        let open = |kind, values: &[i8]| {
            let bytes: Vec<u8> = values.iter().map(|&v| v as u8).collect();
            write_table(
                dir,
                Rules::AWARI,
                kind,
                &bytes,
                LayerSummary::from_values(N, values),
                opts,
            )
            .unwrap();
            let path = table_path(dir, Rules::AWARI, N, kind);
            LayerFile::open_kind(&path, Rules::AWARI, N, kind).unwrap()
        };
        let (l, h) = (
            open(TableKind::BoundsLow, &low),
            open(TableKind::BoundsHigh, &high),
        );
        (l, h, low, high)
    }

    #[test]
    fn a_pair_shares_the_blocks_its_files_hold_alike_and_only_those() {
        let dir = tempfile::tempdir().unwrap();
        let (low_file, high_file, low, high) = pair_files(dir.path());
        let cache = BlockCache::new(10_000);
        for (i, board) in index::walk(N, 0, index::size(N)) {
            let (l, h) = cache.pair(&low_file, &high_file, &board).unwrap();
            assert_eq!((l as i8, h as i8), (low[i as usize], high[i as usize]));
        }
        let blocks = &cache.lock().blocks;
        for block in 0..low_file.blocks() {
            let l = &blocks[&(TableKind::BoundsLow, N, block)];
            let h = &blocks[&(TableKind::BoundsHigh, N, block)];
            assert_eq!(Arc::ptr_eq(l, h), block != 3, "block {block}");
        }
    }

    #[test]
    fn a_pair_whose_high_block_is_damaged_is_not_shared_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let (low_file, high_file, _, _) = pair_files(dir.path());
        let path = high_file.path().to_path_buf();
        drop(high_file);
        // The last byte of the file is in the last block's compressed data (block 13,
        // positions 1300.., alike in both files): damage it in the high file only.
        let mut bytes = std::fs::read(&path).unwrap();
        *bytes.last_mut().unwrap() ^= 0x40;
        std::fs::write(&path, &bytes).unwrap();
        let high_file =
            LayerFile::open_kind(&path, Rules::AWARI, N, TableKind::BoundsHigh).unwrap();
        let cache = BlockCache::new(10_000);
        let board = index::unrank(N, 1300);
        let err = cache.pair(&low_file, &high_file, &board).unwrap_err();
        assert!(err.to_string().contains("checksum"), "{err}");
    }

    /// Two files coded by ranks under two models can hold the same compressed bytes for
    /// different values (here every value is the commonest of its file, rank 0): such
    /// blocks are not taken for one another, where two zstd blocks alike would be.
    #[test]
    fn blocks_alike_under_two_models_are_not_shared() {
        use crate::store::{write_pair, Codec, LayerSummary, Repetition};
        let dir = tempfile::tempdir().unwrap();
        let size = index::size(N) as usize;
        let (low, high) = (vec![0u8; size], vec![1u8; size]);
        let summary = |b: &[u8]| {
            LayerSummary::from_values(N, &b.iter().map(|&x| x as i8).collect::<Vec<_>>())
        };
        let opts = WriteOptions {
            block_size: 100,
            zstd_level: 1,
            codec: Codec::Ranks,
        };
        let high_kind = TableKind::OwnRowHigh(Repetition::First);
        let (l, h) = write_pair(
            dir.path(),
            Rules::ABAPA,
            N,
            high_kind,
            &low,
            &high,
            (summary(&low), summary(&high)),
            opts,
        )
        .unwrap();
        let low_kind = high_kind.low_of_pair().unwrap();
        let low_file = LayerFile::open_kind(&l.path, Rules::ABAPA, N, low_kind).unwrap();
        let high_file = LayerFile::open_kind(&h.path, Rules::ABAPA, N, high_kind).unwrap();
        let bytes =
            |f: &LayerFile| std::fs::read(f.path()).unwrap()[f.bytes() as usize - 20..].to_vec();
        // The last blocks' compressed bytes are the same in both files...
        assert_eq!(bytes(&low_file), bytes(&high_file));
        assert!(!low_file.same_block(&high_file, 0).unwrap());
        // ...and each answers its own values.
        let cache = BlockCache::new(10_000);
        for (_, board) in index::walk(N, 0, index::size(N)) {
            assert_eq!(cache.pair(&low_file, &high_file, &board).unwrap(), (0, 1));
        }
    }

    #[test]
    fn a_lock_poisoned_by_a_panic_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let (file, values) = layer(dir.path());
        let cache = BlockCache::new(400);
        let board = index::unrank(N, 0);
        cache.byte(&file, &board).unwrap();
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _held = cache.lock();
            panic!("a prober panics while holding the cache");
        }));
        assert!(panicked.is_err());
        assert!(cache.inner.is_poisoned());
        assert_eq!(cache.byte(&file, &board).unwrap() as i8, values[0]);
        cache.clear();
        assert!(cache.lock().blocks.is_empty());
    }
}
