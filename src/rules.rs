//! The rules: legal moves, sowing, captures, feeding, the grand slam and the end of the game.
//!
//! Everything here is a small pure function of a mover-relative [`Board`]; the move
//! generator fills a fixed array and never allocates, because the solver calls it billions
//! of times.

use crate::board::{
    from_bits, opponent_row_empty, pit_of, seeds_in, swap_rows, to_bits, Board, PITS, ROW, ROW_MASK,
};
use std::fmt;
use std::str::FromStr;

/// What a grand slam (a move that would leave the opponent with no seeds) does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GrandSlam {
    /// Illegal unless every legal move is one; then it is played and its capture counts.
    /// A mover that cannot feed an empty opponent therefore plays on, and the starved
    /// opponent then loses the rest.
    Forbidden,
    /// Legal, but captures nothing. An empty opponent that cannot be fed ends the game and
    /// the mover takes the seeds on its side.
    NoCapture,
    /// Legal and captures everything. An empty opponent that cannot be fed ends the game
    /// and the mover takes the seeds on its side.
    CapturesAll,
}

/// A rule set. Rules are data: the move generator, the solver and the file header all take
/// one, so adding a variant never forks the code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rules {
    /// What a grand slam does: the only rule the presets differ in.
    pub grand_slam: GrandSlam,
}

/// A rules name that is not one of the presets.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RulesError {
    /// Not a name this program knows (quoted, escaped and cut if long).
    #[error("unknown rules preset '{0}' (expected awari, abapa or grand-slam-captures)")]
    Unknown(String),
    /// A known rule that depends on the score, which no table can hold.
    #[error("rules preset '{0}' depends on the score, which a position-indexed table cannot know; use awari, abapa or grand-slam-captures")]
    ScoreDependent(String),
}

impl Rules {
    /// Romein & Bal's rules (the default): grand slam forbidden unless forced.
    pub const AWARI: Rules = Rules {
        grand_slam: GrandSlam::Forbidden,
    };
    /// Oware Abapa tournament rules (OpenSpiel's `oware`): a grand slam captures nothing.
    pub const ABAPA: Rules = Rules {
        grand_slam: GrandSlam::NoCapture,
    };
    /// A grand slam captures everything.
    pub const GRAND_SLAM_CAPTURES: Rules = Rules {
        grand_slam: GrandSlam::CapturesAll,
    };
    /// Every preset, in the order of their file codes.
    pub const ALL: [Rules; 3] = [Rules::AWARI, Rules::ABAPA, Rules::GRAND_SLAM_CAPTURES];

    /// The preset's name, as the CLI and the database folder spell it.
    pub fn name(&self) -> &'static str {
        match self.grand_slam {
            GrandSlam::Forbidden => "awari",
            GrandSlam::NoCapture => "abapa",
            GrandSlam::CapturesAll => "grand-slam-captures",
        }
    }

    /// The byte that names the preset in a database file header.
    pub fn code(&self) -> u8 {
        match self.grand_slam {
            GrandSlam::Forbidden => 1,
            GrandSlam::NoCapture => 2,
            GrandSlam::CapturesAll => 3,
        }
    }

    /// The preset stored under `code` in a file header ([`Rules::code`]).
    pub fn from_code(code: u8) -> Option<Rules> {
        Rules::ALL.into_iter().find(|r| r.code() == code)
    }
}

impl Default for Rules {
    fn default() -> Rules {
        Rules::AWARI
    }
}

impl fmt::Display for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Rules {
    type Err = RulesError;
    fn from_str(name: &str) -> Result<Rules, RulesError> {
        let key = name.trim().to_ascii_lowercase();
        if let Some(r) = Rules::ALL.into_iter().find(|r| r.name() == key) {
            return Ok(r);
        }
        if key.contains("25") || key.contains("score") {
            return Err(RulesError::ScoreDependent(crate::board::clip(name)));
        }
        Err(RulesError::Unknown(crate::board::clip(name)))
    }
}

/// The occurrence of a position that ends a capture-free game under the own-row rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Repetition {
    /// The first repetition (a position's second occurrence) ends the game: OpenSpiel's
    /// `oware`, Mancala World's Oware/Abapa, the Catalan rules.
    First,
    /// The third occurrence ends it: the online Abapa page.
    Third,
}

