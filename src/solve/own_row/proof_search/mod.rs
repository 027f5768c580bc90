//! The proof search of the own-row rule: does the side to move, with this history, score at
//! least `d`? Three answers (yes, no, not proved within the budget), by a proof-number
//! search over capture-free continuations.
//!
//! # What a leaf may use
//!
//! The game is played on positions (a board and the side to move); a repetition ends it at
//! the position that occurs for the `ends_at`-th time since the last capture, each side
//! keeping its own row. A capture empties the history, so a capture's child is worth its
//! *fresh* value, the value of the game from it with nothing before it, which the caller's
//! [`Leaves`] bound (the tables of the layers below, exact or narrowed).
//!
//! A fresh interval is not, in general, valid at a position reached with a history: the
//! game from there can end sooner, at the next visit of a position already seen. But it
//! ends no later, and until it ends early the two games are the same game. So whatever
//! interval `[a, b]` holds for the fresh game from `X`, the game from `X` with history `H`
//! scores within `[min(a, m), max(b, M)]`, where `m` and `M` are the least and largest
//! own-row differences (seen from X's mover) of the positions of `H` whose count differs
//! from what the fresh game gives them: every position of `H` before `X`'s own entry on the
//! path. (The side that follows its fresh strategy gets its fresh guarantee, unless the game
//! stops early at one of those positions, where it gets that position's own-row
//! difference.) This *widened* interval is what the search takes from [`Leaves::fresh`] at
//! every position it reaches, the root included.
//!
//! A position from which none of the history can come back (outside the root's strongly
//! connected component of capture-free moves, [`InLayer::fresh_from_here`]) is valued fresh:
//! its history can never matter again.

mod tree;

pub(crate) use tree::{tree_bytes, Tree};

use crate::board::ROW_MASK;
use crate::rules::{Repetition, Rules};

/// The answer of one threshold search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tri {
    Yes,
    No,
    Unknown,
}

/// What the search knows of a position of the root's layer, from one lookup.
#[derive(Clone, Copy, Debug)]
pub(crate) struct InLayer {
    /// An interval that holds for the game from it with nothing before it.
    pub(crate) fresh: (i8, i8),
    /// Its memoryless bounds `(low, high)`: the values of the co-Büchi games of
    /// [`crate::solve::bounds`], over exits that hold for fresh children. Their winning
    /// regions are what [`Search`] uses to ignore a position of the history that a
    /// player's memoryless strategy never lets the game reach.
    pub(crate) memoryless: (i8, i8),
    /// Whether no position the search has seen can occur again once the game is there (it
    /// lies outside the root's strongly connected component of capture-free moves), so
    /// that it is worth its fresh value.
    pub(crate) fresh_from_here: bool,
}

/// What the search knows without searching.
pub(crate) trait Leaves {
    /// Why a lookup failed (a table that cannot be read).
    type Error;
    /// An interval `(low, high)` that holds for the game from `bits` (packed, seen from its
    /// mover, `seeds` seeds on the board) with nothing before it: a capture's child.
    fn fresh(&self, bits: u128, seeds: u32) -> Result<(i8, i8), Self::Error>;
    /// What is known of `bits`, a position of the root's layer (`seeds` seeds).
    fn in_layer(&self, bits: u128, seeds: u32) -> Result<InLayer, Self::Error>;
    /// Told that a capture's child `bits` (`seeds` seeds), whose [`Leaves::fresh`] interval
    /// straddled a threshold, left a line of the search open: a caller that can narrow
    /// that interval (by searching the child on its own) learns where it would help.
    fn straddled(&self, _bits: u128, _seeds: u32) {}
}

/// The own-row difference of a packed position for its mover.
#[inline]
pub(crate) fn own_row_bits(bits: u128) -> i32 {
    let row = |r: u128| (0..6).map(|p| ((r >> (8 * p)) & 0xFF) as i32).sum::<i32>();
    row(bits & ROW_MASK) - row((bits >> 48) & ROW_MASK)
}

/// The side bit of a path key: positions are the board and the side to move.
const SIDE: u128 = 1 << 127;

/// A position on the path, with what the memoryless test needs of it.
#[derive(Clone, Copy)]
struct Entry {
    key: u128,
    side: bool,
    /// Its own-row difference, for its own mover.
    own_row: i32,
    /// Its memoryless bounds, for its own mover.
    low: i32,
    high: i32,
    /// Its dangers for the current threshold ([`Search::dangers`]): bit 0 for
    /// [`DANGER_LOW`], bit 1 for [`DANGER_HIGH`].
    dangers: u8,
}

