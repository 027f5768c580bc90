//! The Oracle: the values of the three presets in one folder, opened once, and the analysis
//! of a position (a table lookup, or a search above the built layers), for `serve`, `play`
//! and `analyze`.

use anyhow::Result;
use awari::search::{self, Analysis, Limits};
use awari::{Board, Database, Rules};
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

/// The databases of the three presets in one folder, opened once.
pub struct Oracle {
    dbs: HashMap<Rules, Database>,
    /// The time a search may take above the built layers.
    pub think: Duration,
}

impl Oracle {
    pub fn open(dir: &Path, think: Duration) -> Result<Oracle> {
        let mut dbs = HashMap::new();
        for rules in Rules::ALL {
            dbs.insert(rules, Database::open(dir, rules)?);
        }
        Ok(Oracle { dbs, think })
    }

    pub fn db(&self, rules: Rules) -> &Database {
        &self.dbs[&rules]
    }

    pub fn analyse(&self, rules: Rules, board: &Board) -> Result<Analysis> {
        Ok(search::analyse(
            self.db(rules),
            board,
            &Limits::think(self.think),
        )?)
    }
}
