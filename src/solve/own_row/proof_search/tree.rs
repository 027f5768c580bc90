//! The proof-number tree of a threshold search ([`Search::proof_numbers`]): its nodes,
//! the memory a build's thread keeps for it ([`Tree`]), and how a node is chosen, expanded
//! and its numbers backed up.

use super::{own_row_bits, Leaves, Search, Tri};

/// Proof and disproof numbers: "no way to prove (or disprove) this", and where sums stop.
pub(super) const INF: u32 = u32::MAX / 2;

/// The most nodes a proof-number tree may hold (32 bytes each: 4 GiB; one tree a search, so
/// one a thread in a build): past it the search stops as if out of budget.
pub(super) const TREE_MAX: usize = 1 << 27;

/// The most nodes a tree of a search allowed `budget` expansions holds: an expansion adds
/// at most 6, so a tree never needs more than `6 · budget + 1`; capped by [`TREE_MAX`]
/// (budgets above 22 M expansions a root).
pub(crate) fn tree_limit(budget: u64) -> usize {
    usize::try_from(budget)
        .unwrap_or(usize::MAX)
        .saturating_mul(6)
        .saturating_add(7)
        .min(TREE_MAX)
}

/// The memory one search's tree may take at `budget` (the vector grows by doubling, so up
/// to the next power of two of [`tree_limit`] nodes): what a build counts a thread.
pub(crate) fn tree_bytes(budget: u64) -> u64 {
    32 * tree_limit(budget).next_power_of_two() as u64
}

/// A position of the proof-number tree (32 bytes): one line from the root (the tree does not merge
/// transpositions, since what a position is worth depends on the line that reached it).
#[derive(Clone, Copy)]
pub(super) struct PnNode {
    bits: u128,
    side: bool,
    memoryless: (i8, i8),
    /// For the node's mover and its threshold: how many frontier nodes must still be proved
    /// to prove "at least the threshold" (`pn`), or to disprove it (`dn`); 0 once proved
    /// (disproved), [`INF`] when it cannot be.
    pn: u32,
    dn: u32,
    /// Its children, `first..first + count` in the tree; none before it is expanded.
    first: u32,
    count: u8,
}

impl PnNode {
    /// Nothing left to search below it: proved, disproved, or neither possible.
    fn settled(&self) -> bool {
        self.pn == 0 || self.dn == 0 || (self.pn >= INF && self.dn >= INF)
    }
}

/// The memory of a proof-number tree, kept from one search to the next by a build's
/// thread ([`super::narrow`]): a tree of a large budget takes gigabytes, and a fresh one
/// for every threshold faulted in fresh pages each time (a quarter of a build's time at
/// 2·10⁷ nodes a root went to the kernel).
#[derive(Default)]
pub(crate) struct Tree(pub(super) Vec<PnNode>);

impl<'a, L: Leaves> Search<'a, L> {
    /// The threshold test at the root by proof-number search (Allis): expand the most
    /// proving frontier node, the one on the line that picks, at every node, the child
    /// whose disproof would prove its parent soonest; numbers in negamax form (a node's
    /// `pn` is the least `dn` of its children, its `dn` the sum of their `pn`). A
    /// measured choice: against an iteratively deepened depth-first search with the same
    /// leaves, abapa's layer 4 is proved whole in 0.85 M nodes where that search left 4
    /// positions open after 6.6 M, and layer 6 is 99.2 % exact instead of 97.1 %.
    pub(super) fn proof_numbers(
        &mut self,
        tree: &mut Vec<PnNode>,
        root: u128,
        memoryless: (i8, i8),
        d: i32,
    ) -> Result<Tri, L::Error> {
        tree.clear();
        tree.push(PnNode {
            bits: root,
            side: false,
            memoryless,
            pn: 1,
            dn: 1,
            first: 0,
            count: 0,
        });
        // The line from the root to where the next descent starts, every node of it on the
        // path. After an expansion the numbers are backed up only as far as they change: the
        // most proving node then still lies below the first node left unchanged (Allis's
        // current-node enhancement), so the next descent starts there.
        let mut line: Vec<usize> = Vec::new();
        let limit = tree_limit(self.budget);
        let r = loop {
            let top = tree[0];
            if top.pn == 0 {
                break Ok(Tri::Yes);
            }
            if top.dn == 0 {
                break Ok(Tri::No);
            }
            if top.settled() {
                self.stuck += 1;
                break Ok(Tri::Unknown);
            }
            if self.nodes >= self.budget || tree.len() + 6 > limit {
                self.tree_full |= tree.len() + 6 > limit;
                self.out_of_budget = true;
                break Ok(Tri::Unknown);
            }
            if line.is_empty() {
                line.push(0);
                self.push(top.bits, top.side, top.memoryless);
            }
            let at = self.descend(tree, &mut line);
            let threshold = if line.len() % 2 == 1 { d } else { 1 - d };
            self.nodes += 1;
            let before = (tree[at].pn, tree[at].dn);
            if let Err(e) = self.expand(tree, at, threshold) {
                break Err(e);
            }
            self.back_up(tree, &mut line, before);
        };
        for _ in 0..line.len() {
            self.pop();
        }
        r
    }