/// How many buckets [`Search::buckets`] has (a power of two).
const BUCKETS: usize = 1024;

/// The bucket of a path key.
#[inline]
fn bucket(key: u128) -> usize {
    let h = ((key as u64) ^ ((key >> 64) as u64)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> (64 - BUCKETS.trailing_zeros())) as usize
}

/// A danger of a position Q of the path, for the threshold `e` of Q's own side (see
/// [`Search::no_danger`]): Q's mover wins `≥ e` in the memoryless game (`low ≥ e`) but
/// its own-row difference is below `e`.
const DANGER_LOW: u8 = 1;
/// The other danger: Q's mover is held below `e` in the memoryless game (`high < e`) but
/// its own-row difference is at least `e`.
const DANGER_HIGH: u8 = 2;

/// No extreme yet.
const NONE: (i32, i32) = (i32::MAX, i32::MIN);

/// A search, with its path (the history, then the positions it is exploring).
pub(crate) struct Search<'a, L: Leaves> {
    rules: Rules,
    repetition: Repetition,
    seeds: u32,
    leaves: &'a L,
    /// The least and largest own-row difference, seen from the side of parity 0, of the
    /// path's positions before each entry: `before[i]` covers `path[..i]`.
    before: Vec<(i32, i32)>,
    /// The path's positions, entry by entry.
    entries: Vec<Entry>,
    /// Nodes expanded so far, over every threshold.
    pub(crate) nodes: u64,
    budget: u64,
    out_of_budget: bool,
    /// How many positions of the path fall in each bucket of their key: a position whose
    /// bucket is empty is not on the path, which spares the scan of [`Search::count`] for
    /// almost every move (the first repetition ends the game at once, so a search meets few
    /// positions already on its path).
    buckets: Vec<u32>,
    /// The threshold of the side of parity 0 in the threshold search under way (that of
    /// the other side is `1 − d`): what the entries' dangers are for.
    d: i32,
    /// The path's dangers (see [`Search::no_danger`]): `[side][kind]` counts the entries of
    /// that side (`false` = 0) with danger `kind` (0: [`DANGER_LOW`], 1: [`DANGER_HIGH`]).
    dangers: [[u32; 2]; 2],
    /// Threshold searches whose root could be neither proved nor disproved: every line
    /// ended at a leaf whose interval straddles the threshold.
    pub(crate) stuck: u32,
    /// Whether a tree reached [`tree::tree_limit`].
    pub(crate) tree_full: bool,
    /// Leaves whose interval straddled the threshold, so that neither they nor a node
    /// all of whose lines end at such leaves can be decided: captures, and moves out of the
    /// root's component.
    pub(crate) straddles: Straddles,
}

/// Leaves that straddled a threshold, by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Straddles {
    /// Captures, into a position of a lower layer not yet exact.
    pub(crate) captures: u64,
    /// Moves out of the root's component, into a position of this layer not yet exact.
    pub(crate) exits: u64,
}

impl<'a, L: Leaves> Search<'a, L> {
    /// A search in layer `seeds` whose game ends at the occurrence of a position that
    /// `repetition` says, allowed `budget` nodes in all; [`Search::with_history`] adds the positions
    /// since the last capture (each with its side: `false` for the root's).
    pub(crate) fn new(
        rules: Rules,
        repetition: Repetition,
        seeds: u32,
        leaves: &'a L,
        budget: u64,
    ) -> Self {
        Search {
            rules,
            repetition,
            seeds,
            leaves,
            before: vec![NONE],
            entries: Vec::new(),
            nodes: 0,
            budget,
            out_of_budget: false,
            buckets: vec![0; BUCKETS],
            d: 0,
            dangers: [[0; 2]; 2],
            stuck: 0,
            tree_full: false,
            straddles: Straddles::default(),
        }
    }

    /// The search after `history` (positions of the root's layer, oldest first, each
    /// with its side).
    pub(crate) fn with_history(mut self, history: &[(u128, bool)]) -> Result<Self, L::Error> {
        for &(bits, side) in history {
            let known = self.leaves.in_layer(bits, self.seeds)?;
            self.push(bits, side, known.memoryless);
        }
        Ok(self)
    }

