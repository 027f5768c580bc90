//! Un-sowing: the in-layer predecessors of a position.

use crate::board::{Board, PITS, ROW};
use crate::rules::{capture, GrandSlam, Rules};

/// Calls `found` with every position that reaches `child` by one legal non-capturing move.
///
/// `child` is seen from its mover, so the previous mover's board after its move is
/// `child.swapped()`; its move started from one of its pits 0..=5 that is now empty (a
/// kroo skips its origin, so the origin is empty whatever the count). Taking back `s` seeds
/// removes one seed from each of the next `s` pits in sowing order (skipping the origin);
/// every `s` for which no pit goes negative gives a candidate ([`candidates`]), whose move
/// is then checked against the rules ([`non_capturing_move_is_legal`]).
#[inline]
pub fn unsow(rules: Rules, child: &Board, mut found: impl FnMut(Board)) {
    let after = child.swapped();
    let after_opponent = after.opponent_seeds();
    candidates(&after, |parent, origin, last| {
        if non_capturing_move_is_legal(rules, &parent, origin, &after, after_opponent, last) {
            found(parent);
        }
    });
}

/// The reference un-sowing: candidates checked by generating every legal move of the
/// parent. Kept for the tests that prove [`unsow`]'s shortcut exact.
#[cfg(test)]
pub(crate) fn unsow_reference(rules: Rules, child: &Board, mut found: impl FnMut(Board)) {
    candidates(&child.swapped(), |parent, origin, _| {
        let legal = rules
            .legal_moves(&parent)
            .iter()
            .any(|m| m.pit as usize == origin && m.captured == 0 && m.child == *child);
        if legal {
            found(parent);
        }
    });
}

/// Every board that sows to `after` by one move of the mover, with that move's origin pit
/// and the pit its last seed fell in (no legality checked).
#[inline]
fn candidates(after: &Board, mut each: impl FnMut(Board, usize, usize)) {
    for origin in 0..ROW {
        if after.pit(origin) != 0 {
            continue;
        }
        let mut pits = *after.pits();
        let mut offset = 0usize;
        for seeds in 1u8.. {
            // The `seeds`-th seed fell `offset` pits after the origin (the origin skipped).
            offset = offset % (PITS - 1) + 1;
            let last = (origin + offset) % PITS;
            if pits[last] == 0 {
                break;
            }
            pits[last] -= 1;
            let mut before = pits;
            before[origin] = seeds;
            each(Board::from_pits_unchecked(before), origin, last);
        }
    }
}

/// Whether the move of `parent` that sowed to `after` (its last seed in `last`) is legal and
/// captures nothing. Equivalent to looking the move up in `rules.legal_moves(parent)`
/// (tested exhaustively), but only works out the one move, except in the rare case where
/// legality depends on every other move.
#[inline]
fn non_capturing_move_is_legal(
    rules: Rules,
    parent: &Board,
    origin: usize,
    after: &Board,
    after_opponent: u32,
    last: usize,
) -> bool {
    let (captured, taken) = capture(after, last);
    if taken > 0 {
        // It captures, unless abapa cancels a grand slam (which is always legal there).
        return rules.grand_slam == GrandSlam::NoCapture && captured.opponent_seeds() == 0;
    }
    if after_opponent > 0 {
        // The opponent keeps seeds: legal under every preset (it fed an empty opponent, or
        // the opponent was not empty).
        return true;
    }
    // The move left the opponent empty without capturing: the opponent was empty and the
    // move did not reach it. Under abapa and grand-slam-captures a non-feeding move is never
    // played; under awari it is played only if no move leaves the opponent seeds.
    match rules.grand_slam {
        GrandSlam::Forbidden => rules
            .legal_moves(parent)
            .iter()
            .any(|m| m.pit as usize == origin && m.captured == 0 && m.child == after.swapped()),
        GrandSlam::NoCapture | GrandSlam::CapturesAll => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index;

    /// The shortcut finds exactly the predecessors the full move generator confirms, on
    /// every position of the small layers, for every preset.
    #[test]
    fn shortcut_agrees_with_full_move_generation() {
        for rules in Rules::ALL {
            for n in 0..=9 {
                for (_, board) in index::walk(n, 0, index::size(n)) {
                    let mut fast = Vec::new();
                    unsow(rules, &board, |p| fast.push(p));
                    let mut slow = Vec::new();
                    unsow_reference(rules, &board, |p| slow.push(p));
                    assert_eq!(fast, slow, "{rules} {board}");
                }
            }
        }
    }

    /// Every predecessor really has the move, and every non-capturing move of every
    /// position is found backwards from its child.
    #[test]
    fn unsow_inverts_every_non_capturing_move() {
        for rules in Rules::ALL {
            for n in 0..=8 {
                for (_, board) in index::walk(n, 0, index::size(n)) {
                    for m in rules.legal_moves(&board).iter().filter(|m| m.captured == 0) {
                        let mut hits = 0;
                        unsow(rules, &m.child, |p| hits += usize::from(p == board));
                        assert_eq!(hits, 1, "{rules} {board} pit {}", m.pit);
                    }
                }
            }
        }
    }
}