impl Repetition {
    /// The occurrence that ends the game: 2 or 3.
    pub fn ends_at(self) -> u8 {
        match self {
            Repetition::First => 2,
            Repetition::Third => 3,
        }
    }
    /// Whether a position that occurred `earlier` times since the last capture ends the
    /// game as it occurs once more.
    pub fn ends_game(self, earlier: usize) -> bool {
        earlier + 1 >= usize::from(self.ends_at())
    }
    /// `first` or `third`.
    pub fn name(self) -> &'static str {
        match self {
            Repetition::First => "first",
            Repetition::Third => "third",
        }
    }
}

/// One legal move: the mover's pit it starts from, what it captures, and the position it
/// leaves, seen from the opponent (who moves next).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Move {
    /// 0..=5, the mover's pit.
    pub pit: u8,
    /// Seeds captured by the move (0 for a move that stays in its layer).
    pub captured: u8,
    /// The position after the move, from the opponent's side (rows swapped).
    pub child: Board,
}

/// The legal moves of a position, in pit order, in a fixed array (no allocation).
#[derive(Clone, Copy, Debug)]
pub struct MoveList {
    moves: [Move; ROW],
    len: u8,
}

impl MoveList {
    const fn new() -> MoveList {
        const EMPTY: Move = Move {
            pit: 0,
            captured: 0,
            child: Board::from_pits_unchecked([0; PITS]),
        };
        MoveList {
            moves: [EMPTY; ROW],
            len: 0,
        }
    }
    #[inline]
    fn push(&mut self, m: Move) {
        self.moves[self.len as usize] = m;
        self.len += 1;
    }
    /// The moves, in pit order.
    #[inline]
    pub fn as_slice(&self) -> &[Move] {
        &self.moves[..self.len as usize]
    }
    /// How many moves.
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }
    /// Whether there are none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The moves, in pit order.
    pub fn iter(&self) -> std::slice::Iter<'_, Move> {
        self.as_slice().iter()
    }
}

