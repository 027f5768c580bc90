//! The bounds tables, probed: for the rule "an endless game ends with each side keeping its
//! own row", per position the pair `low ≤ high` that the two sides can guarantee whatever
//! the history (see [`crate::solve::bounds`] for the semantics and the solver).
//!
//! Files: `DIR/own-row/<rules>/layer-NN.awlo` (low) and `layer-NN.awhi` (high)
//! ([`crate::store::bounds_dir`]), in the format of the value tables ([`crate::store`])
//! with their own table kinds ([`TableKind::BoundsLow`], [`TableKind::BoundsHigh`]), so a
//! values file is never read as a bound and a bound never as a value. The high file is
//! written after the low one, so a layer with its high file present is complete.
//!
//! [`TableKind::BoundsLow`]: crate::store::TableKind::BoundsLow
//! [`TableKind::BoundsHigh`]: crate::store::TableKind::BoundsHigh

use super::tables::{Access, LayerFiles, LayerSet};
use super::{ProbeError, PvEnd};
use crate::board::Board;
use crate::rules::{Repetition, Rules, Turn};
use crate::store::{BlockCache, LayerFile, StoreError, Tables};
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

/// Blocks the bounds' database keeps decompressed: up to 256 MiB at the default block size.
/// An own-row search with a history visits positions all over its layer and the layers its
/// captures reach (a 20-seed position's search with 10⁵ nodes touches thousands of blocks
/// of each table), so the few hundred blocks of the values' cache are read again and again:
/// measured on abapa layer 20 after 200 capture-free moves, 58 s with 256 blocks, 3.5 s with
/// this many (five searches of 10⁵ nodes).
const OWN_ROW_CACHE_BYTES: usize = 256 << 20;

/// The bounds tables of one rule set, opened for probing, with the own-row values beside
/// them ([`BoundsDatabase::own_row`]). Probing keeps up to 256 MiB of decompressed blocks.
#[derive(Debug)]
pub struct BoundsDatabase {
    /// The bounds: the high files are the markers, the low ones their companions.
    bounds: LayerSet,
    /// The own-row values' pairs, by repetition (first, third).
    own_row: [LayerSet; 2],
    cache: BlockCache,
}

impl BoundsDatabase {
    /// Opens the bounds tables of `rules` under `db` (the database folder, as for
    /// [`crate::Database::open`]), and the own-row values beside them. Missing layers are
    /// fine; a probe into one is an error. A layer counts only when both its files are
    /// there.
    ///
    /// # Errors
    ///
    /// A present file that is not a table of the right kind, rules and layer, or is damaged.
    pub fn open(db: impl AsRef<Path>, rules: Rules) -> Result<BoundsDatabase, StoreError> {
        let db = db.as_ref();
        let open = |tables| LayerSet::open(db, rules, tables, Access::Read);
        Ok(BoundsDatabase {
            bounds: open(Tables::Bounds)?,
            own_row: [
                open(Tables::OwnRow(Repetition::First))?,
                open(Tables::OwnRow(Repetition::Third))?,
            ],
            cache: BlockCache::new(OWN_ROW_CACHE_BYTES),
        })
    }

    /// The own-row values' set of `repetition` (see [`BoundsDatabase::own_row`]).
    pub(crate) fn own_row_set(&self, repetition: Repetition) -> &LayerSet {
        &self.own_row[repetition_slot(repetition)]
    }

    /// The bounds layers whose high file is on disk without its low file, each with the
    /// path of the missing file. Such a layer is not present (a probe into it says so, and
    /// the next build of the bounds builds it again, both files), but it is not simply
    /// unbuilt either.
    pub fn missing_low_files(&self) -> Vec<(u32, PathBuf)> {
        self.bounds.missing_companions()
    }

    /// The rule set.
    pub fn rules(&self) -> Rules {
        self.bounds.rules()
    }

    /// The database folder (the bounds are in its bounds folder).
    pub fn dir(&self) -> &Path {
        self.bounds.db()
    }

    /// The largest `n` such that layers `0..=n` are all present.
    pub fn complete_up_to(&self) -> Option<u32> {
        self.bounds.complete_up_to()
    }

    /// The block cache the probes share.
    pub(crate) fn cache(&self) -> &BlockCache {
        &self.cache
    }

    /// The low and high files of layer `seeds`, if present.
    pub fn layer(&self, seeds: u32) -> Option<(&LayerFile, &LayerFile)> {
        pair(self.bounds.layer(seeds)?)
    }

    /// The files of layer `seeds`, or the error that says it is missing.
    pub(crate) fn layer_or_missing(
        &self,
        seeds: u32,
    ) -> Result<(&LayerFile, &LayerFile), ProbeError> {
        Ok(pair(self.bounds.layer_or_missing(seeds)?).expect("a pair layer has its low file"))
    }

    /// The pair of `board`.
    ///
    /// # Errors
    ///
    /// The board's layer is missing, or a file cannot be read or is damaged.
    pub fn bounds(&self, board: &Board) -> Result<Bounds, ProbeError> {
        let (low, high) = self.layer_or_missing(board.seeds())?;
        let (low, high) = self.cache.pair(low, high, board)?;
        Ok(Bounds {
            low: low as i8,
            high: high as i8,
        })
    }

    /// Every legal move with its pair, in pit order (empty when the game is over).
    ///
    /// # Errors
    ///
    /// As [`BoundsDatabase::bounds`], for the children's layers.
    pub fn moves_with_bounds(&self, board: &Board) -> Result<Vec<MoveBounds>, ProbeError> {
        let mut out = Vec::new();
        for m in self.rules().legal_moves(board).iter() {
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
            if let Turn::GameOver { value } = self.rules().turn(&at) {
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

/// A pair layer's low and high files. (A pair layer is present only with both: see
/// [`LayerSet::open`].)
pub(super) fn pair(files: &LayerFiles) -> Option<(&LayerFile, &LayerFile)> {
    Some((files.companion.as_ref()?, &files.marker))
}
