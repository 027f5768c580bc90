//! The Oracle: the values of the three presets in one folder, opened once, and the analysis
//! of a position (a table lookup, or a search above the built layers), for `serve`, `play`
//! and `analyze`. Layers built while it runs are seen: at most every
//! [`RECHECK`], a request looks whether the next layer of a preset is on disk, and if so
//! opens that preset's tables again. For `serve`, it also holds the bounds and own-row
//! values of each preset ([`Oracle::with_own_row`]), opened once at the start: the API's
//! own-row answers are read from the layers there then.

use super::output::tell;
use anyhow::Result;
use awari::search::{self, Analysis, Limits};
use awari::{store, Board, BoundsDatabase, Database, Rules};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

/// How often at most the Oracle looks for layers built since it opened the tables.
pub const RECHECK: Duration = Duration::from_secs(1);

/// The databases of the three presets in one folder.
pub struct Oracle {
    dir: PathBuf,
    dbs: RwLock<HashMap<Rules, Arc<Database>>>,
    /// When the folder was last looked at for new layers.
    checked: Mutex<Instant>,
    /// The time a search may take above the built layers.
    pub think: Duration,
    /// The bounds and own-row values of each preset, for the API; `None` for a preset
    /// whose tables would not open (said on stderr when the server started).
    own_row: HashMap<Rules, Option<Arc<BoundsDatabase>>>,
}

impl Oracle {
    pub fn open(dir: &Path, think: Duration) -> Result<Oracle> {
        let mut dbs = HashMap::new();
        for rules in Rules::ALL {
            dbs.insert(rules, Arc::new(Database::open(dir, rules)?));
        }
        Ok(Oracle {
            dir: dir.to_path_buf(),
            dbs: RwLock::new(dbs),
            checked: Mutex::new(Instant::now()),
            think,
            own_row: HashMap::new(),
        })
    }

    /// Opens the bounds and own-row values of every preset too. A preset whose tables will
    /// not open (a damaged file) is said on stderr, with the cause, and its own-row
    /// questions get a server error: the values are still served.
    pub fn with_own_row(mut self) -> Oracle {
        for rules in Rules::ALL {
            let db = match BoundsDatabase::open(&self.dir, rules) {
                Ok(db) => Some(Arc::new(db)),
                Err(e) => {
                    tell!("awari serve: the own-row tables of {rules} will not open: {e}");
                    None
                }
            };
            self.own_row.insert(rules, db);
        }
        self
    }

    /// The bounds and own-row values of `rules` (see [`Oracle::with_own_row`]).
    pub fn own_row(&self, rules: Rules) -> Result<Arc<BoundsDatabase>> {
        self.own_row
            .get(&rules)
            .cloned()
            .flatten()
            .ok_or_else(|| anyhow::anyhow!("the own-row tables of {rules} could not be opened"))
    }

    /// The tables of `rules`, opened again first if a layer above them was built since
    /// (looked at once every [`RECHECK`] at most: a stat of one file per preset).
    pub fn db(&self, rules: Rules) -> Arc<Database> {
        self.refresh();
        let dbs = self.dbs.read().unwrap_or_else(|e| e.into_inner());
        Arc::clone(&dbs[&rules])
    }

    /// Opens again the tables of each preset whose next layer is now on disk. A folder
    /// that will not open now (a layer being replaced, a damaged new file) keeps the
    /// tables opened before.
    fn refresh(&self) {
        {
            let mut checked = self.checked.lock().unwrap_or_else(|e| e.into_inner());
            if checked.elapsed() < RECHECK {
                return;
            }
            *checked = Instant::now();
        }
        let grown: Vec<Rules> = {
            let dbs = self.dbs.read().unwrap_or_else(|e| e.into_inner());
            Rules::ALL
                .into_iter()
                .filter(|&rules| {
                    let next = dbs[&rules].complete_up_to().map_or(0, |t| t + 1);
                    store::layer_path(&self.dir, rules, next).is_file()
                })
                .collect()
        };
        for rules in grown {
            if let Ok(db) = Database::open(&self.dir, rules) {
                let mut dbs = self.dbs.write().unwrap_or_else(|e| e.into_inner());
                if db.complete_up_to() > dbs[&rules].complete_up_to() {
                    dbs.insert(rules, Arc::new(db));
                }
            }
        }
    }

    pub fn analyse(&self, rules: Rules, board: &Board) -> Result<Analysis> {
        Ok(search::analyse(
            &self.db(rules),
            board,
            &Limits::think(self.think),
        )?)
    }

    /// [`Oracle::analyse`], stopped once `stop` is set (its client gone): `None` then.
    pub fn analyse_until(
        &self,
        rules: Rules,
        board: &Board,
        stop: &AtomicBool,
    ) -> Result<Option<Analysis>> {
        Ok(search::analyse_until(
            &self.db(rules),
            board,
            &Limits::think(self.think),
            stop,
        )?)
    }
}