impl<'a> IntoIterator for &'a MoveList {
    type Item = &'a Move;
    type IntoIter = std::slice::Iter<'a, Move>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// What the side to move faces.
#[derive(Clone, Copy, Debug)]
pub enum Turn {
    /// The game is over.
    GameOver {
        /// The seed difference the side to move gets from the seeds still on the board
        /// (who takes them is the end rule).
        value: i8,
    },
    /// The game goes on with these legal moves (never empty).
    Moves(MoveList),
}

/// The most seeds one capture takes: six pits of three (a capture takes pits of 2 or 3
/// seeds, and only on the opponent's row). The captures of a position of layer `n` reach
/// layers `n − MAX_CAPTURE ..= n − 2`.
pub const MAX_CAPTURE: u32 = 18;

const MAX_SOW: usize = 48;

/// `SOW_ADD[pit][s]`: what sowing `s` seeds from `pit` adds to each pit; `SOW_LAST[pit][s]`:
/// where the last seed falls. A lap of 12 or more seeds skips the emptied origin (a
/// "kroo"), so the other 11 pits share the seeds evenly and the first `s % 11` get one more.
const fn sow_tables() -> ([[u128; MAX_SOW + 1]; ROW], [[u8; MAX_SOW + 1]; ROW]) {
    let mut add = [[0u128; MAX_SOW + 1]; ROW];
    let mut last = [[0u8; MAX_SOW + 1]; ROW];
    let mut pit = 0;
    while pit < ROW {
        let mut s = 1;
        while s <= MAX_SOW {
            let mut bytes = [0u8; 16];
            let mut p = pit;
            let mut k = 0;
            while k < s {
                p = (p + 1) % PITS;
                if p == pit {
                    p = (p + 1) % PITS;
                }
                bytes[p] += 1;
                k += 1;
            }
            add[pit][s] = u128::from_le_bytes(bytes);
            last[pit][s] = p as u8;
            s += 1;
        }
        pit += 1;
    }
    (add, last)
}

static SOW: ([[u128; MAX_SOW + 1]; ROW], [[u8; MAX_SOW + 1]; ROW]) = sow_tables();

#[inline]
fn sow_bits(bits: u128, pit: usize, seeds: usize) -> (u128, usize) {
    let emptied = bits & !(0xFFu128 << (8 * pit));
    (emptied + SOW.0[pit][seeds], SOW.1[pit][seeds] as usize)
}

#[inline]
pub(crate) fn capture_bits(bits: u128, last: usize) -> (u128, u8) {
    if last < ROW {
        return (bits, 0);
    }
    let mut captured = bits;
    let mut taken = 0u8;
    let mut p = last;
    while p >= ROW {
        let seeds = pit_of(bits, p);
        if seeds != 2 && seeds != 3 {
            break;
        }
        taken += seeds;
        captured &= !(0xFF << (8 * p));
        p -= 1;
    }
    (captured, taken)
}

/// Sows the seeds of `pit` (mover-relative, not swapped). Returns the board and the pit the
/// last seed fell in; laps of 12 or more seeds skip the origin.
#[inline]
pub fn sow(board: &Board, pit: usize) -> (Board, usize) {
    let seeds = board.pit(pit) as usize;
    assert!(
        pit < ROW && seeds > 0,
        "sowing needs a non-empty pit of the mover"
    );
    let (bits, last) = sow_bits(to_bits(board), pit, seeds);
    (from_bits(bits), last)
}

/// Whether no move of the packed board `bits` ends its sowing in an opponent's pit that
/// it brings to 2 or 3 seeds: then no move captures, under any rules (a grand slam only
/// takes captures away). A batch of don't-cares asks only for captures, and about half of
/// its positions have none (54 % of layer 20, 76 % of layer 9): this test costs a table read a pit where the whole turn
/// sows and swaps every move.
#[inline]
pub(crate) fn captures_nothing(bits: u128) -> bool {
    (0..ROW).all(|pit| {
        let seeds = usize::from(pit_of(bits, pit));
        let last = usize::from(SOW.1[pit][seeds]);
        seeds == 0
            || last < ROW
            || !matches!(pit_of(bits, last) + pit_of(SOW.0[pit][seeds], last), 2 | 3)
    })
}

/// Takes the capture that the last seed in `last` makes: that pit and the ones before it,
/// while they are the opponent's and hold 2 or 3 seeds. Returns the board and the seeds taken.
#[inline]
pub fn capture(board: &Board, last: usize) -> (Board, u8) {
    let (bits, taken) = capture_bits(to_bits(board), last);
    (from_bits(bits), taken)
}

/// A turn worked out on a packed board ([`crate::board::ROW_MASK`]), before any child
/// becomes a [`Board`]: the solver's passes read it straight, [`Rules::turn`] converts it.
pub(crate) struct PackedTurn {
    /// The value of the end of the game, if it is over (then no move is legal).
    pub over: Option<i8>,
    /// The legal moves, a bit a pit (bit `p` for pit `p`).
    pub legal: u8,
    /// Seeds each pit's move captures.
    pub captured: [u8; ROW],
    /// Each pit's child, packed and seen from the opponent (rows swapped).
    pub children: [u128; ROW],
}

impl Rules {
    /// The legal moves of `board`, or the value of the end of the game.
    pub fn turn(&self, board: &Board) -> Turn {
        let packed = self.packed_turn(to_bits(board));
        if let Some(value) = packed.over {
            return Turn::GameOver { value };
        }
        let mut list = MoveList::new();
        for pit in 0..ROW {
            if packed.legal & (1 << pit) != 0 {
                list.push(Move {
                    pit: pit as u8,
                    captured: packed.captured[pit],
                    child: from_bits(packed.children[pit]),
                });
            }
        }
        Turn::Moves(list)
    }

    /// [`Rules::turn`] on a packed board.
    #[inline]
    pub(crate) fn packed_turn(&self, bits: u128) -> PackedTurn {
        let mut turn = PackedTurn {
            over: None,
            legal: 0,
            captured: [0; ROW],
            children: [0; ROW],
        };
        // The side to move with no seeds cannot move: the opponent takes everything.
        if bits & ROW_MASK == 0 {
            turn.over = Some(-(seeds_in(bits) as i8));
            return turn;
        }
        let opponent_empty = opponent_row_empty(bits);

        // Every move as sown and captured, marking (a bit a pit) the ones that leave the
        // opponent no seeds after their capture, and the ones whose sowing reaches the
        // opponent's row at all (feeding an empty opponent).
        let mut all = 0u8;
        let mut starves = 0u8;
        let mut feeds = 0u8;
        for pit in 0..ROW {
            let seeds = pit_of(bits, pit);
            if seeds == 0 {
                continue;
            }
            let (sown, last) = sow_bits(bits, pit, seeds as usize);
            let (captured, taken) = capture_bits(sown, last);
            let leaves_nothing = opponent_row_empty(captured);
            let (after, taken) = match self.grand_slam {
                // Abapa: a move that would capture every opponent seed captures none.
                GrandSlam::NoCapture if leaves_nothing && taken > 0 => (sown, 0),
                _ => (captured, taken),
            };
            let bit = 1u8 << pit;
            all |= bit;
            if leaves_nothing {
                starves |= bit;
            }
            if !opponent_row_empty(sown) {
                feeds |= bit;
            }
            turn.captured[pit] = taken;
            turn.children[pit] = swap_rows(after);
        }

        turn.legal = match self.grand_slam {
            // Any move that leaves the opponent empty (a grand slam, or not feeding an
            // empty opponent) is illegal unless every move does.
            GrandSlam::Forbidden if starves != all => all & !starves,
            GrandSlam::Forbidden => all,
            GrandSlam::NoCapture | GrandSlam::CapturesAll => {
                if !opponent_empty {
                    all
                } else if feeds == 0 {
                    // Nobody can feed the opponent: the mover takes the seeds on its side,
                    // which are all the seeds on the board.
                    turn.over = Some(seeds_in(bits) as i8);
                    0
                } else {
                    feeds
                }
            }
        };
        turn
    }

