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
    let mut order = vec![UNSEEN; size];
    let mut low = vec![0u32; size];
    let mut on_stack = vec![false; size];
    let mut of = vec![UNSEEN; size];
    let mut stack: Vec<u32> = Vec::new();
    let mut members: Vec<u32> = Vec::with_capacity(size);
    let mut start: Vec<u32> = vec![0];
    let mut cyclic: Vec<bool> = Vec::new();
    // (position, its successors, how many, the next to look at, whether it moves to itself)
    let mut frames: Vec<(u32, [u32; 6], usize, usize, bool)> = Vec::new();
    let mut counter = 0u32;
    for root in 0..size as u32 {
        if order[root as usize] != UNSEEN {
            continue;
        }
        let enter = |v: u32,
                     counter: &mut u32,
                     order: &mut [u32],
                     low: &mut [u32],
                     on_stack: &mut [bool],
                     stack: &mut Vec<u32>| {
            order[v as usize] = *counter;
            low[v as usize] = *counter;
            *counter += 1;
            on_stack[v as usize] = true;
            stack.push(v);
            let (succ, len) = successors(rules, n, v);
            (v, succ, len, 0usize, succ[..len].contains(&v))
        };
        frames.push(enter(
            root,
            &mut counter,
            &mut order,
            &mut low,
            &mut on_stack,
            &mut stack,
        ));
        while let Some(frame) = frames.last_mut() {
            let v = frame.0;
            if frame.3 < frame.2 {
                let w = frame.1[frame.3];
                frame.3 += 1;
                if order[w as usize] == UNSEEN {
                    let f = enter(
                        w,
                        &mut counter,
                        &mut order,
                        &mut low,
                        &mut on_stack,
                        &mut stack,
                    );
                    frames.push(f);
                } else if on_stack[w as usize] {
                    low[v as usize] = low[v as usize].min(order[w as usize]);
                }
                continue;
            }
            let self_loop = frame.4;
            frames.pop();
            if let Some(parent) = frames.last() {
                let p = parent.0 as usize;
                low[p] = low[p].min(low[v as usize]);
            }
            if low[v as usize] == order[v as usize] {
                let c = cyclic.len() as u32;
                let first = members.len();
                loop {
                    let w = stack.pop().expect("v is on the stack");
                    on_stack[w as usize] = false;
                    of[w as usize] = c;
                    members.push(w);
                    if w == v {
                        break;
                    }
                }
                cyclic.push(members.len() - first > 1 || self_loop);
                start.push(members.len() as u32);
            }
        }
    }
    Components {
        of,
        members,
        start,
        cyclic,
    }
}
