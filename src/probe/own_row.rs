//! The own-row rule with a game's history, probed: the value of a position after the
//! positions since the last capture, proved by the search of [`crate::solve::own_row`] from
//! the tables (the own-row values where they are built, else the bounds).

use super::{BoundsDatabase, ProbeError};
use crate::board::{from_bits, Board};
use crate::rules::{Repetition, Rules, Turn};
use crate::solve::own_row::search::{own_row_bits, InLayer, Leaves};
use crate::solve::own_row::{self, Proof};
use rayon::prelude::*;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

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

/// The search's leaves read from the tables.
pub(super) struct TableLeaves<'a> {
    pub(super) db: &'a BoundsDatabase,
    pub(super) repetition: Repetition,
}

impl Leaves for TableLeaves<'_> {
    type Error = ProbeError;
    fn fresh(&self, bits: u128, seeds: u32) -> Result<(i8, i8), ProbeError> {
        let board = from_bits(bits);
        if self.db.own_row_layer(self.repetition, seeds).is_none() && self.db.layer(seeds).is_some()
        {
            let b = self.db.bounds(&board)?;
            return Ok((b.low, b.high));
        }
        // Without either table, the own-row layer is the one to build.
        let (low, high) = self.db.own_row_layer_or_missing(self.repetition, seeds)?;
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

/// The tables' leaves, narrowed by one probe's own searches of the capture children the
/// tables leave open (see [`BoundsDatabase::prove_deepening`]).
struct DeepLeaves<'a> {
    tables: TableLeaves<'a>,
    /// Fresh intervals proved by searching a position on its own: each inside the tables'
    /// (a search's interval holds, and so does their intersection).
    narrowed: RefCell<HashMap<u128, (i8, i8)>>,
    /// For each search under way, innermost last: the capture children that straddled one
    /// of its thresholds (with their seeds, and how many lines they left open).
    straddled: RefCell<Vec<HashMap<u128, (u32, u64)>>>,
    /// Positions searched on their own that no budget narrows further: exact, or stuck
    /// themselves.
    settled: RefCell<HashSet<u128>>,
}

impl<'a> DeepLeaves<'a> {
    fn new(db: &'a BoundsDatabase, repetition: Repetition) -> Self {
        DeepLeaves {
            tables: TableLeaves { db, repetition },
            narrowed: RefCell::default(),
            straddled: RefCell::default(),
            settled: RefCell::default(),
        }
    }

    /// Keeps what a search of `bits` (`seeds` seeds) on its own, with an empty history,
    /// proved: its interval met with the one known so far; `settled` when no budget would
    /// narrow it further. Whether the interval narrowed.
    fn learn(
        &self,
        bits: u128,
        seeds: u32,
        proved: &Proof,
        settled: bool,
    ) -> Result<bool, ProbeError> {
        let before = self.fresh(bits, seeds)?;
        let after = (before.0.max(proved.low), before.1.min(proved.high));
        if settled {
            self.settled.borrow_mut().insert(bits);
        }
        if after == before {
            return Ok(false);
        }
        self.narrowed.borrow_mut().insert(bits, after);
        Ok(true)
    }
}

impl Leaves for DeepLeaves<'_> {
    type Error = ProbeError;
    fn fresh(&self, bits: u128, seeds: u32) -> Result<(i8, i8), ProbeError> {
        match self.narrowed.borrow().get(&bits) {
            Some(&narrowed) => Ok(narrowed),
            None => self.tables.fresh(bits, seeds),
        }
    }
    fn in_layer(&self, bits: u128, seeds: u32) -> Result<InLayer, ProbeError> {
        let mut known = self.tables.in_layer(bits, seeds)?;
        if let Some(&narrowed) = self.narrowed.borrow().get(&bits) {
            known.fresh = narrowed;
        }
        Ok(known)
    }
    fn straddled(&self, bits: u128, seeds: u32) {
        if let Some(met) = self.straddled.borrow_mut().last_mut() {
            met.entry(bits).or_insert((seeds, 0)).1 += 1;
        }
    }
}

