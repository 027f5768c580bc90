//! The one core every kind of tables is opened and probed through: per layer its marker
//! file and its companion ([`Tables::marker`], [`Tables::companion`]), which layers are
//! there, and the one error for a layer that is not. The answer types ([`super::Database`],
//! [`super::BoundsDatabase`]) hold one set per kind they answer from.

use super::ProbeError;
use crate::board::MAX_SEEDS;
use crate::rules::Rules;
use crate::store::{self, LayerFile, StoreError, Tables};
use std::path::{Path, PathBuf};

/// How a set reads its files.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Access {
    /// Positioned reads: a file changed underneath gives errors, never a crash.
    Read,
    /// Memory maps: see [`super::Database::open_mapped`] for the promise it needs.
    Mapped,
}

/// One layer's files.
#[derive(Debug)]
pub(crate) struct LayerFiles {
    /// The marker file: the values, or the high half of a pair.
    pub(crate) marker: LayerFile,
    /// The companion: the distances (which a layer may lack, see
    /// [`crate::ProbeError::DistancesMissing`]), or the low half of a pair (always there:
    /// a pair without it is not a layer).
    pub(crate) companion: Option<LayerFile>,
}

/// The layers of one kind of tables of one rule set in one database folder.
#[derive(Debug)]
pub(crate) struct LayerSet {
    tables: Tables,
    /// The database folder (the kind's files are under [`Tables::root`] of it).
    db: PathBuf,
    rules: Rules,
    layers: Vec<Option<LayerFiles>>,
    /// The layers of a pair kind whose marker is on disk without its companion: not
    /// present (the next build of the kind builds them again), but not simply unbuilt.
    half_built: Vec<u32>,
}

impl LayerSet {
    /// Opens every layer of `tables` present for `rules` under the database folder `db`,
    /// checking each file's header. Missing layers are fine: a probe into one is an error.
    pub(crate) fn open(
        db: &Path,
        rules: Rules,
        tables: Tables,
        access: Access,
    ) -> Result<LayerSet, StoreError> {
        let root = tables.root(db);
        store::check_folder(&store::rules_dir(&root, rules))?;
        let open = |seeds, kind| -> Result<Option<LayerFile>, StoreError> {
            let path = store::table_path(&root, rules, seeds, kind);
            // `symlink_metadata` does not open the file, so a FIFO cannot block here;
            // `LayerFile` refuses anything that is not a regular file. (A link that leads
            // nowhere is not missing: opening it says what it is.)
            if std::fs::symlink_metadata(&path).is_err() {
                return Ok(None);
            }
            Ok(Some(match access {
                Access::Read => LayerFile::open_kind(&path, rules, seeds, kind)?,
                // SAFETY: the caller of `open_mapped` promised the files do not change.
                Access::Mapped => unsafe { LayerFile::open_mapped(&path, rules, seeds, kind)? },
            }))
        };
        let mut layers = Vec::new();
        let mut half_built = Vec::new();
        for seeds in 0..=MAX_SEEDS {
            let present = |kind| {
                store::table_path(&root, rules, seeds, kind)
                    .symlink_metadata()
                    .is_ok()
            };
            // A pair's high file may share its low file's blocks and opens it: a missing
            // low file makes the layer half built, whatever the high file says.
            if tables.is_pair() && present(tables.marker()) && !present(tables.companion()) {
                half_built.push(seeds);
                layers.push(None);
                continue;
            }
            let layer = match open(seeds, tables.marker())? {
                None => None,
                Some(marker) => {
                    let companion = open(seeds, tables.companion())?;
                    Some(LayerFiles { marker, companion })
                }
            };
            layers.push(layer);
        }
        Ok(LayerSet {
            tables,
            db: db.to_path_buf(),
            rules,
            layers,
            half_built,
        })
    }

    /// The rule set.
    pub(crate) fn rules(&self) -> Rules {
        self.rules
    }

    /// The database folder.
    pub(crate) fn db(&self) -> &Path {
        &self.db
    }

    /// The largest `n` such that layers `0..=n` are all present.
    pub(crate) fn complete_up_to(&self) -> Option<u32> {
        let present = self.layers.iter().take_while(|l| l.is_some()).count();
        (present > 0).then(|| present as u32 - 1)
    }

    /// Layer `seeds`'s files, if present.
    pub(crate) fn layer(&self, seeds: u32) -> Option<&LayerFiles> {
        self.layers.get(seeds as usize)?.as_ref()
    }

    /// Layer `seeds`'s files, or the error that says which layer of which kind is missing.
    pub(crate) fn layer_or_missing(&self, seeds: u32) -> Result<&LayerFiles, ProbeError> {
        self.layer(seeds).ok_or_else(|| ProbeError::LayerMissing {
            tables: self.tables,
            seeds,
            rules: self.rules,
            dir: self.db.clone(),
        })
    }

    /// The layers whose marker is on disk without its companion, each with the path of the
    /// missing file (only a pair kind has them).
    pub(crate) fn missing_companions(&self) -> Vec<(u32, PathBuf)> {
        let root = self.tables.root(&self.db);
        self.half_built
            .iter()
            .map(|&seeds| {
                let path = store::table_path(&root, self.rules, seeds, self.tables.companion());
                (seeds, path)
            })
            .collect()
    }
}