    fn key(bits: u128, side: bool) -> u128 {
        if side {
            bits | SIDE
        } else {
            bits
        }
    }

    fn push(&mut self, bits: u128, side: bool, (low, high): (i8, i8)) {
        let key = Self::key(bits, side);
        let own_row = own_row_bits(bits);
        let w = if side { -own_row } else { own_row };
        let (lo, hi) = *self.before.last().expect("never empty");
        let mut entry = Entry {
            key,
            side,
            own_row,
            low: i32::from(low),
            high: i32::from(high),
            dangers: 0,
        };
        entry.dangers = self.dangers_of(&entry);
        self.count_dangers(&entry, 1);
        self.buckets[bucket(key)] += 1;
        self.entries.push(entry);
        self.before.push((lo.min(w), hi.max(w)));
    }

    fn pop(&mut self) {
        let entry = self.entries.pop().expect("a position to take off the path");
        self.buckets[bucket(entry.key)] -= 1;
        self.count_dangers(&entry, u32::MAX);
        self.before.pop();
    }

    /// The threshold of a side's mover in the threshold search under way.
    fn threshold_of(&self, side: bool) -> i32 {
        if side {
            1 - self.d
        } else {
            self.d
        }
    }

    /// The dangers of a position of the path for the threshold of its side.
    fn dangers_of(&self, q: &Entry) -> u8 {
        let e = self.threshold_of(q.side);
        let mut dangers = 0;
        if q.own_row < e && q.low >= e {
            dangers |= DANGER_LOW;
        }
        if q.own_row >= e && q.high < e {
            dangers |= DANGER_HIGH;
        }
        dangers
    }

    /// Adds `by` (1, or −1 wrapped) to the path's counts of `q`'s dangers.
    fn count_dangers(&mut self, q: &Entry, by: u32) {
        let side = &mut self.dangers[usize::from(q.side)];
        if q.dangers & DANGER_LOW != 0 {
            side[0] = side[0].wrapping_add(by);
        }
        if q.dangers & DANGER_HIGH != 0 {
            side[1] = side[1].wrapping_add(by);
        }
    }

    /// Starts the threshold search of "the root's mover scores at least `d`": the path's
    /// dangers counted again for it.
    fn set_threshold(&mut self, d: i32) {
        self.d = d;
        self.dangers = [[0; 2]; 2];
        let mut entries = std::mem::take(&mut self.entries);
        for q in &mut entries {
            q.dangers = self.dangers_of(q);
            self.count_dangers(q, 1);
        }
        self.entries = entries;
    }

    /// How often the position is on the path. (A scan: the path is short next to what a
    /// hash of every position entered costs, measured at 26% of a search's time.)
    fn count(&self, bits: u128, side: bool) -> usize {
        self.count_key(Self::key(bits, side))
    }

    fn count_key(&self, key: u128) -> usize {
        if self.buckets[bucket(key)] == 0 {
            return 0;
        }
        self.entries.iter().filter(|q| q.key == key).count()
    }

    /// The widened interval of a position about to be entered (not yet on the path), for
    /// its mover: its fresh interval, widened by every position on the path.
    fn widened(&self, fresh: (i8, i8), side: bool) -> (i32, i32) {
        let (m, big_m) = *self.before.last().expect("never empty");
        let (lo, hi) = (i32::from(fresh.0), i32::from(fresh.1));
        if m > big_m {
            return (lo, hi);
        }
        let (m, big_m) = if side { (-big_m, -m) } else { (m, big_m) };
        (lo.min(m), hi.max(big_m))
    }

