//! Looking ahead where the tables end: an iterative-deepening alpha-beta search whose leaves
//! are the tables, and the playing levels built on it.
//!
//! A position with more seeds than the built layers cannot be looked up, but every capture
//! leads into a lower layer, and those may be built. [`analyse`] searches such a position
//! to increasing depths until its think time runs out: a leaf in a built layer (or a finished
//! game) is exact; a leaf still above the tables when the depth runs out scores 0 from there
//! on (the seeds captured on the way to it still count). The answer is the last depth
//! searched completely, with `exact` set when no leaf was cut off by the depth, in which
//! case the values are the true ones (the same numbers the tables would hold).
//!
//! ```no_run
//! use awari::search::{analyse, Limits};
//! use awari::{Board, Database, Rules};
//! use std::time::Duration;
//!
//! let db = Database::open("data/db", Rules::AWARI)?;
//! let a = analyse(&db, &Board::opening(4)?, &Limits::think(Duration::from_secs(2)))?;
//! println!("value {} (exact: {}, depth {})", a.value, a.exact, a.depth);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::board::{Board, ROW};
use crate::probe::{Database, MoveValue, ProbeError};
use crate::rules::{Move, MoveList, Turn};
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// The deepest search [`analyse`] starts, in plies.
pub(crate) const MAX_DEPTH: u32 = 96;
/// Transposition-table entries kept at most (about 40 bytes each).
const TT_LIMIT: usize = 1 << 21;
/// Nodes between two looks at the clock (and at the stop flag of [`analyse_until`]).
const CLOCK_EVERY: u64 = 512;
/// The longest think time the command line and the Python package accept: an hour. Longer
/// is a mistake in the unit far more often than a wish, and a search that long holds its
/// thread (in `serve`, a compute slot) all the while.
pub const MAX_THINK: Duration = Duration::from_secs(3600);

/// How long and how deep [`analyse`] may look.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time for the whole call. Depth 1 is always finished, however short.
    pub think: Duration,
    /// The deepest iteration, in plies (at most 96).
    pub max_depth: u32,
    /// Whether positions in built layers are looked up (and the answer is exact when the
    /// position itself is in a built layer). Without tables the search plays by captures
    /// alone: the weaker playing levels.
    pub tables: bool,
}

impl Limits {
    /// Tables on, as deep as `think` allows.
    pub fn think(think: Duration) -> Limits {
        Limits {
            think,
            max_depth: MAX_DEPTH,
            tables: true,
        }
    }
}

/// What [`analyse`] found about one position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Analysis {
    /// The position analysed, from the side to move.
    pub board: Board,
    /// The seed difference the side to move gets from now on: the table value when
    /// `exact`, otherwise the search's estimate at `depth`.
    pub value: i8,
    /// True when the value and every move value are the true ones.
    pub exact: bool,
    /// Plies searched (0 when the position was looked up in the tables).
    pub depth: u32,
    /// Whether the game is over in this position (no moves).
    pub game_over: bool,
    /// Every legal move in pit order, its `value` from the same search as `value`.
    pub moves: Vec<MoveValue>,
    /// The pits (0..=5) of the moves of highest value.
    pub best: Vec<u8>,
    /// Positions visited by the search (0 for a table lookup).
    pub nodes: u64,
    /// Wall-clock time spent.
    pub elapsed: Duration,
}

/// The value, every move's value and the best moves of `board`: looked up when its layer
/// and every layer below are built (and `limits.tables`), searched otherwise (see the
/// module documentation).
///
/// # Errors
///
/// A table the search reads is damaged ([`ProbeError::Store`]).
pub fn analyse(db: &Database, board: &Board, limits: &Limits) -> Result<Analysis, ProbeError> {
    let never = AtomicBool::new(false);
    Ok(analyse_until(db, board, limits, &never)?
        .expect("without a stop the first depth always completes"))
}

