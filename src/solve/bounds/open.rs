//! The nodes whose value endless play decides: the co-Büchi threshold games, on the
//! sub-graph of those nodes alone.
//!
//! After the two reachability passes every node has `lo ≤ Val ≤ hi`; where `lo < hi` the
//! node is *open*. Open nodes are few (none at all in most layers above 10, about 117,000
//! nodes at layer 10 under abapa), so their move graph is built explicitly here, from the
//! rules, and the threshold loop of the module docs runs on it alone, one thread. A move to
//! a node that is not open leads to a fixed value (its `lo = hi`), which is all the loop
//! needs to know of it.

use super::own_row_difference;
use crate::index;
use crate::rules::{Rules, Turn};

/// A successor that is not open: this bit, and its fixed value in the low byte.
const FIXED: u32 = 1 << 31;

/// The open nodes' graph, numbered by their rank in the sorted list of open nodes.
struct OpenGraph {
    /// The side that moves: 0 the protagonist, 1 the antagonist.
    side: Vec<u8>,
    /// The exit oriented for the protagonist (its best on its nodes, the antagonist's worst
    /// for it on the others; the `reach` sentinels where there is none).
    exit: Vec<i8>,
    /// The protagonist's own-row difference at the node.
    weight: Vec<i8>,
    succ_start: Vec<u32>,
    /// An open successor's number, or [`FIXED`] with a fixed value.
    succ: Vec<u32>,
    pred_start: Vec<u32>,
    pred: Vec<u32>,
}

impl OpenGraph {
    /// The graph of the `open` nodes (sorted node numbers `2 · index + side`) of layer `n`;
    /// `fixed` holds every node's value where it is settled, `exit` every node's exit.
    fn build(rules: Rules, n: u32, open: &[u64], fixed: &[i8], exit: &[i8]) -> OpenGraph {
        let m = open.len();
        let mut side = Vec::with_capacity(m);
        let mut exits = Vec::with_capacity(m);
        let mut weight = Vec::with_capacity(m);
        let mut succ_start = Vec::with_capacity(m + 1);
        let mut succ = Vec::new();
        for &v in open {
            let t = (v & 1) as u8;
            let board = index::unrank(n, v >> 1);
            let r = own_row_difference(&board);
            side.push(t);
            exits.push(exit[v as usize]);
            weight.push(if t == 0 { r } else { -r });
            succ_start.push(succ.len() as u32);
            if let Turn::Moves(moves) = rules.turn(&board) {
                for mv in moves.iter().filter(|mv| mv.captured == 0) {
                    let c = 2 * index::rank(&mv.child) + u64::from(1 - t);
                    succ.push(match open.binary_search(&c) {
                        Ok(j) => j as u32,
                        Err(_) => FIXED | u32::from(fixed[c as usize] as u8),
                    });
                }
            }
        }
        succ_start.push(succ.len() as u32);
        let mut pred_start = vec![0u32; m + 1];
        for &s in succ.iter().filter(|&&s| s & FIXED == 0) {
            pred_start[s as usize + 1] += 1;
        }
        for i in 0..m {
            pred_start[i + 1] += pred_start[i];
        }
        let mut fill = pred_start.clone();
        let mut pred = vec![0u32; pred_start[m] as usize];
        for v in 0..m {
            for &s in &succ[succ_start[v] as usize..succ_start[v + 1] as usize] {
                if s & FIXED == 0 {
                    pred[fill[s as usize] as usize] = v as u32;
                    fill[s as usize] += 1;
                }
            }
        }
        OpenGraph {
            side,
            exit: exits,
            weight,
            succ_start,
            succ,
            pred_start,
            pred,
        }
    }

    fn succ_of(&self, v: usize) -> &[u32] {
        &self.succ[self.succ_start[v] as usize..self.succ_start[v + 1] as usize]
    }

    fn pred_of(&self, v: usize) -> &[u32] {
        &self.pred[self.pred_start[v] as usize..self.pred_start[v + 1] as usize]
    }
}

/// The protagonist's lower bound of a successor now.
#[inline]
fn value(cur: &[i8], s: u32) -> i8 {
    if s & FIXED != 0 {
        s as u8 as i8
    } else {
        cur[s as usize]
    }
}

/// Whether a successor is lost for the protagonist at threshold `d`: its value is known to
/// be below `d`.
#[inline]
fn lost(cur: &[i8], hi: &[i8], s: u32, d: i8) -> bool {
    if s & FIXED != 0 {
        (s as u8 as i8) < d
    } else {
        cur[s as usize] < d && hi[s as usize] < d
    }
}

