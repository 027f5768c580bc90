//! The own-row values, probed: [`OwnRowTables`], the view of a [`BoundsDatabase`] that
//! fixes the repetition rule (the first or the third occurrence of a position ends the
//! game), and what it answers. A position with a game's history is proved by the search of
//! [`crate::solve::own_row`] from the tables (the own-row values where they are built,
//! else the bounds; `proof.rs`); many boards with an empty history are read from the
//! tables alone (`batch.rs`). Their checks are in [`crate::verify`](mod@crate::verify).

mod batch;
mod proof;

use super::tables::LayerSet;
use super::{BoundsDatabase, ProbeError};
use crate::board::{from_bits, Board};
use crate::rules::{Repetition, Rules};
use crate::solve::own_row::proof_search::{InLayer, Leaves};
use crate::solve::own_row::{self, Proof};
use crate::store::LayerFile;
use std::path::{Path, PathBuf};

/// The own-row values of one repetition rule, beside the bounds of a [`BoundsDatabase`]
/// ([`BoundsDatabase::own_row`]): what a position is worth to its mover when a position's
/// second occurrence (or its third) since the last capture ends the game with each side
/// keeping its own row. A borrowed view, cheap to make and to copy; the block cache is the
/// database's.
///
/// Requires the own-row layers of the rule (`awari build --cycles own-row-first` or
/// `own-row-third`); where a layer's own-row values are not built, its bounds answer in
/// their place (`awari build --cycles bounds`), which hold for an empty history too.
#[derive(Clone, Copy, Debug)]
pub struct OwnRowTables<'a> {
    db: &'a BoundsDatabase,
    repetition: Repetition,
}

impl BoundsDatabase {
    /// The own-row values of `repetition` beside these bounds.
    pub fn own_row(&self, repetition: Repetition) -> OwnRowTables<'_> {
        OwnRowTables {
            db: self,
            repetition,
        }
    }
}

impl<'a> OwnRowTables<'a> {
    /// The repetition rule.
    pub fn repetition(&self) -> Repetition {
        self.repetition
    }

    /// The database (the bounds) they are beside.
    pub fn database(&self) -> &'a BoundsDatabase {
        self.db
    }

    /// The rule set.
    pub fn rules(&self) -> Rules {
        self.db.rules()
    }

    /// The database folder (the tables are in its bounds folder).
    pub fn dir(&self) -> &'a Path {
        self.db.dir()
    }

    fn set(&self) -> &'a LayerSet {
        self.db.own_row_set(self.repetition)
    }

    /// The largest `n` such that the own-row values of layers `0..=n` are all present.
    pub fn complete_up_to(&self) -> Option<u32> {
        self.set().complete_up_to()
    }

    /// The low and high files of layer `seeds`, if present.
    pub fn layer(&self, seeds: u32) -> Option<(&'a LayerFile, &'a LayerFile)> {
        super::bounds::pair(self.set().layer(seeds)?)
    }

    /// The files of layer `seeds`, or the error that says it is missing.
    pub(crate) fn layer_or_missing(
        &self,
        seeds: u32,
    ) -> Result<(&'a LayerFile, &'a LayerFile), ProbeError> {
        let files = self.set().layer_or_missing(seeds)?;
        Ok(super::bounds::pair(files).expect("a pair layer has its low file"))
    }

    /// The layers whose high file is on disk without its low file, each with the path of
    /// the missing file: not present (a probe into one says so, and the next build of the
    /// kind builds it again, both files), but not simply unbuilt either.
    pub fn missing_low_files(&self) -> Vec<(u32, PathBuf)> {
        self.set().missing_companions()
    }
}

/// A position under the own-row rule with the value proved for its mover, and every legal
/// move with the interval proved for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnRowAnswer {
    /// What the position is proved to be worth (exact when `low == high`).
    pub value: Proof,
    /// Every legal move, in pit order (empty when the game is over).
    pub moves: Vec<OwnRowMove>,
}

/// One legal move under the own-row rule, after the history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OwnRowMove {
    /// The mover's pit, 0..=5.
    pub pit: u8,
    /// Seeds it captures (a capture empties the history).
    pub captured: u8,
    /// The position it leaves, from the opponent's side.
    pub child: Board,
    /// Whether it repeats a position for the last time allowed: the game ends there, each
    /// side keeping its own row.
    pub ends_by_repetition: bool,
    /// What the mover is proved to get by it, at least.
    pub low: i8,
    /// And at most.
    pub high: i8,
}

impl OwnRowAnswer {
    /// The best moves, in pit order: those proved to keep the value when it is exact (none
    /// when no move was proved to keep it within the budget), else those with the largest
    /// proved low.
    pub fn best_moves(&self) -> Vec<OwnRowMove> {
        let v = self.value;
        let top = self.moves.iter().map(|m| m.low).max();
        self.moves
            .iter()
            .filter(|m| {
                if v.exact() {
                    m.keeps(v.low)
                } else {
                    Some(m.low) == top
                }
            })
            .copied()
            .collect()
    }
}

