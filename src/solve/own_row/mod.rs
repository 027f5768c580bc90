//! Exact values under the own-row rule, for every position with an empty history.
//!
//! # The rule and the value
//!
//! A capture-free game ends at the position (board and side to move) that occurs for the
//! `ends_at`-th time since the last capture (2: the first repetition, as OpenSpiel's
//! `oware`, Mancala World and the Catalan rules have it; 3: the third occurrence, as the
//! online Abapa page), and each side then keeps the seeds on its own row. The value of a
//! position thus depends on the positions since the last capture; the table built here
//! holds it for the positions that have none before them: the position just after a
//! capture, or the opening (its *fresh* value).
//!
//! # How a layer is solved
//!
//! 1. The bounds solver ([`crate::solve::bounds`]) on the layer, its captures valued by the
//!    fresh intervals of the layers below (exact where they are): an interval for every
//!    position, exact for most.
//! 2. The layer's strongly connected components of capture-free moves
//!    (`components.rs`), taken so that every component comes after those its moves lead to.
//!    A position in no cycle is worth the best of its moves, all of whose children are
//!    known by then. In a component with a cycle, each position still open is the root of
//!    a proof search (`search.rs`) with the game's own history, whose leaves are the
//!    captures, the moves out of the component (worth their fresh value: nothing seen can
//!    come back), the repetitions, and the widened intervals of the positions inside.
//!    Roots proved make the leaves of the others narrower, so a component is searched again
//!    while that narrows something.
//!
//! A search that runs out of its budget keeps the interval it proved: the table is then a
//! pair `low ≤ high` per position, exact where they meet, always within the bounds.

mod components;
pub(crate) mod proof_search;

use crate::board::to_bits;
use crate::index;
pub use crate::rules::Repetition;
use crate::rules::Rules;
use crate::solve::bounds::{solve_layer_bounds, BoundsLayer};
use rayon::prelude::*;
use std::convert::Infallible;

/// What solving one layer took and gave.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OwnRowCounts {
    /// Positions of the layer.
    pub positions: u64,
    /// Exact before the searches: after the bounds solver over the lower layers' fresh
    /// values, and for a layer searched again ([`refine_layer_until`]) its intervals as
    /// they were.
    pub exact_by_bounds: u64,
    /// Whether the layer was searched again from intervals already proved
    /// ([`refine_layer_until`]) rather than solved from the bounds alone.
    pub refined: bool,
    /// Exact at the end.
    pub exact: u64,
    /// Positions in a component with a cycle.
    pub in_cycles: u64,
    /// The largest component's positions.
    pub largest_component: u64,
    /// Roots searched (a root searched again counts again).
    pub searches: u64,
    /// Nodes the searches visited.
    pub nodes: u64,
    /// Searches that ended open because their node budget ran out.
    pub out_of_budget: u64,
    /// Searches that ended open because a tree reached its size limit.
    pub tree_limit: u64,
    /// Searches that ended open with every threshold left stuck: each line ended at a leaf
    /// (a capture, or a move out of the component) whose interval straddles it.
    pub stuck: u64,
    /// Leaves of the searches that straddled their threshold: captures into positions of
    /// lower layers not exact...
    pub straddling_captures: u64,
    /// ...and moves out of the root's component into positions of this layer not exact.
    pub straddling_exits: u64,
    /// Positions left open with a move into a position not exact: a capture into a lower
    /// layer, or a move out of its component (whose interval the search then takes as it
    /// is).
    pub open_next_to_open: u64,
}

/// The search's leaves while a layer is solved: the layers below and this layer's
/// intervals so far, in memory, and the components.
struct LayerLeaves<'a> {
    n: u32,
    lower: &'a [BoundsLayer],
    current: &'a BoundsLayer,
    memoryless: &'a BoundsLayer,
    component: &'a [u32],
    root_component: u32,
}

