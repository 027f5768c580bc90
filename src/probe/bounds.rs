//! The bounds tables, probed: for the rule "an endless game ends with each side keeping its
//! own row", per position the pair `low ≤ high` that the two sides can guarantee whatever
//! the history (see [`crate::solve::bounds`] for the semantics and the solver).
//!
//! Files: `DIR/own-row/<rules>/layer-NN.awlo` (low) and `layer-NN.awhi` (high)
//! ([`crate::store::bounds_dir`]), in the format of the value tables ([`crate::store`])
//! with their own table kinds ([`TableKind::BoundsLow`], [`TableKind::BoundsHigh`]), so a
//! values file is never read as a bound and a bound never as a value. The high file is
//! written after the low one, so a layer with its high file present is complete.

use super::{ProbeError, PvEnd};
use crate::board::{Board, MAX_SEEDS};
use crate::rules::{Repetition, Rules, Turn};
use crate::store::{self, BlockCache, LayerFile, StoreError, TableKind, CACHE_BLOCKS};
use std::path::{Path, PathBuf};

/// The two bounds of a position, for its side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// What the side to move is guaranteed.
    pub low: i8,
    /// What the opponent can hold it to.
    pub high: i8,
}

impl Bounds {
    /// Whether the two guarantees meet: the value is then the same whatever the history.
    pub fn exact(&self) -> bool {
        self.low == self.high
    }
}

/// One legal move and its pair: `captured − high(child)`, `captured − low(child)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveBounds {
    /// The mover's pit, 0..=5.
    pub pit: u8,
    /// Seeds the move captures.
    pub captured: u8,
    /// The position after the move, from the opponent's side.
    pub child: Board,
    /// The mover's guarantee by playing it.
    pub low: i8,
    /// The most the mover can get by playing it.
    pub high: i8,
}

/// A principal variation of the bounds: the moves, the final position (from its mover's
/// side) and why it stops there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundsVariation {
    /// The moves, in order.
    pub steps: Vec<MoveBounds>,
    /// The position after the last move, from its mover's side.
    pub last: Board,
    /// Why the variation stops there. At a [`PvEnd::Repetition`] each side keeps its own
    /// row: the side to move at `last` scores [`BoundsVariation::repetition_score`].
    pub end: PvEnd,
}

impl BoundsVariation {
    /// What the side to move at the last position scores when the game ends there by
    /// repetition: its own row minus the other row.
    pub fn repetition_score(&self) -> i8 {
        crate::solve::bounds::own_row_difference(&self.last)
    }
}

/// The bounds tables of one rule set, opened for probing.
#[derive(Debug)]
pub struct BoundsDatabase {
    dir: PathBuf,
    rules: Rules,
    low: Vec<Option<LayerFile>>,
    high: Vec<Option<LayerFile>>,
    /// The own-row values' pairs, by repetition (first, third), then layer.
    own_row: [Vec<Option<(LayerFile, LayerFile)>>; 2],
    /// The layers whose high file is on disk without its low file: the bounds (`None`) or
    /// the own-row values of a repetition. Not present; the next build of the kind builds
    /// them again.
    half_built: Vec<(Option<Repetition>, u32)>,
    cache: BlockCache,
}

impl BoundsDatabase {
    /// Opens the bounds tables of `rules` under `db` (the database folder, as for
    /// [`crate::Database::open`]). Missing layers are fine; a probe into one is an error.
    ///
    /// # Errors
    ///
    /// A present file that is not a table of the right kind, rules and layer, or is damaged.
    pub fn open(db: impl AsRef<Path>, rules: Rules) -> Result<BoundsDatabase, StoreError> {
        let db = db.as_ref();
        let root = store::bounds_dir(db);
        store::check_folder(&store::rules_dir(&root, rules))?;
        let open = |seeds, kind| -> Result<Option<LayerFile>, StoreError> {
            let path = store::table_path(&root, rules, seeds, kind);
            if std::fs::symlink_metadata(&path).is_err() {
                return Ok(None);
            }
            LayerFile::open_kind(&path, rules, seeds, kind).map(Some)
        };
        let mut low = Vec::new();
        let mut high = Vec::new();
        let mut own_row: [Vec<Option<(LayerFile, LayerFile)>>; 2] = [Vec::new(), Vec::new()];
        let mut half_built = Vec::new();
        for seeds in 0..=MAX_SEEDS {
            let h = open(seeds, TableKind::BoundsHigh)?;
            // A layer counts only when both files are there (high is written last).
            low.push(if h.is_some() {
                open(seeds, TableKind::BoundsLow)?
            } else {
                None
            });
            if h.is_some() && low[seeds as usize].is_none() {
                half_built.push((None, seeds));
            }
            high.push(if low[seeds as usize].is_some() {
                h
            } else {
                None
            });
            for (slot, r) in own_row
                .iter_mut()
                .zip([Repetition::First, Repetition::Third])
            {
                // As the bounds: both files, or the layer is not there.
                let pair = match open(seeds, TableKind::OwnRowHigh(r))? {
                    Some(h) => {
                        let pair = open(seeds, TableKind::OwnRowLow(r))?.map(|l| (l, h));
                        if pair.is_none() {
                            half_built.push((Some(r), seeds));
                        }
                        pair
                    }
                    None => None,
                };
                slot.push(pair);
            }
        }
        Ok(BoundsDatabase {
            dir: db.to_path_buf(),
            rules,
            low,
            high,
            own_row,
            half_built,
            cache: BlockCache::new(CACHE_BLOCKS),
        })
    }