/// [`analyse`], stopped within moments once `stop` is set (by another thread: a Ctrl-C, a
/// client gone): `None` when it was stopped, whatever it had found by then, since the
/// caller no longer wants the answer.
///
/// # Errors
///
/// As [`analyse`].
pub fn analyse_until(
    db: &Database,
    board: &Board,
    limits: &Limits,
    stop: &AtomicBool,
) -> Result<Option<Analysis>, ProbeError> {
    let started = Instant::now();
    let rules = db.rules();
    let top = if limits.tables {
        db.complete_up_to()
    } else {
        None
    };
    let moves = match rules.turn(board) {
        Turn::GameOver { value } => {
            return Ok(Some(Analysis {
                board: *board,
                value,
                exact: true,
                depth: 0,
                game_over: true,
                moves: Vec::new(),
                best: Vec::new(),
                nodes: 0,
                elapsed: started.elapsed(),
            }))
        }
        Turn::Moves(list) => list,
    };
    if top.is_some_and(|t| board.seeds() <= t) {
        let value = db.value(board)?;
        let moves = db.moves_with_values(board)?;
        return Ok(Some(finish(*board, value, true, 0, moves, 0, started)));
    }

    let mut s = Searcher {
        db,
        top,
        deadline: started
            .checked_add(limits.think)
            .unwrap_or(started + Duration::from_secs(1 << 30)),
        nodes: 0,
        out_of_time: false,
        stop,
        first_depth: true,
        tt: HashMap::new(),
    };
    let done = s.deepen(moves.as_slice(), limits.max_depth)?;
    if stop.load(Relaxed) {
        return Ok(None);
    }
    let Some((mv, exact, depth)) = done else {
        return Ok(None);
    };
    let value = mv.iter().map(|m| m.value).max().unwrap_or(0);
    Ok(Some(finish(
        *board, value, exact, depth, mv, s.nodes, started,
    )))
}

impl Searcher<'_> {
    /// Iterative deepening at the root, from depth 1 up to `max_depth` (within
    /// [`MAX_DEPTH`]), the moves searched best first after the first depth: the moves'
    /// values at the last depth completed, whether they are all exact, and that depth.
    /// `None` when not even the first depth completed.
    fn deepen(
        &mut self,
        moves: &[Move],
        max_depth: u32,
    ) -> Result<Option<(Vec<MoveValue>, bool, u32)>, ProbeError> {
        // Root moves, searched best first in each iteration after the first.
        let mut order: Vec<usize> = (0..moves.len()).collect();
        let mut done: Option<(Vec<MoveValue>, bool, u32)> = None;
        for depth in 1..=max_depth.clamp(1, MAX_DEPTH) {
            self.first_depth = depth == 1;
            let mut values: Vec<Option<(i32, bool)>> = vec![None; moves.len()];
            for &i in &order {
                let m = moves[i];
                let (v, exact) = self.negamax(&m.child, depth - 1, -INF, INF)?;
                if self.out_of_time {
                    break;
                }
                values[i] = Some((i32::from(m.captured) - v, exact));
            }
            if values.iter().any(Option::is_none) {
                break; // out of time in the middle of this depth: keep the last one
            }
            let all_exact = values.iter().all(|v| v.is_some_and(|(_, e)| e));
            let mv: Vec<MoveValue> = moves
                .iter()
                .zip(&values)
                .map(|(m, v)| MoveValue {
                    pit: m.pit,
                    captured: m.captured,
                    child: m.child,
                    value: v.map_or(0, |(x, _)| x) as i8,
                })
                .collect();
            order.sort_by_key(|&i| std::cmp::Reverse(mv[i].value));
            done = Some((mv, all_exact, depth));
            if all_exact || self.out_of_time || Instant::now() >= self.deadline {
                break;
            }
        }
        Ok(done)
    }
}

fn finish(
    board: Board,
    value: i8,
    exact: bool,
    depth: u32,
    moves: Vec<MoveValue>,
    nodes: u64,
    started: Instant,
) -> Analysis {
    let best = moves
        .iter()
        .filter(|m| m.value == value)
        .map(|m| m.pit)
        .collect();
    Analysis {
        board,
        value,
        exact,
        depth,
        game_over: false,
        moves,
        best,
        nodes,
        elapsed: started.elapsed(),
    }
}

const INF: i32 = 1000;

#[derive(Clone, Copy)]
enum Bound {
    Exact,
    Lower,
    Upper,
}

#[derive(Clone, Copy)]
struct Entry {
    depth: u32,
    value: i32,
    bound: Bound,
    /// No leaf below was cut off by the depth: the value (or bound) is a true one.
    exact: bool,
    /// The pit of the best move found, searched first next time.
    best: u8,
}

struct Searcher<'a> {
    db: &'a Database,
    top: Option<u32>,
    deadline: Instant,
    nodes: u64,
    out_of_time: bool,
    /// Set by another thread to stop the search, even in depth 1.
    stop: &'a AtomicBool,
    /// Depth 1 is finished whatever the clock says (its leaves are lookups).
    first_depth: bool,
    tt: HashMap<Board, Entry>,
}