impl OwnRowMove {
    /// Whether the move is proved to keep `value` (exact): its interval is `value` alone.
    pub fn keeps(&self, value: i8) -> bool {
        self.low == value && self.high == value
    }
}

/// The search's leaves read from the tables: a position's own-row pair with an empty
/// history (its bounds where its own-row layer is not built), and the bounds' strategy
/// regions.
impl Leaves for OwnRowTables<'_> {
    type Error = ProbeError;
    fn fresh(&self, bits: u128, seeds: u32) -> Result<(i8, i8), ProbeError> {
        let board = from_bits(bits);
        if self.layer(seeds).is_none() && self.db.layer(seeds).is_some() {
            let b = self.db.bounds(&board)?;
            return Ok((b.low, b.high));
        }
        // Without either table, the own-row layer is the one to build.
        let (low, high) = self.layer_or_missing(seeds)?;
        let (low, high) = self.db.cache().pair(low, high, &board)?;
        Ok((low as i8, high as i8))
    }
    fn in_layer(&self, bits: u128, seeds: u32) -> Result<InLayer, ProbeError> {
        let board = from_bits(bits);
        let memoryless = if self.db.layer(seeds).is_none() {
            // Without the bounds no strategy region is known: a pair that never lets the
            // test ignore a position of the history.
            let n = seeds as i8;
            (-n, n)
        } else {
            let b = self.db.bounds(&board)?;
            (b.low, b.high)
        };
        Ok(InLayer {
            fresh: self.fresh(bits, seeds)?,
            memoryless,
            fresh_from_here: false,
        })
    }
}

/// Checks that `history` can be the positions since the last capture before `board`:
/// the same seeds on the board, and no position there as often as ends the game.
fn check_history(
    repetition: Repetition,
    board: &Board,
    history: &[Board],
) -> Result<(), ProbeError> {
    let n = board.seeds();
    if let Some(b) = history.iter().find(|b| b.seeds() != n) {
        return Err(ProbeError::History(format!(
            "{} has {} seeds and the position {n}: the history holds the positions since the last capture, which all have the same seeds",
            b,
            b.seeds()
        )));
    }
    let keys = own_row::search_history(history);
    let mut all = keys.clone();
    all.push((crate::board::to_bits(board), false));
    for (i, k) in all.iter().enumerate() {
        if repetition.ends_game(all[..i].iter().filter(|j| *j == k).count()) {
            return Err(ProbeError::History(format!(
                "{} occurs {} times: the game ended there by repetition",
                from_bits(k.0),
                repetition.ends_at()
            )));
        }
    }
    Ok(())
}

/// A position is worth its best move, so at least its proved `low`: when only one move can
/// reach that low (the others' highs are below it), that move is the best, worth the
/// position's value, and its low is raised to `low`.
fn raise_the_only_reaching(moves: &mut [OwnRowMove], low: i8) {
    let mut reaching = moves.iter_mut().filter(|m| m.high >= low);
    if let (Some(m), None) = (reaching.next(), reaching.next()) {
        m.low = m.low.max(low);
    }
}

/// Whether `child`, played after `path` (oldest first, the last being its parent), is a
/// position's `ends_at`-th occurrence.
fn repeats_to_the_end(repetition: Repetition, path: &[Board], child: &Board) -> bool {
    // The child's side moves at the positions an even number of moves before it.
    let seen = path
        .iter()
        .rev()
        .skip(1)
        .step_by(2)
        .filter(|b| *b == child)
        .count();
    repetition.ends_game(seen)
}

/// The position after playing `pits` (each 0..=5, from the side to move's left) from
/// `start`, and its history under the own-row rule: the positions since the last capture,
/// oldest first, each from its own mover (see [`OwnRowTables::value`]).
///
/// # Errors
///
/// [`ProbeError::History`] for an illegal move, or a move after the game ended (by the
/// rules, or by a repetition under `repetition`).
pub fn own_row_history(
    rules: Rules,
    repetition: Repetition,
    start: &Board,
    pits: &[u8],
) -> Result<(Board, Vec<Board>), ProbeError> {
    let mut at = *start;
    let mut history: Vec<Board> = Vec::new();
    for (ply, &pit) in pits.iter().enumerate() {
        let moves = rules.legal_moves(&at);
        if moves.is_empty() {
            return Err(ProbeError::History(format!(
                "move {}: the game is over",
                ply + 1
            )));
        }
        let Some(m) = moves.iter().find(|m| m.pit == pit) else {
            return Err(ProbeError::History(format!(
                "move {}: pit {} is not a legal move",
                ply + 1,
                pit + 1
            )));
        };
        history.push(at);
        if m.captured > 0 {
            history.clear();
        } else if repeats_to_the_end(repetition, &history, &m.child) && ply + 1 < pits.len() {
            return Err(ProbeError::History(format!(
                "move {}: the game ended there by repetition",
                ply + 1
            )));
        }
        at = m.child;
    }
    Ok((at, history))
}