    /// What [`Rules::packed_turn`] says of `over`, without sowing any move: the proof
    /// search asks it of every child it makes, and most are not over.
    #[inline]
    pub(crate) fn game_over_bits(&self, bits: u128) -> Option<i8> {
        if bits & ROW_MASK == 0 {
            return Some(-(seeds_in(bits) as i8));
        }
        if self.grand_slam == GrandSlam::Forbidden || !opponent_row_empty(bits) {
            return None;
        }
        // A sowing reaches the opponent's row when the pit holds more seeds than there are
        // pits after it on the mover's row.
        let feeds = (0..ROW).any(|pit| usize::from(pit_of(bits, pit)) + pit >= ROW);
        if feeds {
            None
        } else {
            Some(seeds_in(bits) as i8)
        }
    }

    /// The legal moves (empty when the game is over).
    pub fn legal_moves(&self, board: &Board) -> MoveList {
        match self.turn(board) {
            Turn::Moves(list) => list,
            Turn::GameOver { .. } => MoveList::new(),
        }
    }

    /// The value of the position if the game is over in it.
    pub fn game_over_value(&self, board: &Board) -> Option<i8> {
        match self.turn(board) {
            Turn::GameOver { value } => Some(value),
            Turn::Moves(_) => None,
        }
    }
}

#[cfg(test)]
mod game_over_tests {
    use super::Rules;
    use crate::board::to_bits;
    use crate::index;

    #[test]
    fn game_over_bits_says_what_packed_turn_says_on_every_position_of_layers_0_to_7() {
        for rules in Rules::ALL {
            for n in 0..=7 {
                for i in 0..index::size(n) {
                    let bits = to_bits(&index::unrank(n, i));
                    assert_eq!(
                        rules.game_over_bits(bits),
                        rules.packed_turn(bits).over,
                        "{rules}, layer {n}, position {i}"
                    );
                }
            }
        }
    }

    /// The test may say "perhaps" of a position without captures (its sowing may be cut
    /// short by the rules), never "nothing" of one with a capture; and it does skip a good
    /// part of a layer, or it would buy nothing.
    #[test]
    fn captures_nothing_only_where_no_move_captures_on_layers_0_to_9() {
        use super::captures_nothing;
        for n in 0..=9 {
            let mut skipped = 0u64;
            for i in 0..index::size(n) {
                let bits = to_bits(&index::unrank(n, i));
                let nothing = captures_nothing(bits);
                for rules in Rules::ALL {
                    let turn = rules.packed_turn(bits);
                    let captures =
                        (0..super::ROW).any(|p| turn.legal & (1 << p) != 0 && turn.captured[p] > 0);
                    assert!(!(nothing && captures), "{rules}, layer {n}, position {i}");
                }
                skipped += u64::from(nothing);
            }
            if n >= 4 {
                assert!(skipped * 4 > index::size(n), "layer {n}: {skipped} skipped");
            }
        }
    }

    proptest::proptest! {
        /// The same on boards of up to 48 seeds, where sowings lap the board.
        #[test]
        fn captures_nothing_only_where_no_move_captures_on_big_boards(
            piles in proptest::collection::vec((0usize..12, 1u8..=30), 0..8),
        ) {
            // Piles of any size, up to 48 seeds in all.
            let mut bytes = [0u8; 16];
            let mut left = 48u8;
            for (pit, seeds) in piles {
                let seeds = seeds.min(left);
                bytes[pit] += seeds;
                left -= seeds;
            }
            let bits = u128::from_le_bytes(bytes);
            if super::captures_nothing(bits) {
                for rules in Rules::ALL {
                    let turn = rules.packed_turn(bits);
                    proptest::prop_assert!(turn.captured.iter().all(|&c| c == 0), "{rules}");
                }
            }
        }
    }
}
