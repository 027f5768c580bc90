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