/// Solves the open nodes: on return `lo` holds every node's value. `open` lists the nodes
/// with `lo < hi`, sorted; `exit` is every node's exit oriented for the protagonist.
pub(super) fn solve(rules: Rules, n: u32, open: &[u64], lo: &mut [i8], hi: &[i8], exit: &[i8]) {
    let g = OpenGraph::build(rules, n, open, lo, exit);
    let mut cur: Vec<i8> = open.iter().map(|&v| lo[v as usize]).collect();
    let hi: Vec<i8> = open.iter().map(|&v| hi[v as usize]).collect();
    let top = hi.iter().copied().max().unwrap_or(0);
    let bottom = cur.iter().copied().min().unwrap_or(0);
    let mut count = vec![0u8; open.len()];
    let mut in_a = vec![false; open.len()];
    for d in (bottom + 1..=top).rev() {
        let cand: Vec<usize> = (0..open.len())
            .filter(|&v| cur[v] < d && d <= hi[v])
            .collect();
        threshold(&g, d, &mut cur, &hi, &cand, &mut count, &mut in_a);
    }
    for (&v, &c) in open.iter().zip(&cur) {
        lo[v as usize] = c;
    }
}

/// Grows `W_d` (the nodes with `cur ≥ d`) to the protagonist's winning region at threshold
/// `d`, over the candidates `cand` (the nodes still open at `d`).
fn threshold(
    g: &OpenGraph,
    d: i8,
    cur: &mut [i8],
    hi: &[i8],
    cand: &[usize],
    count: &mut [u8],
    in_a: &mut [bool],
) {
    let at = Threshold { g, d, hi, cand };
    let mut queue: Vec<usize> = Vec::new();
    loop {
        at.protagonist_attractor(cur, count, &mut queue);
        at.antagonist_attractor(cur, count, in_a, &mut queue);
        // 3. What is left can stay among good nodes for ever: it joins W.
        let mut grew = false;
        for &v in cand {
            if cur[v] < d && !in_a[v] {
                cur[v] = d;
                grew = true;
            }
        }
        if !grew {
            return;
        }
    }
}

/// One threshold's round over the open nodes: what its two attractors share.
struct Threshold<'a> {
    g: &'a OpenGraph,
    d: i8,
    hi: &'a [i8],
    cand: &'a [usize],
}

impl Threshold<'_> {
    fn is_cand(&self, cur: &[i8], v: usize) -> bool {
        cur[v] < self.d && self.d <= self.hi[v]
    }

    /// 1. The protagonist's attractor of W and of exits worth ≥ d. The counters are taken
    ///    before any node joins, and each joining node then counts down once.
    fn protagonist_attractor(&self, cur: &mut [i8], count: &mut [u8], queue: &mut Vec<usize>) {
        let (g, d) = (self.g, self.d);
        queue.clear();
        for &v in self.cand {
            if cur[v] >= d {
                continue;
            }
            let succ = g.succ_of(v);
            let enter = if g.side[v] == 0 {
                g.exit[v] >= d || succ.iter().any(|&s| value(cur, s) >= d)
            } else {
                let outside = succ.iter().filter(|&&s| value(cur, s) < d).count() as u8;
                count[v] = outside;
                outside == 0 && g.exit[v] >= d
            };
            if enter {
                queue.push(v);
            }
        }
        for &v in queue.iter() {
            cur[v] = d;
        }
        while let Some(v) = queue.pop() {
            for &u in g.pred_of(v) {
                let u = u as usize;
                if !self.is_cand(cur, u) {
                    continue;
                }
                let enter = g.side[u] == 0 || {
                    count[u] -= 1;
                    count[u] == 0 && g.exit[u] >= d
                };
                if enter {
                    cur[u] = d;
                    queue.push(u);
                }
            }
        }
    }

    /// 2. The antagonist's attractor, avoiding W, of the bad nodes: weight < d, an exit
    ///    worth < d to the protagonist, or a move to a node already lost at d.
    fn antagonist_attractor(
        &self,
        cur: &[i8],
        count: &mut [u8],
        in_a: &mut [bool],
        queue: &mut Vec<usize>,
    ) {
        let (g, d, hi) = (self.g, self.d, self.hi);
        for &v in self.cand {
            in_a[v] = false;
            if cur[v] >= d {
                continue;
            }
            let succ = g.succ_of(v);
            let enter = g.weight[v] < d
                || if g.side[v] == 1 {
                    g.exit[v] < d || succ.iter().any(|&s| lost(cur, hi, s, d))
                } else {
                    // Moves that keep the protagonist out of A: into W, or still open.
                    let keep = succ.iter().filter(|&&s| !lost(cur, hi, s, d)).count() as u8;
                    count[v] = keep;
                    keep == 0 && g.exit[v] < d
                };
            if enter {
                in_a[v] = true;
                queue.push(v);
            }
        }
        while let Some(v) = queue.pop() {
            for &u in g.pred_of(v) {
                let u = u as usize;
                if !self.is_cand(cur, u) || in_a[u] {
                    continue;
                }
                let enter = g.side[u] == 1 || {
                    count[u] -= 1;
                    count[u] == 0 && g.exit[u] < d
                };
                if enter {
                    in_a[u] = true;
                    queue.push(u);
                }
            }
        }
    }
}