impl Searcher<'_> {
    /// What the transposition table knows of `board` at `depth` within `(alpha, beta)`:
    /// an answer, if it has a usable one, and its best move (a hint for the move order)
    /// whenever it has an entry.
    fn remembered(
        &self,
        board: &Board,
        depth: u32,
        alpha: i32,
        beta: i32,
    ) -> (Option<(i32, bool)>, Option<u8>) {
        let Some(e) = self.tt.get(board).copied() else {
            return (None, None);
        };
        // An estimate is reused only at its own depth, so the answer is exactly the
        // depth-limited minimax value (the same at every run, checkable); a true value at
        // any depth.
        if e.depth == depth || e.exact {
            let usable = match e.bound {
                Bound::Exact => true,
                Bound::Lower => e.value >= beta,
                Bound::Upper => e.value <= alpha,
            };
            if usable {
                return (Some((e.value, e.exact)), Some(e.best));
            }
        }
        (None, Some(e.best))
    }

    /// Negamax with alpha-beta (fail-soft) and a transposition table. Returns the value for
    /// the side to move of `board` and whether it is exact (no depth cut-off below).
    fn negamax(
        &mut self,
        board: &Board,
        depth: u32,
        mut alpha: i32,
        beta: i32,
    ) -> Result<(i32, bool), ProbeError> {
        self.nodes += 1;
        if self.nodes.is_multiple_of(CLOCK_EVERY)
            && (self.stop.load(Relaxed) || !self.first_depth && Instant::now() >= self.deadline)
        {
            self.out_of_time = true;
        }
        if self.out_of_time {
            return Ok((0, false));
        }
        if self.top.is_some_and(|t| board.seeds() <= t) {
            return Ok((i32::from(self.db.value(board)?), true));
        }
        let moves = match self.db.rules().turn(board) {
            Turn::GameOver { value } => return Ok((i32::from(value), true)),
            Turn::Moves(list) => list,
        };
        if depth == 0 {
            return Ok((0, false));
        }
        let (known, hint) = self.remembered(board, depth, alpha, beta);
        if let Some(answer) = known {
            return Ok(answer);
        }
        let (order, searched) = move_order(&moves, hint);
        let order = &order[..searched];

        let alpha0 = alpha;
        let mut best = -INF;
        let mut best_pit = 0u8;
        let mut exact = true;
        for &(_, i) in order.iter() {
            let m = moves.as_slice()[i];
            let (v, e) = self.negamax(&m.child, depth - 1, -beta, -alpha)?;
            if self.out_of_time {
                return Ok((0, false));
            }
            let v = i32::from(m.captured) - v;
            exact &= e;
            if v > best {
                best = v;
                best_pit = m.pit;
            }
            alpha = alpha.max(v);
            if alpha >= beta {
                break;
            }
        }
        let bound = if best <= alpha0 {
            Bound::Upper
        } else if best >= beta {
            Bound::Lower
        } else {
            Bound::Exact
        };
        if self.tt.len() < TT_LIMIT || self.tt.contains_key(board) {
            self.tt.insert(
                *board,
                Entry {
                    depth,
                    value: best,
                    bound,
                    exact,
                    best: best_pit,
                },
            );
        }
        Ok((best, exact))
    }
}

/// How strongly the computer plays, from "often random" to perfect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Half of its moves are random; the others look 2 plies ahead, counting captures only.
    Fair = 1,
    /// Looks 4 plies ahead, counting captures only.
    Good = 2,
    /// Looks 8 plies ahead, counting captures only.
    Strong = 3,
    /// Looks as far ahead as the think time allows (up to 16 plies), captures only.
    Expert = 4,
    /// Never gives a seed away: the tables' best move that makes progress
    /// ([`Database::perfect_move`]); above the tables, the best move of [`analyse`].
    Perfect = 5,
}

impl Level {
    /// The five levels, weakest first.
    pub const ALL: [Level; 5] = [
        Level::Fair,
        Level::Good,
        Level::Strong,
        Level::Expert,
        Level::Perfect,
    ];