    /// Whether the mover of `bits` (side `side`, about to be entered, not yet on the path)
    /// scores at least `e`, as far as the leaves say without a search.
    ///
    /// Two tests. The widened fresh interval (the module's comment). And the memoryless
    /// one: if `low(Y) ≥ e` in the bounds' co-Büchi game, Y's mover has a memoryless
    /// strategy σ that wins `≥ e` from Y, and every play consistent with σ stays in σ's
    /// winning region `W` (positions of Y's side with `low ≥ e`, of the other side with
    /// `high ≤ −e`). A play that repeats a position first seen after Y closes a cycle
    /// consistent with σ, which σ wins, so that position's own-row difference is `≥ e`
    /// (the bounds' own argument). A position of the path ends the game early only at its
    /// `ends_at`-th occurrence, that is if it is on the path `ends_at − 1` times, and
    /// σ's play can reach it only if it lies in `W`. So Y's mover gets `≥ e` unless such a
    /// position, in `W`, has an own-row difference below `e` for Y's mover. The test of
    /// `< e` is the same for the other player.
    fn leaf(&self, bits: u128, side: bool, known: &InLayer, e: i32) -> Tri {
        let (lo, hi) = self.widened(known.fresh, side);
        if lo >= e {
            return Tri::Yes;
        }
        if hi < e {
            return Tri::No;
        }
        let (low, high) = (i32::from(known.memoryless.0), i32::from(known.memoryless.1));
        if low >= e && self.no_danger(bits, side, e, true) {
            return Tri::Yes;
        }
        if high < e && self.no_danger(bits, side, e, false) {
            return Tri::No;
        }
        Tri::Unknown
    }

    /// Whether no position of the path can end the game early against the memoryless
    /// strategy of Y's mover (`for_mover`: winning `≥ e`) or of its opponent (holding Y's
    /// mover below `e`); see [`Search::leaf`].
    ///
    /// Under the first repetition every position of the path is on its last allowed
    /// occurrence, and `e` is the threshold of Y's side ([`Search::threshold_of`]: sides
    /// alternate move by move, and so do the thresholds, `e` for one side and `1 − e` for
    /// the other). A position Q of Y's side is then a danger for Y's mover if it has
    /// [`DANGER_LOW`] (for the opponent: [`DANGER_HIGH`]); one of the other side, whose
    /// threshold is `1 − e`, if it has [`DANGER_HIGH`] (for the opponent: [`DANGER_LOW`]).
    /// So the answer is the path's danger counts, kept as positions enter and leave it,
    /// unless Y itself is on the path (it is left out of the test).
    fn no_danger(&self, bits: u128, side: bool, e: i32, for_mover: bool) -> bool {
        let own = Self::key(bits, side);
        let first = self.repetition == Repetition::First;
        debug_assert_eq!(e, self.threshold_of(side), "a threshold of another search");
        if first && self.count_key(own) == 0 {
            let (same, other) = (
                self.dangers[usize::from(side)],
                self.dangers[usize::from(!side)],
            );
            return if for_mover {
                same[0] == 0 && other[1] == 0
            } else {
                same[1] == 0 && other[0] == 0
            };
        }
        self.entries.iter().all(|q| {
            // Only a position that ends the game at its next occurrence is a danger.
            if q.key == own || (!first && !self.repetition.ends_game(self.count_key(q.key))) {
                return true;
            }
            let same = q.side == side;
            // Q's own-row difference for Y's mover.
            let w = if same { q.own_row } else { -q.own_row };
            if for_mover {
                let in_region = if same { q.low >= e } else { q.high <= -e };
                w >= e || !in_region
            } else {
                let in_region = if same { q.high < e } else { q.low >= 1 - e };
                w < e || !in_region
            }
        })
    }

    /// The widened interval of the root `bits` (side `false`) after the history.
    pub(crate) fn root_interval(&self, bits: u128) -> Result<(i32, i32), L::Error> {
        let known = self.leaves.in_layer(bits, self.seeds)?;
        Ok(self.widened(known.fresh, false))
    }

    /// Whether the root's mover scores at least `d`, proved or disproved within the
    /// budget.
    pub(crate) fn at_least(
        &mut self,
        tree: &mut Tree,
        root: u128,
        d: i32,
    ) -> Result<Tri, L::Error> {
        self.set_threshold(d);
        let known = self.leaves.in_layer(root, self.seeds)?;
        let leaf = self.leaf(root, false, &known, d);
        if leaf != Tri::Unknown || self.rules.game_over_bits(root).is_some() {
            return Ok(leaf);
        }
        self.proof_numbers(&mut tree.0, root, known.memoryless, d)
    }

    /// Whether the budget ran out.
    pub(crate) fn exhausted(&self) -> bool {
        self.out_of_budget
    }
}

/// What a search proved of its root: an interval, exact when its ends meet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Narrowed {
    pub(crate) low: i32,
    pub(crate) high: i32,
    pub(crate) nodes: u64,
    /// How the search ended.
    pub(crate) ended: Ended,
    /// The leaves that straddled a threshold.
    pub(crate) straddles: Straddles,
}

