//! Perfect play along a line: the move perfect play makes and the principal variation of
//! the values, steered to the capture by the stored distances (or, where they saturate, by
//! a small local search).

use super::{Database, MoveValue, PrincipalVariation, ProbeError, PvEnd, PvStep};
use crate::board::Board;
use crate::rules::Turn;
use crate::store::{self, TableKind, DISTANCE_SATURATED};
use std::collections::{HashMap, HashSet, VecDeque};

/// The fallback for positions whose stored round is saturated: the last local search's
/// answer, reused while the line stays inside the region it covered. The searches of one
/// line share one budget, and are given up for good once it is spent, so a line never
/// spends more than a fraction of a second searching.
#[derive(Default)]
struct LocalSearch {
    found: Option<HashMap<Board, u32>>,
    over_budget: bool,
    /// Positions explored by this line's searches so far.
    spent: usize,
}

impl LocalSearch {
    fn distances(
        &mut self,
        db: &Database,
        here: &Board,
    ) -> Result<Option<&HashMap<Board, u32>>, ProbeError> {
        if self.over_budget {
            return Ok(None);
        }
        if !self.found.as_ref().is_some_and(|d| d.contains_key(here)) {
            let budget = PV_SEARCH_BUDGET.saturating_sub(self.spent);
            self.found = db.distances_out_of_layer(here, budget)?;
            self.spent += self.found.as_ref().map_or(budget, HashMap::len);
            self.over_budget = self.found.is_none();
        }
        Ok(self.found.as_ref())
    }
}
/// Positions a principal variation may explore in all to find distances within a layer.
/// Each costs up to seven lookups, a block read each when the cache misses: 4,096 keep
/// the worst case under a second by estimate (some 28,000 cold blocks at about 20 µs; not
/// measured: the rounds measured stay far below saturation), where a budget of 2^18
/// per search let a line search for minutes.
const PV_SEARCH_BUDGET: usize = 1 << 12;
/// Distance of a position from which the line never leaves the layer.
const UNREACHED: u32 = u32::MAX;

impl Database {
    /// The move perfect play makes from `board`: a move of the best value that also makes
    /// progress (in a won position it heads for the capture that realises the value rather
    /// than going round; in a lost one it delays as long as it can), chosen as the steps of
    /// [`Database::principal_variation`] are. `None` when the game is over.
    ///
    /// # Errors
    ///
    /// A layer the answer needs is missing or damaged, or has no distances file
    /// ([`ProbeError::DistancesMissing`]).
    pub fn perfect_move(&self, board: &Board) -> Result<Option<MoveValue>, ProbeError> {
        let mut search = LocalSearch::default();
        Ok(self
            .choose(board, &HashSet::new(), &mut search)?
            .map(|(_, m)| m))
    }

    /// Perfect play from `board` until the game ends, a position repeats, or `max_plies`
    /// moves. Every move has the best value; among equal moves, a won position takes the
    /// one that leaves the layer soonest by the stored distances (a capture first, then the
    /// child settled in the lowest round) and a lost one the latest, lowest pit first among
    /// equals. Since the rounds fall at every such move, a line whose value is not 0 always
    /// reaches a capture or the end of the game. Where a stored round is saturated
    /// ([`crate::store::DISTANCE_SATURATED`]) the line falls back on a small bounded local
    /// search (a retrograde search over the region best play can reach); past its budget,
    /// each side plays a best move preferring a capture, then a new position, then the
    /// lowest pit, and the line may then go round ([`PvEnd::Repetition`] with a non-zero
    /// value). A layer built without its distances ([`Database::distances_kept`]) is
    /// steered the same way as a saturated round: by the search, then those preferences.
    ///
    /// # Errors
    ///
    /// A layer the line needs is missing or damaged, or has no distances file when the
    /// line needs one ([`ProbeError::DistancesMissing`]: searching instead could take
    /// minutes).
    pub fn principal_variation(
        &self,
        board: &Board,
        max_plies: usize,
    ) -> Result<PrincipalVariation, ProbeError> {
        let mut steps = Vec::new();
        let mut seen = HashSet::new();
        let mut here = *board;
        let mut search = LocalSearch::default();
        loop {
            if let Turn::GameOver { value } = self.rules().turn(&here) {
                return Ok(PrincipalVariation {
                    steps,
                    last: here,
                    end: PvEnd::GameOver { value },
                });
            }
            if !seen.insert(here) {
                return Ok(PrincipalVariation {
                    steps,
                    last: here,
                    end: PvEnd::Repetition,
                });
            }
            if steps.len() >= max_plies {
                return Ok(PrincipalVariation {
                    steps,
                    last: here,
                    end: PvEnd::Limit,
                });
            }
            let (value, m) = self
                .choose(&here, &seen, &mut search)?
                .expect("a position whose game is not over has a legal move");
            steps.push(PvStep {
                board: here,
                value,
                pit: m.pit,
                captured: m.captured,
            });
            here = m.child;
        }
    }