    /// The level's name, as the CLI and the API spell it.
    pub fn name(&self) -> &'static str {
        match self {
            Level::Fair => "fair",
            Level::Good => "good",
            Level::Strong => "strong",
            Level::Expert => "expert",
            Level::Perfect => "perfect",
        }
    }

    /// One line saying how the level plays.
    pub fn describe(&self) -> &'static str {
        match self {
            Level::Fair => "often random: half its moves at random, the rest 2 plies ahead",
            Level::Good => "looks 4 plies ahead, counting captures",
            Level::Strong => "looks 8 plies ahead, counting captures",
            Level::Expert => "looks up to 16 plies ahead within the think time, counting captures",
            Level::Perfect => "perfect play from the tables (a search beyond them)",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A level name or number that is not one of the five.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown level '{0}' (expected 1..5 or fair, good, strong, expert, perfect)")]
pub struct LevelError(pub String);

impl FromStr for Level {
    type Err = LevelError;
    fn from_str(text: &str) -> Result<Level, LevelError> {
        let key = text.trim().to_ascii_lowercase();
        Level::ALL
            .into_iter()
            .find(|l| l.name() == key || (*l as u8).to_string() == key)
            .ok_or_else(|| LevelError(crate::board::clip(text)))
    }
}

/// The move the computer plays at `level`, with the analysis it was chosen from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The chosen move; its `value` is the analysis' value of it.
    pub play: MoveValue,
    /// Whether the move was drawn at random (the `Fair` level).
    pub random: bool,
    /// The analysis the move was chosen from.
    pub analysis: Analysis,
}

/// A small deterministic random number generator (SplitMix64), so that a level's random
/// choices repeat for a given seed.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator whose stream is fixed by `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    /// The next number of the stream.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// The computer's move at `level` (`None` when the game is over). `think` bounds the time
/// of the searching levels; `rng` draws the random moves and breaks ties among equal moves
/// below `Perfect` (which plays deterministically).
///
/// # Errors
///
/// A table the answer needs is damaged.
pub fn choose_move(
    db: &Database,
    board: &Board,
    level: Level,
    think: Duration,
    rng: &mut Rng,
) -> Result<Option<Choice>, ProbeError> {
    let never = AtomicBool::new(false);
    Ok(choose_move_until(db, board, level, think, rng, &never)?
        .expect("without a stop the search always answers"))
}

/// [`choose_move`], stopped within moments once `stop` is set (by another thread: a
/// client gone): `None` when it was stopped, `Some(None)` when the game is over.
///
/// # Errors
///
/// As [`choose_move`].
pub fn choose_move_until(
    db: &Database,
    board: &Board,
    level: Level,
    think: Duration,
    rng: &mut Rng,
    stop: &AtomicBool,
) -> Result<Option<Option<Choice>>, ProbeError> {
    let depth = match level {
        Level::Fair => 2,
        Level::Good => 4,
        Level::Strong => 8,
        Level::Expert => 16,
        Level::Perfect => MAX_DEPTH,
    };
    let limits = Limits {
        think,
        max_depth: depth,
        tables: level == Level::Perfect,
    };
    let Some(analysis) = analyse_until(db, board, &limits, stop)? else {
        return Ok(None);
    };
    if analysis.moves.is_empty() {
        return Ok(Some(None));
    }
    if level == Level::Fair && rng.below(2) == 0 {
        let play = analysis.moves[rng.below(analysis.moves.len())];
        return Ok(Some(Some(Choice {
            play,
            random: true,
            analysis,
        })));
    }
    let play = if level == Level::Perfect && analysis.exact && analysis.depth == 0 {
        match db.perfect_move(board)? {
            Some(m) => m,
            None => return Ok(Some(None)),
        }
    } else if level == Level::Perfect {
        // Above the tables: a best move, preferring a capture (progress), then the lowest pit.
        let best: Vec<&MoveValue> = analysis
            .moves
            .iter()
            .filter(|m| m.value == analysis.value)
            .collect();
        **best
            .iter()
            .max_by_key(|m| (m.captured, std::cmp::Reverse(m.pit)))
            .expect("a best move")
    } else {
        let best: Vec<&MoveValue> = analysis
            .moves
            .iter()
            .filter(|m| m.value == analysis.value)
            .collect();
        *best[rng.below(best.len())]
    };
    Ok(Some(Some(Choice {
        play,
        random: false,
        analysis,
    })))
}

/// The order the moves of a position are searched in, as `(key, index into moves)` pairs,
/// the first `moves.len()` of them used: the remembered best move first, then captures
/// (largest first), then pit order.
fn move_order(moves: &MoveList, hint: Option<u8>) -> ([(i32, usize); ROW], usize) {
    let mut order: [(i32, usize); ROW] = [(0, 0); ROW];
    for (i, m) in moves.iter().enumerate() {
        let key = if Some(m.pit) == hint {
            -100
        } else {
            -i32::from(m.captured)
        };
        order[i] = (key, i);
    }
    order[..moves.len()].sort_unstable();
    (order, moves.len())
}
