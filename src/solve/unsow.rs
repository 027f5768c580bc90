//! Un-sowing: the in-layer predecessors of a position.

use crate::board::{
    from_bits, opponent_row_empty, pit_of, swap_rows, to_bits, Board, MAX_SEEDS, PITS, ROW,
};
use crate::rules::{capture_bits, GrandSlam, Rules};

/// Calls `found` with every position that reaches `child` by one legal non-capturing move.
///
/// `child` is seen from its mover, so the previous mover's board after its move is
/// `child.swapped()`; its move started from one of its pits 0..=5 that is now empty (a
/// kroo skips its origin, so the origin is empty whatever the count). Taking back `s` seeds
/// removes one seed from each of the next `s` pits in sowing order (skipping the origin);
/// every `s` for which no pit goes negative gives a candidate, whose move is then checked
/// against the rules.
#[inline]
pub fn unsow(rules: Rules, child: &Board, mut found: impl FnMut(Board)) {
    unsow_bits(rules, to_bits(child), |parent| found(from_bits(parent)));
}

/// [`unsow`] on packed boards ([`crate::board::ROW_MASK`]): the solver's inner loop, where
/// each candidate is a subtraction in a register rather than a copy of twelve bytes.
#[inline]
pub(crate) fn unsow_bits(rules: Rules, child: u128, mut found: impl FnMut(u128)) {
    let after = swap_rows(child);
    let legality = Legality::of(rules, after);
    candidates(after, |parent, origin, last| {
        if legality.allows(rules, parent, origin, after, last) {
            found(parent);
        }
    });
}

/// The reference un-sowing: candidates checked by generating every legal move of the
/// parent. Kept for the tests that prove [`unsow`]'s shortcut exact.
#[cfg(test)]
pub(crate) fn unsow_reference(rules: Rules, child: &Board, mut found: impl FnMut(Board)) {
    candidates(to_bits(&child.swapped()), |parent, origin, _| {
        let parent = from_bits(parent);
        let legal = rules
            .legal_moves(&parent)
            .iter()
            .any(|m| m.pit as usize == origin && m.captured == 0 && m.child == *child);
        if legal {
            found(parent);
        }
    });
}

/// A one in the byte of each pit.
const PIT_ONE: [u128; PITS] = {
    let mut one = [0u128; PITS];
    let mut pit = 0;
    while pit < PITS {
        one[pit] = 1 << (8 * pit);
        pit += 1;
    }
    one
};

/// Every board that sows to `after` by one move of the mover, with that move's origin pit
/// and the pit its last seed fell in (no legality checked).
#[inline]
fn candidates(after: u128, mut each: impl FnMut(u128, usize, usize)) {
    for origin in 0..ROW {
        if pit_of(after, origin) != 0 {
            continue;
        }
        let mut pits = after;
        let mut last = origin;
        for seeds in 1..=u128::from(MAX_SEEDS) {
            // The `seeds`-th seed fell in the next pit after the previous one, the origin
            // skipped.
            last = if last + 1 == PITS { 0 } else { last + 1 };
            if last == origin {
                last += 1;
            }
            if pit_of(pits, last) == 0 {
                break;
            }
            pits -= PIT_ONE[last];
            each(pits | seeds << (8 * origin), origin, last);
        }
    }
}

/// Which non-capturing moves that sowed to `after` are legal, by the pit their last seed
/// fell in: everything but the parent's other moves depends on `after` and that pit
/// alone, so it is worked out once a child rather than once a candidate. Equivalent to
/// looking the move up in `rules.legal_moves(parent)` (tested exhaustively).
struct Legality {
    /// Last pits where the sowing captures (one bit a pit).
    captures: u16,
    /// Of those, the ones abapa cancels as a grand slam (the move is then legal and takes
    /// nothing).
    cancelled: u16,
    /// Whether the opponent's row holds seeds after the sowing.
    opponent_fed: bool,
}

impl Legality {
    #[inline]
    fn of(rules: Rules, after: u128) -> Legality {
        let mut captures = 0u16;
        let mut cancelled = 0u16;
        for last in ROW..PITS {
            let (captured, taken) = capture_bits(after, last);
            if taken > 0 {
                captures |= 1 << last;
                if rules.grand_slam == GrandSlam::NoCapture && opponent_row_empty(captured) {
                    cancelled |= 1 << last;
                }
            }
        }
        Legality {
            captures,
            cancelled,
            opponent_fed: !opponent_row_empty(after),
        }
    }

    /// Whether the move of `parent` from `origin` that sowed to `after` (its last seed in
    /// `last`) is legal and captures nothing.
    #[inline]
    fn allows(&self, rules: Rules, parent: u128, origin: usize, after: u128, last: usize) -> bool {
        if self.captures & (1 << last) != 0 {
            // It captures, unless abapa cancels a grand slam (which is always legal there).
            return self.cancelled & (1 << last) != 0;
        }
        if self.opponent_fed {
            // The opponent keeps seeds: legal under every preset (it fed an empty
            // opponent, or the opponent was not empty).
            return true;
        }
        // The move left the opponent empty without capturing: the opponent was empty and
        // the move did not reach it. Under abapa and grand-slam-captures a non-feeding move
        // is never played; under awari it is played only if no move leaves the opponent
        // seeds, which only the parent's other moves tell.
        match rules.grand_slam {
            GrandSlam::Forbidden => {
                let child = from_bits(swap_rows(after));
                rules
                    .legal_moves(&from_bits(parent))
                    .iter()
                    .any(|m| m.pit as usize == origin && m.captured == 0 && m.child == child)
            }
            GrandSlam::NoCapture | GrandSlam::CapturesAll => false,
        }
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
