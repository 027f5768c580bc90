//! The strongly connected components of a layer's capture-free moves. A game that leaves a
//! component never comes back to it, so none of the positions seen before can repeat:
//! the position it enters is worth its fresh value, whatever the history. The own-row
//! solver searches with a history only inside a component.

use crate::index;
use crate::rules::Rules;

/// The components of one layer, numbered in the order Tarjan's algorithm closes them: a
/// component's capture-free moves lead only into itself or into components numbered
/// before it.
pub(crate) struct Components {
    /// Each position's component.
    pub(crate) of: Vec<u32>,
    /// The positions of each component: `members[start[c]..start[c + 1]]`.
    pub(crate) members: Vec<u32>,
    pub(crate) start: Vec<u32>,
    /// Whether a component holds a cycle (more than one position, or a move to itself).
    pub(crate) cyclic: Vec<bool>,
}

impl Components {
    /// How many components.
    pub(crate) fn len(&self) -> usize {
        self.cyclic.len()
    }
    /// The positions of component `c`.
    pub(crate) fn of_component(&self, c: usize) -> &[u32] {
        &self.members[self.start[c] as usize..self.start[c + 1] as usize]
    }
}

/// The capture-free moves of position `v` of layer `n`, as indices.
fn successors(rules: Rules, n: u32, v: u32) -> ([u32; 6], usize) {
    let bits = crate::board::to_bits(&index::unrank(n, u64::from(v)));
    let turn = rules.packed_turn(bits);
    let mut out = [0u32; 6];
    let mut len = 0;
    for pit in 0..6 {
        if turn.legal & (1 << pit) != 0 && turn.captured[pit] == 0 {
            out[len] = index::rank_bits(turn.children[pit]) as u32;
            len += 1;
        }
    }
    (out, len)
}

const UNSEEN: u32 = u32::MAX;

/// A frame of Tarjan's walk: a position, its successors and how many, the next to look
/// at, and whether it moves to itself.
type Frame = (u32, [u32; 6], usize, usize, bool);

/// Tarjan's numbering as the walk goes: each position's order of discovery and low link,
/// the stack of positions not yet in a component, and the components found.
struct Tarjan {
    rules: Rules,
    n: u32,
    order: Vec<u32>,
    low: Vec<u32>,
    on_stack: Vec<bool>,
    stack: Vec<u32>,
    counter: u32,
    found: Components,
}

impl Tarjan {
    /// Numbers `v` and puts it on the stack; its frame.
    fn enter(&mut self, v: u32) -> Frame {
        let i = v as usize;
        self.order[i] = self.counter;
        self.low[i] = self.counter;
        self.counter += 1;
        self.on_stack[i] = true;
        self.stack.push(v);
        let (succ, len) = successors(self.rules, self.n, v);
        (v, succ, len, 0usize, succ[..len].contains(&v))
    }

    /// `v` is the root of a component: the stack down to it is that component.
    fn close(&mut self, v: u32, self_loop: bool) {
        let found = &mut self.found;
        let c = found.cyclic.len() as u32;
        let first = found.members.len();
        loop {
            let w = self.stack.pop().expect("v is on the stack");
            self.on_stack[w as usize] = false;
            found.of[w as usize] = c;
            found.members.push(w);
            if w == v {
                break;
            }
        }
        found
            .cyclic
            .push(found.members.len() - first > 1 || self_loop);
        found.start.push(found.members.len() as u32);
    }

    /// Every component reachable from `root` (not yet seen), by a walk with an explicit
    /// stack of frames.
    fn walk_from(&mut self, root: u32) {
        let mut frames = vec![self.enter(root)];
        while let Some(frame) = frames.last_mut() {
            let v = frame.0;
            if frame.3 < frame.2 {
                let w = frame.1[frame.3];
                frame.3 += 1;
                if self.order[w as usize] == UNSEEN {
                    let f = self.enter(w);
                    frames.push(f);
                } else if self.on_stack[w as usize] {
                    self.low[v as usize] = self.low[v as usize].min(self.order[w as usize]);
                }
                continue;
            }
            let self_loop = frame.4;
            frames.pop();
            if let Some(parent) = frames.last() {
                let p = parent.0 as usize;
                self.low[p] = self.low[p].min(self.low[v as usize]);
            }
            if self.low[v as usize] == self.order[v as usize] {
                self.close(v, self_loop);
            }
        }
    }
}

/// Tarjan's algorithm, with an explicit stack (capture-free lines run thousands of moves
/// deep).
///
/// # Panics
///
/// If the layer has `2^32 − 1` positions or more (layer 25 and above).
pub(crate) fn components(rules: Rules, n: u32) -> Components {
    let size = index::size(n);
    assert!(size < u64::from(UNSEEN), "layer {n} is too large to number");
    let size = size as usize;
    let mut tarjan = Tarjan {
        rules,
        n,
        order: vec![UNSEEN; size],
        low: vec![0u32; size],
        on_stack: vec![false; size],
        stack: Vec::new(),
        counter: 0,
        found: Components {
            of: vec![UNSEEN; size],
            members: Vec::with_capacity(size),
            start: vec![0],
            cyclic: Vec::new(),
        },
    };
    for root in 0..size as u32 {
        if tarjan.order[root as usize] == UNSEEN {
            tarjan.walk_from(root);
        }
    }
    tarjan.found
}