impl proof_search::Leaves for LayerLeaves<'_> {
    type Error = Infallible;
    fn fresh(&self, bits: u128, seeds: u32) -> Result<(i8, i8), Infallible> {
        let i = index::rank_bits(bits) as usize;
        let layer = if seeds == self.n {
            self.current
        } else {
            &self.lower[seeds as usize]
        };
        Ok((layer.low[i], layer.high[i]))
    }
    fn in_layer(&self, bits: u128, _seeds: u32) -> Result<proof_search::InLayer, Infallible> {
        let i = index::rank_bits(bits) as usize;
        Ok(proof_search::InLayer {
            fresh: (self.current.low[i], self.current.high[i]),
            memoryless: (self.memoryless.low[i], self.memoryless.high[i]),
            fresh_from_here: self.component[i] != self.root_component,
        })
    }
}

/// The best interval over the moves of `turn` (a position still in play) that `child`
/// values: `child(pit, captured, child)` gives the child's interval for its own mover, or
/// `None` for a move left out. `None` when every move is left out.
pub(crate) fn best_of_moves<E>(
    turn: &crate::rules::PackedTurn,
    mut child: impl FnMut(usize, u8, u128) -> Result<Option<(i8, i8)>, E>,
) -> Result<Option<(i8, i8)>, E> {
    let mut best: Option<(i8, i8)> = None;
    for pit in 0..6 {
        if turn.legal & (1 << pit) == 0 {
            continue;
        }
        let c = turn.captured[pit];
        if let Some((low, high)) = child(pit, c, turn.children[pit])? {
            let (l, h) = (c as i8 - high, c as i8 - low);
            best = Some(best.map_or((l, h), |(bl, bh)| (bl.max(l), bh.max(h))));
        }
    }
    Ok(best)
}

/// Whether position `v` of layer `n` has a move into a position whose interval is open: a
/// capture into a lower layer, or a move out of its component.
fn next_to_open(
    rules: Rules,
    n: u32,
    v: u32,
    lower: &[BoundsLayer],
    current: &BoundsLayer,
    component: &[u32],
) -> bool {
    let turn = rules.packed_turn(to_bits(&index::unrank(n, u64::from(v))));
    (0..6).any(|pit| {
        if turn.legal & (1 << pit) == 0 {
            return false;
        }
        let c = u32::from(turn.captured[pit]);
        let i = index::rank_bits(turn.children[pit]) as usize;
        let layer = if c > 0 {
            &lower[(n - c) as usize]
        } else if component[i] != component[v as usize] {
            current
        } else {
            return false;
        };
        layer.low[i] < layer.high[i]
    })
}

/// The interval of position `v` of layer `n` (in no cycle): the best over its moves, from
/// its children's intervals.
fn acyclic_interval(
    rules: Rules,
    n: u32,
    v: u32,
    lower: &[BoundsLayer],
    current: &BoundsLayer,
) -> (i8, i8) {
    let turn = rules.packed_turn(to_bits(&index::unrank(n, u64::from(v))));
    if let Some(value) = turn.over {
        return (value, value);
    }
    let Ok(best) = best_of_moves(&turn, |_, c, child| {
        let layer = if c > 0 {
            &lower[(n - u32::from(c)) as usize]
        } else {
            current
        };
        let i = index::rank_bits(child) as usize;
        Ok::<_, Infallible>(Some((layer.low[i], layer.high[i])))
    });
    best.expect("a position in play has a move")
}

/// The fresh interval of every position of layer `n`, given those of layers `0..n`
/// (`lower`), each root searched within `budget` nodes.
///
/// # Panics
///
/// If `lower` is short, or `n` is above the bounds solver's limit.
pub fn solve_layer(
    rules: Rules,
    n: u32,
    repetition: Repetition,
    lower: &[BoundsLayer],
    budget: u64,
) -> (BoundsLayer, OwnRowCounts) {
    solve_layer_until(rules, n, repetition, lower, budget, &|| false)
}