    /// The layers of the bounds (`repetition` None) or of the own-row values of
    /// `repetition` whose high file is on disk without its low file, each with the path of
    /// the missing file. Such a layer is not present (a probe into it says so, and the next
    /// build of the kind builds it again, both files), but it is not simply unbuilt either.
    pub fn missing_low_files(&self, repetition: Option<Repetition>) -> Vec<(u32, PathBuf)> {
        let root = store::bounds_dir(&self.dir);
        self.half_built
            .iter()
            .filter(|(r, _)| *r == repetition)
            .map(|&(r, seeds)| {
                let kind = match r {
                    None => TableKind::BoundsLow,
                    Some(r) => TableKind::OwnRowLow(r),
                };
                (seeds, store::table_path(&root, self.rules, seeds, kind))
            })
            .collect()
    }

    /// The rule set.
    pub fn rules(&self) -> Rules {
        self.rules
    }

    /// The database folder (the bounds are in its bounds folder).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The largest `n` such that layers `0..=n` are all present.
    pub fn complete_up_to(&self) -> Option<u32> {
        let present = self.high.iter().take_while(|l| l.is_some()).count();
        (present > 0).then(|| present as u32 - 1)
    }

    /// The largest `n` such that the own-row values of layers `0..=n` are all present.
    pub fn own_row_complete_up_to(&self, repetition: Repetition) -> Option<u32> {
        let present = self.own_row[repetition_slot(repetition)]
            .iter()
            .take_while(|l| l.is_some())
            .count();
        (present > 0).then(|| present as u32 - 1)
    }

    /// The own-row values' low and high files of layer `seeds`, if present.
    pub(crate) fn own_row_layer(
        &self,
        repetition: Repetition,
        seeds: u32,
    ) -> Option<&(LayerFile, LayerFile)> {
        self.own_row[repetition_slot(repetition)]
            .get(seeds as usize)?
            .as_ref()
    }

    /// The block cache the probes share.
    pub(crate) fn cache(&self) -> &BlockCache {
        &self.cache
    }

    /// The low and high files of layer `seeds`, if present.
    pub fn layer(&self, seeds: u32) -> Option<(&LayerFile, &LayerFile)> {
        let low = self.low.get(seeds as usize)?.as_ref()?;
        let high = self.high.get(seeds as usize)?.as_ref()?;
        Some((low, high))
    }

    /// The files of layer `seeds`, or the error that names the command building them.
    pub(crate) fn layer_or_missing(
        &self,
        seeds: u32,
    ) -> Result<(&LayerFile, &LayerFile), ProbeError> {
        self.layer(seeds).ok_or_else(|| ProbeError::BoundsMissing {
            seeds,
            rules: self.rules,
            dir: self.dir.clone(),
        })
    }

    /// The pair of `board`.
    ///
    /// # Errors
    ///
    /// The board's layer is missing, or a file cannot be read or is damaged.
    pub fn bounds(&self, board: &Board) -> Result<Bounds, ProbeError> {
        let (low, high) = self.layer_or_missing(board.seeds())?;
        Ok(Bounds {
            low: self.cache.byte(low, board)? as i8,
            high: self.cache.byte(high, board)? as i8,
        })
    }

    /// Every legal move with its pair, in pit order (empty when the game is over).
    ///
    /// # Errors
    ///
    /// As [`BoundsDatabase::bounds`], for the children's layers.
    pub fn moves_with_bounds(&self, board: &Board) -> Result<Vec<MoveBounds>, ProbeError> {
        let mut out = Vec::new();
        for m in self.rules.legal_moves(board).iter() {
            let b = self.bounds(&m.child)?;
            let c = m.captured as i8;
            out.push(MoveBounds {
                pit: m.pit,
                captured: m.captured,
                child: m.child,
                low: c - b.high,
                high: c - b.low,
            });
        }
        Ok(out)
    }

    /// The best moves: the largest `low`, then among those the largest `high`.
    ///
    /// # Errors
    ///
    /// As [`BoundsDatabase::moves_with_bounds`].
    pub fn best_moves(&self, board: &Board) -> Result<Vec<MoveBounds>, ProbeError> {
        let moves = self.moves_with_bounds(board)?;
        let best = moves.iter().map(|m| (m.low, m.high)).max();
        Ok(moves
            .into_iter()
            .filter(|m| Some((m.low, m.high)) == best)
            .collect())
    }

    /// A principal variation: the lowest-pit best move, again and again, until the game is
    /// over, a position repeats (since the last capture; the game then ends by the
    /// own-row rule) or `max_plies` moves are played ([`PvEnd::Limit`]).
    ///
    /// # Errors
    ///
    /// As [`BoundsDatabase::moves_with_bounds`].
    pub fn principal_variation(
        &self,
        board: &Board,
        max_plies: usize,
    ) -> Result<BoundsVariation, ProbeError> {
        let mut steps = Vec::new();
        let mut seen: Vec<(Board, usize)> = vec![(*board, 0)];
        let mut at = *board;
        let stop = |steps, last, end| BoundsVariation { steps, last, end };
        loop {
            if let Turn::GameOver { value } = self.rules.turn(&at) {
                return Ok(stop(steps, at, PvEnd::GameOver { value }));
            }
            if steps.len() >= max_plies {
                return Ok(stop(steps, at, PvEnd::Limit));
            }
            let m = self.best_moves(&at)?[0];
            steps.push(m);
            if m.captured > 0 {
                seen.clear();
            }
            at = m.child;
            let ply = steps.len();
            // A position is the board and the side to move: the parity of the ply.
            if seen.iter().any(|&(b, p)| b == at && p % 2 == ply % 2) {
                return Ok(stop(steps, at, PvEnd::Repetition));
            }
            seen.push((at, ply));
        }
    }
}

/// The own-row tables' slot of a repetition rule.
fn repetition_slot(repetition: Repetition) -> usize {
    match repetition {
        Repetition::First => 0,
        Repetition::Third => 1,
    }
}