/// The least budget a capture's child is searched with on its own; each time its search
/// runs out, the next gets twice as many.
const CHILD_BUDGET: u64 = 1000;

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

impl BoundsDatabase {
    /// The value of `board` for its mover under the own-row rule, after `history` (the
    /// positions since the last capture, oldest first, each seen from its own mover; the
    /// last is the one just before `board`; empty just after a capture or at the
    /// opening), proved within `budget` search nodes: exact, or the interval proved.
    ///
    /// Its leaves are the own-row values of `repetition` where they are built, else the
    /// bounds (which hold for an empty history too), and the bounds' strategy regions.
    /// Where every line it leaves open ends at a capture into a position the tables leave
    /// open, it searches those positions on their own and searches again with what they
    /// prove (every search within `budget` in all). The proof is `stuck` when no budget
    /// would prove more.
    ///
    /// # Errors
    ///
    /// A history that cannot come before `board` ([`ProbeError::History`]), a layer the
    /// search needs with neither table, or a file that cannot be read.
    pub fn own_row_value(
        &self,
        repetition: Repetition,
        board: &Board,
        history: &[Board],
        budget: u64,
    ) -> Result<Proof, ProbeError> {
        check_history(repetition, board, history)?;
        let leaves = DeepLeaves::new(self, repetition);
        self.prove_deepening(&leaves, board, history, budget)
    }

    /// The search of [`BoundsDatabase::own_row_value`], deepened where it is stuck: when
    /// every line it left open ends at a capture into a position whose interval in the
    /// tables straddles a threshold, those children are searched on their own (with an
    /// empty history, which a capture leaves; the most met first, each from
    /// [`CHILD_BUDGET`] nodes, twice as many each time its search runs out, and deepened
    /// in turn), the intervals they prove replace the tables' for the rest of the probe,
    /// and the position is searched again. It ends exact, out of `budget` (every search
    /// counted), or stuck: no child's interval can be narrowed with any budget.
    fn prove_deepening(
        &self,
        leaves: &DeepLeaves,
        board: &Board,
        history: &[Board],
        budget: u64,
    ) -> Result<Proof, ProbeError> {
        let (rules, repetition) = (self.rules(), leaves.tables.repetition);
        let mut left = budget;
        let (mut low, mut high) = (i8::MIN, i8::MAX);
        // The budget of each child's last search that ran out of it.
        let mut children: HashMap<u128, u64> = HashMap::new();
        loop {
            leaves.straddled.borrow_mut().push(HashMap::new());
            let searched = own_row::prove(rules, repetition, board, history, leaves, left);
            let met = leaves.straddled.borrow_mut().pop().unwrap_or_default();
            let p = searched?;
            left -= p.nodes.min(left);
            // Every round's interval holds: keep what they prove together.
            (low, high) = (low.max(p.low), high.min(p.high));
            let spent = budget - left;
            let proof = |stuck| Proof {
                low,
                high,
                nodes: spent,
                stuck: stuck && low < high,
            };
            if low == high || !p.stuck || left == 0 {
                return Ok(proof(p.stuck && left > 0));
            }
            let mut todo: Vec<(u128, u32, u64)> = met
                .into_iter()
                .filter(|(bits, _)| !leaves.settled.borrow().contains(bits))
                .map(|(bits, (seeds, lines))| (bits, seeds, lines))
                .collect();
            if todo.is_empty() {
                return Ok(proof(true));
            }
            todo.sort_unstable_by_key(|&(bits, _, lines)| (std::cmp::Reverse(lines), bits));
            let (mut narrowed, mut cut) = (false, false);
            for (bits, seeds, _) in todo {
                if left == 0 {
                    cut = true;
                    break;
                }
                let share = children
                    .get(&bits)
                    .map_or(CHILD_BUDGET, |b| b.saturating_mul(2))
                    .min(left);
                let q = self.prove_deepening(leaves, &from_bits(bits), &[], share)?;
                left -= q.nodes.min(left);
                let settled = q.exact() || q.stuck;
                narrowed |= leaves.learn(bits, seeds, &q, settled)?;
                if !settled {
                    cut = true;
                    children.insert(bits, share);
                }
            }
            if !narrowed && !cut {
                return Ok(proof(true));
            }
        }
    }