/// As [`solve_layer`], but returns early, with intervals still sound but not as narrow as
/// they could be, once `stop` says so (it is asked between rounds of searches).
pub fn solve_layer_until(
    rules: Rules,
    n: u32,
    repetition: Repetition,
    lower: &[BoundsLayer],
    budget: u64,
    stop: &(dyn Fn() -> bool + Sync),
) -> (BoundsLayer, OwnRowCounts) {
    solve_from(rules, n, repetition, lower, None, budget, stop)
        .expect("without a start, no interval contradicts the bounds")
}

/// As [`solve_layer_until`], starting from `start`, intervals of the layer already proved
/// (a layer built with a smaller budget, or over lower layers less exact): each position's
/// interval is the bounds' narrowed by `start`'s, and its positions still open are
/// searched again with `budget`. Sound because every interval of `start` holds for an
/// empty history, as the layer's files say.
///
/// # Errors
///
/// The first position (its number in the layer) whose interval in `start` and the bounds'
/// have nothing in common: one of them does not hold, and nothing is searched.
///
/// # Panics
///
/// As [`solve_layer`], and if `start` is not of layer `n`'s size.
pub fn refine_layer_until(
    rules: Rules,
    n: u32,
    repetition: Repetition,
    lower: &[BoundsLayer],
    start: &BoundsLayer,
    budget: u64,
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<(BoundsLayer, OwnRowCounts), u64> {
    solve_from(rules, n, repetition, lower, Some(start), budget, stop)
}

/// The layer's intervals from the bounds (narrowed by `start` where given), then the
/// components' searches. `Err` as [`refine_layer_until`].
fn solve_from(
    rules: Rules,
    n: u32,
    repetition: Repetition,
    lower: &[BoundsLayer],
    start: Option<&BoundsLayer>,
    budget: u64,
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<(BoundsLayer, OwnRowCounts), u64> {
    let memoryless = solve_layer_bounds(rules, n, lower);
    let mut current = memoryless.clone();
    if let Some(start) = start {
        assert_eq!(start.low.len(), current.low.len(), "layer {n}'s intervals");
        for i in 0..current.low.len() {
            let (low, high) = (
                current.low[i].max(start.low[i]),
                current.high[i].min(start.high[i]),
            );
            if low > high {
                return Err(i as u64);
            }
            (current.low[i], current.high[i]) = (low, high);
        }
    }
    let mut counts = OwnRowCounts {
        positions: index::size(n),
        exact_by_bounds: current.exact(),
        refined: start.is_some(),
        ..OwnRowCounts::default()
    };
    if counts.exact_by_bounds == counts.positions {
        counts.exact = counts.positions;
        return Ok((current, counts));
    }
    let job = LayerSearch {
        rules,
        n,
        repetition,
        lower,
        memoryless: &memoryless,
        budget,
        stop,
    };
    let comps = components::components(rules, n);
    for c in 0..comps.len() {
        let members = comps.of_component(c);
        if !comps.cyclic[c] {
            let v = members[0];
            let i = v as usize;
            if current.low[i] < current.high[i] {
                let (l, h) = acyclic_interval(rules, n, v, lower, &current);
                current.low[i] = current.low[i].max(l);
                current.high[i] = current.high[i].min(h);
            }
            continue;
        }
        counts.in_cycles += members.len() as u64;
        counts.largest_component = counts.largest_component.max(members.len() as u64);
        let component = Component {
            members,
            of: &comps.of,
            id: c as u32,
        };
        if !job.search_component(&component, &mut current, &mut counts) {
            free_search_trees();
            return Ok((current, counts));
        }
    }
    free_search_trees();
    counts.exact = current.exact();
    counts.open_next_to_open = (0..current.low.len() as u32)
        .into_par_iter()
        .filter(|&v| {
            current.low[v as usize] < current.high[v as usize]
                && next_to_open(rules, n, v, lower, &current, &comps.of)
        })
        .count() as u64;
    Ok((current, counts))
}

/// A strongly connected component of a layer's capture-free moves: its positions, and the
/// component of every position of the layer.
struct Component<'a> {
    members: &'a [u32],
    of: &'a [u32],
    id: u32,
}

thread_local! {
    /// The proof-number tree of a build's thread, kept from one search to the next (see
    /// [`proof_search::narrow`]). It holds at most [`proof_search::tree_bytes`] of the
    /// budget, which the build counts a thread in its memory estimate, and is freed when the
    /// layer's searches are done ([`free_search_trees`]).
    static SEARCH_TREE: std::cell::RefCell<proof_search::Tree> = std::cell::RefCell::default();
}

/// Frees the search trees of the current pool's threads, so that a program that builds
/// (the Python package, say) does not keep them after the build.
fn free_search_trees() {
    rayon::broadcast(|_| drop(SEARCH_TREE.take()));
}

/// What the searches of a layer share: the rules, the layers below, the layer's memoryless
/// bounds, the budget of a root, and when to stop.
struct LayerSearch<'a> {
    rules: Rules,
    n: u32,
    repetition: Repetition,
    lower: &'a [BoundsLayer],
    memoryless: &'a BoundsLayer,
    budget: u64,
    stop: &'a (dyn Fn() -> bool + Sync),
}

