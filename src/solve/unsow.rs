//! Un-sowing: the in-layer predecessors of a position.

use crate::board::{Board, PITS, ROW};
use crate::rules::Rules;

/// Calls `found` with every position that reaches `child` by one legal non-capturing move.
///
/// `child` is seen from its mover, so the previous mover's board after its move is
/// `child.swapped()`; its move started from one of its pits 0..=5 that is now empty (a
/// kroo skips its origin, so the origin is empty whatever the count). Taking back `s` seeds
/// removes one seed from each of the next `s` pits in sowing order (skipping the origin);
/// every `s` for which no pit goes negative is a candidate. Each candidate is then played
/// forward with the rules, which decides legality (feeding, grand slam) and whether the
/// move captured, so un-sowing needs no rules knowledge of its own.
pub fn unsow(rules: Rules, child: &Board, mut found: impl FnMut(Board)) {
    let after = child.swapped();
    for origin in 0..ROW {
        if after.pit(origin) != 0 {
            continue;
        }
        let mut pits = *after.pits();
        let mut offset = 0usize;
        for seeds in 1u8.. {
            // The seed sown `seeds`-th fell `offset` pits after the origin (origin skipped).
            offset = offset % (PITS - 1) + 1;
            let pit = (origin + offset) % PITS;
            if pits[pit] == 0 {
                break;
            }
            pits[pit] -= 1;
            let mut before = pits;
            before[origin] = seeds;
            let parent = Board::from_pits_unchecked(before);
            if played_forward(rules, &parent, origin, child) {
                found(parent);
            }
        }
    }
}

/// Whether `parent` has a legal, non-capturing move from `origin` that leads to `child`.
#[inline]
fn played_forward(rules: Rules, parent: &Board, origin: usize, child: &Board) -> bool {
    rules
        .legal_moves(parent)
        .iter()
        .any(|m| m.pit as usize == origin && m.captured == 0 && m.child == *child)
}