    /// [`BoundsDatabase::own_row_value`], and every legal move's interval: a capture's
    /// from its child's own-row value (its history is empty), a quiet move's by a search
    /// of its child after the history and `board` (each within `budget` nodes). The moves
    /// are searched first, and the position's value is the best move's interval met with
    /// its own search (which uses what the moves' searches proved of capture children);
    /// no move's high exceeds the value's. With an empty history each move's interval is
    /// also met with what the tables alone prove of it
    /// ([`BoundsDatabase::own_row_table_answers`]), and whatever the history, the only
    /// move that can reach the value's low (the others' highs below it) gets that low. The value's `nodes` count every search of the
    /// answer.
    ///
    /// # Errors
    ///
    /// As [`BoundsDatabase::own_row_value`].
    pub fn own_row_answer(
        &self,
        repetition: Repetition,
        board: &Board,
        history: &[Board],
        budget: u64,
    ) -> Result<OwnRowAnswer, ProbeError> {
        check_history(repetition, board, history)?;
        // One set of leaves for the position and its moves: what one search proves of a
        // capture's child, the others use.
        let leaves = DeepLeaves::new(self, repetition);
        let Turn::Moves(list) = self.rules().turn(board) else {
            let value = self.prove_deepening(&leaves, board, history, budget)?;
            return Ok(OwnRowAnswer {
                value,
                moves: Vec::new(),
            });
        };
        let mut after: Vec<Board> = history.to_vec();
        after.push(*board);
        let mut moves = Vec::new();
        let mut nodes = 0;
        // Whether no move's search ran out of its budget (so that a larger one proves
        // nothing more of them).
        let mut settled = true;
        for m in list.iter() {
            let c = m.captured as i8;
            let repeats = m.captured == 0 && repeats_to_the_end(repetition, &after, &m.child);
            let (low, high) = if repeats {
                let w = -own_row_bits(crate::board::to_bits(&m.child)) as i8;
                (w, w)
            } else {
                // A capture empties the history.
                let before: &[Board] = if m.captured > 0 { &[] } else { &after };
                let p = self.prove_deepening(&leaves, &m.child, before, budget)?;
                nodes += p.nodes;
                let done = p.exact() || p.stuck;
                settled &= done;
                if m.captured > 0 {
                    // What the position's own search will meet at this capture.
                    let bits = crate::board::to_bits(&m.child);
                    leaves.learn(bits, m.child.seeds(), &p, done)?;
                }
                (c - p.high, c - p.low)
            };
            moves.push(OwnRowMove {
                pit: m.pit,
                captured: m.captured,
                child: m.child,
                ends_by_repetition: repeats,
                low,
                high,
            });
        }
        if history.is_empty() {
            // What the tables alone prove of each move (`probe --batch`'s answer) holds
            // too: a quiet move's tests at every threshold, where a search out of budget
            // may not have asked some.
            let known = self.own_row_table_answers(repetition, std::slice::from_ref(board))?;
            for (m, t) in moves.iter_mut().zip(&known[0].moves) {
                (m.low, m.high) = (m.low.max(t.low), m.high.min(t.high));
            }
        }
        // The position is worth its best move (it is not itself a repetition that ends the
        // game: the history was checked). The moves were searched first, so that what they
        // proved of capture children narrows the position's own search; each interval
        // holds, and so does their meeting.
        let best_low = moves.iter().map(|m| m.low).max().unwrap_or(i8::MIN);
        let best_high = moves.iter().map(|m| m.high).max().unwrap_or(i8::MAX);
        let mut value = Proof {
            low: best_low,
            high: best_high,
            nodes,
            stuck: false,
        };
        if !value.exact() {
            let p = self.prove_deepening(&leaves, board, history, budget)?;
            value = Proof {
                low: best_low.max(p.low),
                high: best_high.min(p.high),
                nodes: nodes + p.nodes,
                stuck: p.stuck && settled,
            };
            value.stuck &= !value.exact();
        }
        // And no move is worth more than the position.
        for m in &mut moves {
            m.high = m.high.min(value.high);
            debug_assert!(m.low <= m.high, "a move proved above its position");
        }
        raise_the_only_reaching(&mut moves, value.low);
        Ok(OwnRowAnswer { value, moves })
    }
}

