//! Layers of the values held uncompressed in memory ([`Database::load`]): a batch of
//! lookups ([`Database::values_many`]) reads their positions in place instead of
//! decompressing every block it touches, which is most of a big random batch's time. What
//! Python's `Database.load` holds, for a Rust program too.

use super::{Database, ProbeError};
use crate::board::MAX_SEEDS;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// The layers read by [`Database::load`], by layer: one `i8` a position.
pub(super) struct Loaded(RwLock<Vec<Option<Arc<Vec<i8>>>>>);

impl Loaded {
    pub(super) fn new() -> Loaded {
        Loaded(RwLock::new(vec![None; MAX_SEEDS as usize + 1]))
    }

    /// The layers held (a lock poisoned by a panic elsewhere still holds whole layers: a
    /// layer is put in place at once).
    pub(super) fn read(&self) -> RwLockReadGuard<'_, Vec<Option<Arc<Vec<i8>>>>> {
        self.0.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Vec<Option<Arc<Vec<i8>>>>> {
        self.0.write().unwrap_or_else(|e| e.into_inner())
    }
}

impl Database {
    /// Reads layers `layers` of the values into memory, uncompressed (one byte a position),
    /// each block checked as it is read, in order (a layer with don't-cares is restored,
    /// fastest with the layers below it loaded first: give them in ascending order); [`Database::values_many`] then reads the
    /// positions of those layers in place. A layer loaded again is read again. Returns the
    /// bytes now held ([`Database::loaded_bytes`]).
    ///
    /// # Errors
    ///
    /// A layer not built ([`ProbeError::LayerMissing`]), or a file that cannot be read or is
    /// damaged; the layers before it in `layers` stay loaded.
    pub fn load(&self, layers: &[u32]) -> Result<u64, ProbeError> {
        for &n in layers {
            // Read again: not the copy held.
            self.loaded.write()[n as usize] = None;
            let values = self.true_layer(n)?;
            self.loaded.write()[n as usize] = Some(Arc::new(values));
        }
        Ok(self.loaded_bytes())
    }

    /// Forgets every layer [`Database::load`] read.
    pub fn unload(&self) {
        self.loaded.write().iter_mut().for_each(|l| *l = None);
    }

    /// The bytes the layers [`Database::load`] read take.
    pub fn loaded_bytes(&self) -> u64 {
        self.loaded
            .read()
            .iter()
            .flatten()
            .map(|l| l.len() as u64)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::{build, BuildOptions};
    use crate::{index, Board, Rules};

    /// Layers held in memory answer what the files do, alone or beside layers read from
    /// their blocks; a layer not built is refused, and unload forgets them all.
    #[test]
    fn loaded_layers_answer_what_the_files_do() {
        let dir = tempfile::tempdir().unwrap();
        build(
            &BuildOptions::new(dir.path(), Rules::AWARI, 8),
            &crate::Quiet,
        )
        .unwrap();
        let db = Database::open(dir.path(), Rules::AWARI).unwrap();
        // Every position of layers 5..=8, in an order that crosses layers and blocks.
        let mut boards: Vec<Board> = (5..=8u32)
            .flat_map(|n| (0..index::size(n)).map(move |i| index::unrank(n, i)))
            .collect();
        boards.reverse();
        let from_files = db.values_many(&boards).unwrap();
        assert_eq!(db.loaded_bytes(), 0);
        let held = db.load(&[6, 8]).unwrap();
        assert_eq!(held, index::size(6) + index::size(8));
        assert_eq!(db.values_many(&boards).unwrap(), from_files);
        assert_eq!(
            db.load(&[5, 6, 7, 8]).unwrap(),
            (5..=8).map(index::size).sum()
        );
        assert_eq!(db.values_many(&boards).unwrap(), from_files);
        let e = db.load(&[4, 9]).unwrap_err();
        assert!(
            matches!(e, ProbeError::LayerMissing { seeds: 9, .. }),
            "{e}"
        );
        db.unload();
        assert_eq!(db.loaded_bytes(), 0);
        assert_eq!(db.values_many(&boards).unwrap(), from_files);
    }
}