impl LayerSearch<'_> {
    /// Searches the open positions of a component with a cycle, round after round while a round
    /// narrows something (roots proved make the leaves of the others narrower), narrowing
    /// `current` and adding to `counts`. False when `stop` said to stop.
    fn search_component(
        &self,
        component: &Component,
        current: &mut BoundsLayer,
        counts: &mut OwnRowCounts,
    ) -> bool {
        let (rules, n, repetition, budget, stop) =
            (self.rules, self.n, self.repetition, self.budget, self.stop);
        loop {
            if stop() {
                return false;
            }
            let open: Vec<u32> = component
                .members
                .iter()
                .copied()
                .filter(|&v| current.low[v as usize] < current.high[v as usize])
                .collect();
            if open.is_empty() {
                return true;
            }
            let leaves = LayerLeaves {
                n,
                lower: self.lower,
                current,
                memoryless: self.memoryless,
                component: component.of,
                root_component: component.id,
            };
            // Asked to stop, the searches not yet started are skipped: what the others
            // proved still holds.
            let proved: Vec<(u32, proof_search::Narrowed)> = open
                .par_iter()
                .filter_map(|&v| {
                    if stop() {
                        return None;
                    }
                    let bits = to_bits(&index::unrank(n, u64::from(v)));
                    let Ok(r) = SEARCH_TREE.with_borrow_mut(|tree| {
                        proof_search::narrow(tree, rules, repetition, bits, &[], &leaves, budget)
                    });
                    Some((v, r))
                })
                .collect();
            let mut narrowed = false;
            for (v, r) in proved {
                counts.searches += 1;
                counts.nodes += r.nodes;
                counts.straddling_captures += r.straddles.captures;
                counts.straddling_exits += r.straddles.exits;
                match r.ended {
                    proof_search::Ended::Exact => {}
                    proof_search::Ended::Budget => counts.out_of_budget += 1,
                    proof_search::Ended::TreeLimit => counts.tree_limit += 1,
                    proof_search::Ended::Stuck => counts.stuck += 1,
                }
                let i = v as usize;
                let (l, h) = (r.low as i8, r.high as i8);
                if l > current.low[i] || h < current.high[i] {
                    narrowed = true;
                    current.low[i] = current.low[i].max(l);
                    current.high[i] = current.high[i].min(h);
                }
            }
            if !narrowed {
                return true;
            }
        }
    }
}

/// Solves layers `0..=max_seeds` in memory. For tests and small games.
pub fn solve_all(
    rules: Rules,
    max_seeds: u32,
    repetition: Repetition,
    budget: u64,
) -> Vec<(BoundsLayer, OwnRowCounts)> {
    let mut layers: Vec<BoundsLayer> = Vec::new();
    let mut out = Vec::new();
    for n in 0..=max_seeds {
        let (layer, counts) = solve_layer(rules, n, repetition, &layers, budget);
        layers.push(layer.clone());
        out.push((layer, counts));
    }
    out
}