/// How a root's search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ended {
    /// Its interval closed.
    Exact,
    /// Out of its node budget.
    Budget,
    /// A tree reached [`tree::tree_limit`].
    TreeLimit,
    /// Every threshold left was stuck: its lines all end at leaves whose intervals straddle
    /// it.
    Stuck,
}

/// Narrows the root's widened interval by threshold searches (the middle first, then the
/// ends), within `budget` nodes in all, in the memory of `tree` (see [`Tree`]).
pub(crate) fn narrow<L: Leaves>(
    tree: &mut Tree,
    rules: Rules,
    repetition: Repetition,
    root: u128,
    history: &[(u128, bool)],
    leaves: &L,
    budget: u64,
) -> Result<Narrowed, L::Error> {
    let seeds = crate::board::seeds_in(root);
    let mut search = Search::new(rules, repetition, seeds, leaves, budget).with_history(history)?;
    let (mut low, mut high) = if let Some(v) = rules.packed_turn(root).over {
        (i32::from(v), i32::from(v))
    } else {
        search.root_interval(root)?
    };
    // Every outcome from a position of `seeds` seeds has the parity of `seeds`: the seeds
    // end up split between the two sides (captured, or kept on a row), so the difference is
    // `seeds` minus twice one side's share. So "at least d" and "at least d + 1" are the
    // same question when d has the other parity, and asking both doubled the cost of every
    // interval of width 2 narrowed upwards. The ends are taken to that parity (which holds
    // the true value), and only thresholds of that parity are asked.
    let odd = |v: i32| (v - seeds as i32).rem_euclid(2) == 1;
    if odd(low) {
        low += 1;
    }
    if odd(high) {
        high -= 1;
    }
    // Thresholds that could not be decided: not tried again.
    let mut undecided: Vec<i32> = Vec::new();
    while low < high && !search.exhausted() {
        let mid = low + (high - low + 1) / 2;
        let mid = if odd(mid) { mid + 1 } else { mid };
        let d = [mid, low + 2, high]
            .into_iter()
            .find(|d| !undecided.contains(d));
        let Some(d) = d else { break };
        match search.at_least(tree, root, d)? {
            Tri::Yes => low = d,
            Tri::No => high = d - 2,
            Tri::Unknown => undecided.push(d),
        }
    }
    let ended = if low == high {
        Ended::Exact
    } else if search.tree_full {
        Ended::TreeLimit
    } else if search.exhausted() {
        Ended::Budget
    } else {
        Ended::Stuck
    };
    Ok(Narrowed {
        low,
        high,
        nodes: search.nodes,
        ended,
        straddles: search.straddles,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_tree_node_is_32_bytes() {
        assert_eq!(std::mem::size_of::<super::tree::PnNode>(), 32);
    }

    /// What [`super::narrow`] rests on when it asks only thresholds of the seeds' parity:
    /// every value a game from a position of `n` seeds can end with (a finished game, a
    /// repetition's own-row difference, a capture plus its child's outcome) has the
    /// parity of `n`.
    #[test]
    fn every_outcome_has_the_parity_of_the_seeds() {
        use crate::board::to_bits;
        use crate::rules::Rules;
        for rules in Rules::ALL {
            for n in 0..=8u32 {
                for (_, board) in crate::index::walk(n, 0, crate::index::size(n)) {
                    let bits = to_bits(&board);
                    let parity = |v: i32| (v - n as i32).rem_euclid(2);
                    assert_eq!(parity(super::own_row_bits(bits)), 0, "{board}");
                    let turn = rules.packed_turn(bits);
                    if let Some(v) = turn.over {
                        assert_eq!(parity(i32::from(v)), 0, "{board}");
                        continue;
                    }
                    for pit in (0..6).filter(|p| turn.legal & (1 << p) != 0) {
                        let c = i32::from(turn.captured[pit]);
                        let child_seeds = crate::board::seeds_in(turn.children[pit]);
                        assert_eq!(child_seeds as i32, n as i32 - c, "{board} pit {pit}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_tree_has_room_for_its_budget_up_to_its_cap() {
        use super::tree::{tree_bytes, tree_limit, TREE_MAX};
        assert_eq!(tree_limit(1_000_000), 6_000_007);
        assert_eq!(tree_bytes(1_000_000), 32 << 23);
        assert_eq!(tree_limit(u64::MAX), TREE_MAX);
        assert_eq!(tree_bytes(u64::MAX), 4 << 30);
    }
}