    /// The value of `here` and the move perfect play makes there (`None` when the game is
    /// over); `seen` holds the positions of the line so far.
    fn choose(
        &self,
        here: &Board,
        seen: &HashSet<Board>,
        search: &mut LocalSearch,
    ) -> Result<Option<(i8, MoveValue)>, ProbeError> {
        let value = self.value(here)?;
        let best = self.best_moves(here)?;
        if best.is_empty() {
            return Ok(None);
        }
        let by_distance = if value == 0 {
            None
        } else {
            self.progress_move(here, value, &best, search)?
        };
        // Without distances (a draw, or a search over budget) prefer a capture, then a move
        // to a position not seen yet, then the lowest pit.
        let m = by_distance.unwrap_or_else(|| {
            *best
                .iter()
                .find(|m| m.captured > 0)
                .or_else(|| best.iter().find(|m| !seen.contains(&m.child)))
                .unwrap_or(&best[0])
        });
        Ok(Some((value, m)))
    }

    /// Among the best moves of a position of value `value ≠ 0`, the one that makes
    /// progress: the winner leaves the layer as soon as it can, the loser as late as it
    /// can. `None` if the distances cannot tell.
    fn progress_move(
        &self,
        here: &Board,
        value: i8,
        best: &[MoveValue],
        search: &mut LocalSearch,
    ) -> Result<Option<MoveValue>, ProbeError> {
        // Plies until the layer is left, after the move: a capture leaves it at once.
        let mut after: Vec<(u32, MoveValue)> = Vec::with_capacity(best.len());
        match self.distance(here)? {
            Some(d) if d != DISTANCE_SATURATED => {
                for m in best {
                    let d = if m.captured > 0 {
                        0
                    } else {
                        let child = self.distance(&m.child)?.expect("same layer as `here`");
                        u32::from(child) + 1
                    };
                    after.push((d, *m));
                }
            }
            // No distances file: the layer is incomplete. A search over a large layer can
            // take minutes, so the line stops and says how to complete the layer.
            None => {
                let seeds = here.seeds();
                return Err(ProbeError::DistancesMissing {
                    seeds,
                    rules: self.rules(),
                    path: store::table_path(self.dir(), self.rules(), seeds, TableKind::Distances),
                    dir: self.dir().to_path_buf(),
                });
            }
            Some(_) => {
                let Some(d) = search.distances(self, here)? else {
                    return Ok(None);
                };
                for m in best {
                    let x = if m.captured > 0 {
                        Some(0)
                    } else {
                        d.get(&m.child).copied().filter(|&x| x != UNREACHED)
                    };
                    if let Some(x) = x {
                        after.push((x, *m));
                    }
                }
            }
        }
        Ok(if value > 0 {
            after.into_iter().min_by_key(|&(d, m)| (d, m.pit))
        } else {
            after
                .into_iter()
                .max_by_key(|&(d, m)| (d, std::cmp::Reverse(m.pit)))
        }
        .map(|(_, m)| m))
    }

    /// Plies until play leaves the layer of `start` (a capture or the end of the game) when
    /// both sides play only best moves, the side with the positive value hurrying and the
    /// other delaying: the distances the value-only tables lack, worked out by a local
    /// retrograde search over the positions reachable that way. `None` if that region holds
    /// more than `budget` positions.
    fn distances_out_of_layer(
        &self,
        start: &Board,
        budget: usize,
    ) -> Result<Option<HashMap<Board, u32>>, ProbeError> {
        struct Node {
            board: Board,
            hurries: bool,
            exits: bool,
            children: Vec<usize>,
        }
        let mut ids: HashMap<Board, usize> = HashMap::from([(*start, 0)]);
        let mut nodes: Vec<Node> = Vec::new();
        let mut queue = VecDeque::from([*start]);
        while let Some(b) = queue.pop_front() {
            let value = self.value(&b)?;
            let mut node = Node {
                board: b,
                hurries: value > 0,
                exits: false,
                children: Vec::new(),
            };
            if let Turn::GameOver { .. } = self.rules().turn(&b) {
                node.exits = true;
            } else {
                for m in self.best_moves(&b)? {
                    if m.captured > 0 {
                        node.exits = true;
                        continue;
                    }
                    let next = ids.len();
                    let id = *ids.entry(m.child).or_insert_with(|| {
                        queue.push_back(m.child);
                        next
                    });
                    if ids.len() > budget {
                        return Ok(None);
                    }
                    node.children.push(id);
                }
            }
            nodes.push(node);
        }
        // Nodes were numbered in the order they were queued, so nodes[i] has id i.
        let mut dist = vec![UNREACHED; nodes.len()];
        let mut changed = true;
        while changed {
            changed = false;
            for i in 0..nodes.len() {
                let node = &nodes[i];
                let kids = node.children.iter().map(|&c| dist[c]);
                let exit = node.exits.then_some(0u32);
                let best = if node.hurries {
                    kids.chain(exit).min()
                } else if node.children.iter().any(|&c| dist[c] == UNREACHED) {
                    Some(UNREACHED)
                } else {
                    kids.chain(exit).max()
                };
                let d = match best {
                    Some(UNREACHED) | None => UNREACHED,
                    Some(x) => x + 1,
                };
                if d < dist[i] {
                    dist[i] = d;
                    changed = true;
                }
            }
        }
        Ok(Some(
            nodes.iter().zip(dist).map(|(n, d)| (n.board, d)).collect(),
        ))
    }
}