/// What a search proved of a position with its history: an interval, exact when its ends
/// meet, and the nodes it took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proof {
    /// What the side to move is proved to get at least.
    pub low: i8,
    /// What it is proved to get at most.
    pub high: i8,
    /// Nodes searched.
    pub nodes: u64,
    /// Not exact, and not for want of nodes: every line the search left open ends at a
    /// leaf whose own interval is open (a capture into a position, or a move out of the
    /// root's component, that the tables do not know exactly, and that a probe's search
    /// of it on its own did not decide either), so a larger budget proves nothing more.
    pub stuck: bool,
}

impl Proof {
    /// Whether the value is proved exactly.
    pub fn exact(&self) -> bool {
        self.low == self.high
    }
}

/// The history of a search: `history` holds the positions since the last capture, oldest
/// first, each seen from its own mover; the last is the one before `board`.
pub(crate) fn search_history(history: &[crate::board::Board]) -> Vec<(u128, bool)> {
    let len = history.len();
    history
        .iter()
        .enumerate()
        .map(|(i, b)| (to_bits(b), (len - i) % 2 == 1))
        .collect()
}

/// The search over any leaves: `board` after `history` (see [`search_history`]).
pub(crate) fn prove<L: proof_search::Leaves>(
    rules: Rules,
    repetition: Repetition,
    board: &crate::board::Board,
    history: &[crate::board::Board],
    leaves: &L,
    budget: u64,
) -> Result<Proof, L::Error> {
    let r = proof_search::narrow(
        &mut proof_search::Tree::default(),
        rules,
        repetition,
        to_bits(board),
        &search_history(history),
        leaves,
        budget,
    )?;
    Ok(Proof {
        low: r.low as i8,
        high: r.high as i8,
        nodes: r.nodes,
        stuck: r.ended == proof_search::Ended::Stuck,
    })
}

/// Fresh intervals of whole layers in memory, for [`prove_in_memory`].
struct InMemory<'a> {
    layers: &'a [BoundsLayer],
    memoryless: &'a BoundsLayer,
}

impl proof_search::Leaves for InMemory<'_> {
    type Error = Infallible;
    fn fresh(&self, bits: u128, seeds: u32) -> Result<(i8, i8), Infallible> {
        let layer = &self.layers[seeds as usize];
        let i = index::rank_bits(bits) as usize;
        Ok((layer.low[i], layer.high[i]))
    }
    fn in_layer(&self, bits: u128, seeds: u32) -> Result<proof_search::InLayer, Infallible> {
        let layer = &self.layers[seeds as usize];
        let i = index::rank_bits(bits) as usize;
        Ok(proof_search::InLayer {
            fresh: (layer.low[i], layer.high[i]),
            memoryless: (self.memoryless.low[i], self.memoryless.high[i]),
            fresh_from_here: false,
        })
    }
}

/// The value of `board` after `history` (the positions since the last capture, oldest
/// first, each seen from its own mover; the last is the one before `board`), from fresh
/// intervals in memory (`layers[n]` for layer `n`, as [`solve_all`] gives them) and the
/// memoryless bounds of the board's layer (`memoryless`: those of
/// [`crate::solve::bounds`], over any exits that hold), within `budget` nodes. For tests
/// and small games; a program probes the tables instead.
///
/// # Panics
///
/// If `layers` lacks the board's layer or one below.
pub fn prove_in_memory(
    rules: Rules,
    repetition: Repetition,
    layers: &[BoundsLayer],
    memoryless: &BoundsLayer,
    board: &crate::board::Board,
    history: &[crate::board::Board],
    budget: u64,
) -> Proof {
    let Ok(p) = prove(
        rules,
        repetition,
        board,
        history,
        &InMemory { layers, memoryless },
        budget,
    );
    p
}
