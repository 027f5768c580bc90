//! The block cache every kind of table is probed through: decompressed blocks by table
//! kind, layer and block number, evicted oldest first.

use super::{LayerFile, StoreError, TableKind};
use crate::board::Board;
use crate::index;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

/// Blocks a database keeps decompressed (4 MiB at the default block size): enough for the
/// children of a few hundred positions of a batch or a search.
pub(crate) const CACHE_BLOCKS: usize = 256;

/// A cached block: its table kind, layer and number.
type BlockKey = (TableKind, u32, u64);

/// Recently read blocks of any table kind, shared by the threads that probe. A lock
/// poisoned by a panicking prober is taken over: the map and queue are always consistent
/// between two statements, so what a panic left behind is still a valid cache.
#[derive(Debug)]
pub(crate) struct BlockCache {
    capacity: usize,
    inner: Mutex<Blocks>,
}

#[derive(Debug, Default)]
struct Blocks {
    blocks: HashMap<BlockKey, Arc<Vec<u8>>>,
    order: VecDeque<BlockKey>,
}

impl BlockCache {
    /// A cache that keeps at most `capacity` blocks.
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
        let key = (file.kind(), file.seeds(), block);
        if let Some(bytes) = self.lock().blocks.get(&key).cloned() {
            return Ok(bytes[within]);
        }
        let bytes = Arc::new(file.read_block_bytes(block)?);
        let b = bytes[within];
        self.put(key, bytes);
        Ok(b)
    }

    fn put(&self, key: BlockKey, bytes: Arc<Vec<u8>>) {
        let mut cache = self.lock();
        if cache.blocks.insert(key, bytes).is_none() {
            cache.order.push_back(key);
        }
        while cache.order.len() > self.capacity {
            if let Some(old) = cache.order.pop_front() {
                cache.blocks.remove(&old);
            }
        }
    }

    /// Forgets every block.
    pub(crate) fn clear(&self) {
        let mut cache = self.lock();
        cache.blocks.clear();
        cache.order.clear();
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
        };
        write_layer(dir, Rules::AWARI, N, &values, opts).unwrap();
        let path = layer_path(dir, Rules::AWARI, N);
        (LayerFile::open(&path, Rules::AWARI, N).unwrap(), values)
    }

    #[test]
    fn the_oldest_block_goes_first_and_every_answer_is_right() {
        let dir = tempfile::tempdir().unwrap();
        let (file, values) = layer(dir.path());
        let cache = BlockCache::new(2);
        for (i, board) in index::walk(N, 0, index::size(N)) {
            assert_eq!(cache.byte(&file, &board).unwrap() as i8, values[i as usize]);
            assert!(cache.lock().blocks.len() <= 2);
        }
        let held: Vec<u64> = cache.lock().order.iter().map(|k| k.2).collect();
        assert_eq!(held, vec![12, 13]);
    }

    #[test]
    fn a_lock_poisoned_by_a_panic_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let (file, values) = layer(dir.path());
        let cache = BlockCache::new(4);
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