/// A position is worth its best move, so at least its proved `low`: when only one move can
/// reach that low (the others' highs are below it), that move is the best, worth the
/// position's value, and its low is raised to `low`.
pub(super) fn raise_the_only_reaching(moves: &mut [OwnRowMove], low: i8) {
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
/// oldest first, each from its own mover (see [`BoundsDatabase::own_row_value`]).
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

/// One layer of own-row values, read whole and checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnRowLayerCheck {
    /// The layer.
    pub seeds: u32,
    /// Its positions.
    pub positions: u64,
    /// Positions whose value is exact (low = high).
    pub exact: u64,
    /// Bytes of its two files.
    pub bytes: u64,
    /// Positions that fail a check (see [`BoundsDatabase::check_own_row`]).
    pub faults: u64,
    /// The first of them, and why.
    pub first_fault: Option<String>,
}

impl BoundsDatabase {
    /// Reads layer `seeds` of the own-row values whole (every block's checksum, a block at a
    /// time a thread) and checks
    /// what holds whatever the history: `low ≤ high`, both within the bounds (when the
    /// bounds layer is there), a finished game's value, a position whose every move
    /// captures (its pair is the best over its captures of the children's pairs), and that
    /// no capture proves more than the high end. The lower layers are read as needed.
    /// `None` when the layer is not built. The positions are checked in parallel, on the
    /// rayon pool of the caller.
    ///
    /// # Errors
    ///
    /// A file that cannot be read or is damaged, or a lower layer missing.
    pub fn check_own_row(
        &self,
        repetition: Repetition,
        seeds: u32,
    ) -> Result<Option<OwnRowLayerCheck>, ProbeError> {
        let Some((low_file, high_file)) = self.own_row_layer(repetition, seeds) else {
            return Ok(None);
        };
        let bounds = self.layer(seeds);
        let leaves = TableLeaves {
            db: self,
            repetition,
        };
        let mut check = OwnRowLayerCheck {
            seeds,
            positions: low_file.positions(),
            exact: 0,
            bytes: low_file.bytes() + high_file.bytes(),
            faults: 0,
            first_fault: None,
        };
        // Block by block, in parallel (a layer of 36 seeds is 35 GB of pairs), the blocks'
        // results taken in order so that the first fault named is the first in the layer,
        // however the threads ran.
        let size = u64::from(low_file.block_size());
        let runs: Vec<_> = (0..low_file.blocks())
            .into_par_iter()
            .map(|block| {
                let start = block * size;
                let (low, high) = (low_file.read_block(block)?, high_file.read_block(block)?);
                // The bounds' blocks where they line up with the pair's, else one at a time.
                let bounds_block = match bounds {
                    Some((bl, bh)) if bl.block_size() == low_file.block_size() => {
                        Some((bl.read_block(block)?, bh.read_block(block)?))
                    }
                    _ => None,
                };
                let mut tally = (0u64, 0u64, None);
                let end = start + low.len() as u64;
                for (i, board) in crate::index::walk(seeds, start, end) {
                    let j = (i - start) as usize;
                    let pair = (low[j], high[j]);
                    tally.0 += u64::from(pair.0 == pair.1);
                    let bounds = match (&bounds_block, bounds) {
                        (Some((bl, bh)), _) => Some((bl[j], bh[j])),
                        (None, Some(_)) => {
                            let b = self.bounds(&board)?;
                            Some((b.low, b.high))
                        }
                        (None, None) => None,
                    };
                    if let Some(why) = local_fault(self.rules(), &board, pair, &leaves, bounds)? {
                        tally.1 += 1;
                        tally.2.get_or_insert(format!("{board}: {why}"));
                    }
                }
                Ok(tally)
            })
            .collect::<Result<_, ProbeError>>()?;
        for (exact, faults, first) in runs {
            check.exact += exact;
            check.faults += faults;
            if check.first_fault.is_none() {
                check.first_fault = first;
            }
        }
        Ok(Some(check))
    }

