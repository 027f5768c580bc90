//! The own-row value of one position after its history, proved by the search of
//! [`crate::solve::own_row`] from the tables, deepened where the tables leave a capture's
//! child open; and its every move's interval.

use super::{check_history, raise_the_only_reaching, repeats_to_the_end};
use super::{OwnRowAnswer, OwnRowMove, OwnRowTables};
use crate::board::{from_bits, Board};
use crate::probe::ProbeError;
use crate::rules::{MoveList, Turn};
use crate::solve::own_row::proof_search::{own_row_bits, InLayer, Leaves};
use crate::solve::own_row::{self, Proof};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

/// The tables' leaves, narrowed by one probe's own searches of the capture children the
/// tables leave open (see [`OwnRowTables::prove_deepening`]).
struct DeepLeaves<'a> {
    tables: OwnRowTables<'a>,
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
    fn new(tables: OwnRowTables<'a>) -> Self {
        DeepLeaves {
            tables,
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

impl OwnRowTables<'_> {
    /// The value of `board` for its mover under the own-row rule, after `history` (the
    /// positions since the last capture, oldest first, each seen from its own mover; the
    /// last is the one just before `board`; empty just after a capture or at the
    /// opening), proved within `budget` search nodes: exact, or the interval proved.
    ///
    /// Its leaves are the own-row values where they are built, else the
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
    pub fn value(
        &self,
        board: &Board,
        history: &[Board],
        budget: u64,
    ) -> Result<Proof, ProbeError> {
        check_history(self.repetition, board, history)?;
        let leaves = DeepLeaves::new(*self);
        self.prove_deepening(&leaves, board, history, budget)
    }

    /// The search of [`OwnRowTables::value`], deepened where it is stuck: when
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
        let (rules, repetition) = (self.rules(), self.repetition);
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

    /// [`OwnRowTables::value`], and every legal move's interval: a capture's from its
    /// child's own-row value (its history is empty), a quiet move's by a search of its
    /// child after the history and `board` (each within `budget` nodes). The moves are
    /// searched first, and the position's value is the best move's interval met with its
    /// own search (which uses what the moves' searches proved of capture children); no
    /// move's high exceeds the value's. With an empty history each move's interval is also
    /// met with what the tables alone prove of it ([`OwnRowTables::table_answers`]), and
    /// whatever the history, the only move that can reach the value's low (the others'
    /// highs below it) gets that low. The value's `nodes` count every search of the answer.
    ///
    /// # Errors
    ///
    /// As [`OwnRowTables::value`].
    pub fn answer(
        &self,
        board: &Board,
        history: &[Board],
        budget: u64,
    ) -> Result<OwnRowAnswer, ProbeError> {
        check_history(self.repetition, board, history)?;
        // One set of leaves for the position and its moves: what one search proves of a
        // capture's child, the others use.
        let leaves = DeepLeaves::new(*self);
        let Turn::Moves(list) = self.rules().turn(board) else {
            let value = self.prove_deepening(&leaves, board, history, budget)?;
            return Ok(OwnRowAnswer {
                value,
                moves: Vec::new(),
            });
        };
        let (mut moves, nodes, settled) = self.moves(&leaves, board, history, &list, budget)?;
        if history.is_empty() {
            // What the tables alone prove of each move (`probe --batch`'s answer) holds
            // too: a quiet move's tests at every threshold, where a search out of budget
            // may not have asked some.
            let known = self.table_answers(std::slice::from_ref(board))?;
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

    /// Every move of `list`, the legal moves of `board` after `history`, with its interval
    /// (see [`OwnRowTables::answer`]); the nodes their searches took, and whether no search
    /// ran out of its budget (so that a larger one proves nothing more of them).
    fn moves(
        &self,
        leaves: &DeepLeaves,
        board: &Board,
        history: &[Board],
        list: &MoveList,
        budget: u64,
    ) -> Result<(Vec<OwnRowMove>, u64, bool), ProbeError> {
        let mut after: Vec<Board> = history.to_vec();
        after.push(*board);
        let mut moves = Vec::new();
        let mut nodes = 0;
        let mut settled = true;
        for m in list.iter() {
            let c = m.captured as i8;
            let repeats = m.captured == 0 && repeats_to_the_end(self.repetition, &after, &m.child);
            let (low, high) = if repeats {
                let w = -own_row_bits(crate::board::to_bits(&m.child)) as i8;
                (w, w)
            } else {
                // A capture empties the history.
                let before: &[Board] = if m.captured > 0 { &[] } else { &after };
                let p = self.prove_deepening(leaves, &m.child, before, budget)?;
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
        Ok((moves, nodes, settled))
    }
}