    /// From the last node of `line` down to the most proving frontier node: at every node
    /// the first open child of least `(dn, pn)`, pushed on the line and on the path. The
    /// frontier node reached.
    fn descend(&mut self, tree: &[PnNode], line: &mut Vec<usize>) -> usize {
        let mut at = *line.last().expect("not empty");
        while tree[at].count > 0 {
            let n = tree[at];
            let children = n.first as usize..n.first as usize + usize::from(n.count);
            let mut best = (usize::MAX, (u32::MAX, u32::MAX));
            for (c, child) in tree[children.clone()].iter().enumerate() {
                if !child.settled() && (child.dn, child.pn) < best.1 {
                    best = (children.start + c, (child.dn, child.pn));
                }
            }
            assert!(best.0 != usize::MAX, "an open node has an open child");
            at = best.0;
            line.push(at);
            self.push(tree[at].bits, tree[at].side, tree[at].memoryless);
        }
        at
    }

    /// Backs the numbers of the node just expanded (the last of `line`, whose numbers
    /// were `before`) up the line, as far as they change, popping the nodes passed from the
    /// line and the path (see [`Search::proof_numbers`]).
    fn back_up(&mut self, tree: &mut [PnNode], line: &mut Vec<usize>, before: (u32, u32)) {
        let mut old = before;
        loop {
            let i = *line.last().expect("not empty");
            let n = tree[i];
            if n.count > 0 {
                let children = n.first as usize..n.first as usize + usize::from(n.count);
                let (mut pn, mut dn) = (INF, 0u32);
                for child in &tree[children] {
                    pn = pn.min(child.dn);
                    dn = dn.saturating_add(child.pn).min(INF);
                }
                (tree[i].pn, tree[i].dn) = (pn, dn);
            }
            let unchanged = (tree[i].pn, tree[i].dn) == old;
            if line.len() == 1 || (unchanged && !tree[i].settled()) {
                break;
            }
            line.pop();
            self.pop();
            let parent = *line.last().expect("not empty");
            old = (tree[parent].pn, tree[parent].dn);
        }
    }

    /// Expands tree node `at` (on top of the path) for `threshold`: its moves' leaves
    /// decide it, or become its children (settled ones with their numbers, the others
    /// frontier nodes).
    fn expand(
        &mut self,
        tree: &mut Vec<PnNode>,
        at: usize,
        threshold: i32,
    ) -> Result<(), L::Error> {
        let n = tree[at];
        let turn = self.rules.packed_turn(n.bits);
        let side = n.side;
        // The node's numbers when a leaf decides it.
        let proved = (0, INF);
        let disproved = (INF, 0);
        if let Some(v) = turn.over {
            (tree[at].pn, tree[at].dn) = if i32::from(v) >= threshold {
                proved
            } else {
                disproved
            };
            return Ok(());
        }
        let first = tree.len();
        for pit in 0..6 {
            if turn.legal & (1 << pit) == 0 {
                continue;
            }
            let child = turn.children[pit];
            let c = i32::from(turn.captured[pit]);
            // The mover's interval by this move, if it is a leaf.
            let mut open = None;
            let mut exit = false;
            let leaf = if c > 0 {
                let (l, h) = self.leaves.fresh(child, self.seeds - c as u32)?;
                Some((c - i32::from(h), c - i32::from(l)))
            } else if self.repetition.ends_game(self.count(child, !side)) {
                let w = -own_row_bits(child);
                Some((w, w))
            } else {
                let known = self.leaves.in_layer(child, self.seeds)?;
                if known.fresh_from_here {
                    exit = true;
                    let (l, h) = known.fresh;
                    Some((-i32::from(h), -i32::from(l)))
                } else if let Some(v) = self.rules.game_over_bits(child) {
                    Some((-i32::from(v), -i32::from(v)))
                } else {
                    match self.leaf(child, !side, &known, 1 - threshold) {
                        Tri::No => Some((threshold, threshold)),
                        Tri::Yes => Some((threshold - 1, threshold - 1)),
                        Tri::Unknown => {
                            open = Some(known.memoryless);
                            None
                        }
                    }
                }
            };
            // The child's numbers, for the child's mover (a move that proves the node is a
            // child disproved).
            let (pn, dn) = match leaf {
                Some((a, _)) if a >= threshold => {
                    tree.truncate(first);
                    (tree[at].pn, tree[at].dn) = proved;
                    return Ok(());
                }
                Some((_, b)) if b < threshold => proved,
                Some(_) => {
                    if exit {
                        self.straddles.exits += 1;
                    } else {
                        self.straddles.captures += 1;
                        self.leaves.straddled(child, self.seeds - c as u32);
                    }
                    (INF, INF)
                }
                None => (1, 1),
            };
            tree.push(PnNode {
                bits: child,
                side: !side,
                memoryless: open.unwrap_or((0, 0)),
                pn,
                dn,
                first: 0,
                count: 0,
            });
        }
        tree[at].first = first as u32;
        tree[at].count = (tree.len() - first) as u8;
        Ok(())
    }
}