    /// As [`BoundsDatabase::check_own_row`], for `count` positions of layer `seeds` in runs
    /// drawn at random as the values' sampled check draws them
    /// ([`crate::verify::verify_sampled`]), each pair read through the block cache (its
    /// blocks checked as they are read); a sample at least the layer's size is the whole
    /// check. `positions` and `exact` count the sample.
    ///
    /// # Errors
    ///
    /// As [`BoundsDatabase::check_own_row`].
    pub fn check_own_row_sampled(
        &self,
        repetition: Repetition,
        seeds: u32,
        count: u64,
    ) -> Result<Option<OwnRowLayerCheck>, ProbeError> {
        if count >= crate::index::size(seeds) {
            return self.check_own_row(repetition, seeds);
        }
        let Some((low_file, high_file)) = self.own_row_layer(repetition, seeds) else {
            return Ok(None);
        };
        let run = crate::verify::run_length(low_file.block_size(), count);
        let leaves = TableLeaves {
            db: self,
            repetition,
        };
        let has_bounds = self.layer(seeds).is_some();
        let mut check = OwnRowLayerCheck {
            seeds,
            positions: count,
            exact: 0,
            bytes: low_file.bytes() + high_file.bytes(),
            faults: 0,
            first_fault: None,
        };
        for (start, len) in crate::verify::sample_runs(seeds, count, run) {
            for (_, board) in crate::index::walk(seeds, start, start + len) {
                let (l, h) = self.cache().pair(low_file, high_file, &board)?;
                let (l, h) = (l as i8, h as i8);
                check.exact += u64::from(l == h);
                let bounds = if has_bounds {
                    let b = self.bounds(&board)?;
                    Some((b.low, b.high))
                } else {
                    None
                };
                if let Some(why) = local_fault(self.rules(), &board, (l, h), &leaves, bounds)? {
                    check.faults += 1;
                    check.first_fault.get_or_insert(format!("{board}: {why}"));
                }
            }
        }
        Ok(Some(check))
    }
}

/// What is wrong with one position's pair `(l, h)`, by the checks of
/// [`BoundsDatabase::check_own_row`].
fn local_fault(
    rules: Rules,
    board: &Board,
    (l, h): (i8, i8),
    leaves: &TableLeaves<'_>,
    bounds: Option<(i8, i8)>,
) -> Result<Option<String>, ProbeError> {
    if l > h {
        return Ok(Some(format!("low {l} above high {h}")));
    }
    if let Some((bl, bh)) = bounds {
        if l < bl || h > bh {
            return Ok(Some(format!("[{l}, {h}] outside the bounds [{bl}, {bh}]")));
        }
    }
    let turn = rules.packed_turn(crate::board::to_bits(board));
    if let Some(value) = turn.over {
        return Ok((l != value || h != value)
            .then(|| format!("[{l}, {h}] for a finished game worth {value}")));
    }
    let quiet = (0..6).any(|p| turn.legal & (1 << p) != 0 && turn.captured[p] == 0);
    let n = board.seeds();
    // The first capture whose sure gain is above `h`, by pit.
    let mut above: Option<(usize, i8)> = None;
    let captures = own_row::best_of_moves(&turn, |pit, c, child| {
        if c == 0 {
            return Ok::<_, ProbeError>(None);
        }
        let (cl, ch) = leaves.fresh(child, n - u32::from(c))?;
        let sure = c as i8 - ch;
        if sure > h && above.is_none() {
            above = Some((pit, sure));
        }
        Ok(Some((cl, ch)))
    })?;
    if let Some((pit, sure)) = above {
        return Ok(Some(format!(
            "pit {} captures a sure {sure}, above high {h}",
            pit + 1
        )));
    }
    Ok(match captures {
        Some(best) if !quiet && best != (l, h) => Some(format!(
            "[{l}, {h}] where its captures give [{}, {}]",
            best.0, best.1
        )),
        _ => None,
    })
}
