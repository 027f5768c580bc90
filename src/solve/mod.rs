//! The retrograde pass: exact values of every position of a layer, given the layers below.
//!
//! # Method
//!
//! Within layer `n` the only moves that stay in the layer are the non-capturing ones; a
//! capturing move is an *exit* whose value (`captured − value(child)`) is already known from
//! a lower layer. For each threshold `t = n, n−1, …, 1` two sets grow together:
//!
//! * `W_t`: the mover can force a value `≥ t` — some exit gives `≥ t`, or some in-layer
//!   child is in `L_t`;
//! * `L_t`: the mover gets at most `−t` — every exit gives `≤ −t` and every in-layer child
//!   is in `W_t`.
//!
//! Endless play scores 0, which is neither `≥ t` nor `≤ −t`, so each is a reachability game
//! solved by retrograde propagation: a position that enters `L_t` puts every in-layer
//! predecessor in `W_t`; one that enters `W_t` decrements each predecessor's count of
//! in-layer children not yet in `W`, and a predecessor whose count reaches zero (and whose
//! best exit is `≤ −t`) enters `L_t`. Since `W_t ⊆ W_{t−1}`, membership and counters carry
//! over from one threshold to the next: each position is settled once, and each in-layer
//! edge is walked backwards at most once. A position first entering `W_t` has value exactly
//! `t`, one entering `L_t` exactly `−t`; whatever is left at the end is endless play, 0.
//!
//! Only the best exit matters: `W_t` needs some exit `≥ t`, `L_t` needs every exit `≤ −t`,
//! i.e. the best one. So the working state is three bytes a position: the value (or
//! "unknown"), the best exit, and the counter.
//!
//! Predecessors are found by un-sowing ([`unsow`]); each candidate is confirmed by playing
//! its move forward with the rules, which keeps every rule subtlety (feeding, grand slams)
//! in one place.
//!
//! # Parallelism
//!
//! Passes over the layer split the index range into chunks (rayon); propagation processes a
//! frontier in parallel. Shared per-position state is atomic bytes (compare-and-swap to
//! settle a value, fetch-sub for counters); there is no lock. The fixpoint does not depend
//! on the order of work, so any thread count gives the same values, byte for byte.

mod unsow;

pub use unsow::unsow;

use crate::board::Board;
use crate::index;
use crate::rules::{Rules, Turn};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

/// Marks a position whose value is not settled yet. No value reaches −128.
const UNKNOWN: u8 = 0x80;
/// Best exit of a position without capturing moves.
const NO_EXIT: i8 = i8::MIN;
/// Positions per unit of parallel work in whole-layer passes.
const CHUNK: u64 = 1 << 14;

/// The largest layer the solver handles: its frontier holds 32-bit indices.
pub const MAX_SOLVABLE_SEEDS: u32 = 31;

/// Working memory of the pass, in bytes per position of the layer being solved (value,
/// best exit, counter), not counting the frontier.
pub const WORK_BYTES_PER_POSITION: u64 = 3;

/// Values of the layers already solved, by layer then index.
pub trait LowerLayers: Sync {
    fn value(&self, seeds: u32, index: u64) -> i8;
}

impl<T: AsRef<[i8]> + Sync> LowerLayers for [T] {
    #[inline]
    fn value(&self, seeds: u32, index: u64) -> i8 {
        self[seeds as usize].as_ref()[index as usize]
    }
}

impl<T: AsRef<[i8]> + Sync> LowerLayers for Vec<T> {
    #[inline]
    fn value(&self, seeds: u32, index: u64) -> i8 {
        self[seeds as usize].as_ref()[index as usize]
    }
}

/// How the pass reports progress.
#[derive(Clone, Copy, Debug, Default)]
pub struct SolveOptions {
    /// Show an indicatif progress bar on stderr (it hides itself when stderr is not a terminal).
    pub progress: bool,
}

/// Exact values of every position of layer `n`, indexed by [`index::rank`]. `lower` must
/// hold layers `0..n` for the same rules.
pub fn solve_layer(rules: Rules, n: u32, lower: &dyn LowerLayers, opts: SolveOptions) -> Vec<i8> {
    assert!(
        n <= MAX_SOLVABLE_SEEDS,
        "layer {n} is too large for the solver"
    );
    let size = index::size(n);
    let bar = progress_bar(opts.progress, n, size);

    let value: Vec<AtomicU8> = (0..size)
        .into_par_iter()
        .map(|_| AtomicU8::new(UNKNOWN))
        .collect();
    let mut best_exit = vec![NO_EXIT; size as usize];
    let counter: Vec<AtomicU8> = (0..size)
        .into_par_iter()
        .map(|_| AtomicU8::new(0))
        .collect();

    // Pass 1: each position's best exit and its number of in-layer moves.
    bar.set_message("exits");
    best_exit
        .par_chunks_mut(CHUNK as usize)
        .enumerate()
        .for_each(|(c, exits)| {
            let start = c as u64 * CHUNK;
            let end = start + exits.len() as u64;
            for (i, board) in index::walk(n, start, end) {
                let (exit, stays) = exits_and_stays(rules, &board, lower);
                exits[(i - start) as usize] = exit;
                counter[i as usize].store(stays, Relaxed);
            }
            bar.inc(exits.len() as u64);
        });

    // Pass 2: thresholds from n down to 1.
    bar.set_position(0);
    let state = State {
        rules,
        n,
        value: &value,
        best_exit: &best_exit,
        counter: &counter,
    };
    for t in (1..=n as i8).rev() {
        bar.set_message(format!("value ±{t}"));
        let mut frontier = state.seeds(t);
        bar.inc(frontier.len() as u64);
        while !frontier.is_empty() {
            frontier = state.propagate(t, &frontier);
            bar.inc(frontier.len() as u64);
        }
    }
    bar.finish_and_clear();

    // What is left unsettled is endless play: value 0.
    value
        .into_par_iter()
        .map(|v| match v.into_inner() {
            UNKNOWN => 0,
            v => v as i8,
        })
        .collect()
}

/// Solves layers `0..=max_seeds` in memory: `result[n][index]`. For tests and small games;
/// the build driver writes each layer to disk as it goes.
pub fn solve_all(rules: Rules, max_seeds: u32) -> Vec<Vec<i8>> {
    let mut layers: Vec<Vec<i8>> = Vec::new();
    for n in 0..=max_seeds {
        let values = solve_layer(rules, n, &layers, SolveOptions::default());
        layers.push(values);
    }
    layers
}

/// The best exit value of `board` (or [`NO_EXIT`]) and its number of in-layer moves. A
/// finished game is an "exit" worth its end value with no in-layer moves.
#[inline]
fn exits_and_stays(rules: Rules, board: &Board, lower: &dyn LowerLayers) -> (i8, u8) {
    match rules.turn(board) {
        Turn::GameOver { value } => (value, 0),
        Turn::Moves(moves) => {
            let n = board.seeds();
            let mut best = NO_EXIT;
            let mut stays = 0u8;
            for m in &moves {
                if m.captured == 0 {
                    stays += 1;
                } else {
                    let c = u32::from(m.captured);
                    let child = lower.value(n - c, index::rank(&m.child));
                    best = best.max(m.captured as i8 - child);
                }
            }
            (best, stays)
        }
    }
}

struct State<'a> {
    rules: Rules,
    n: u32,
    value: &'a [AtomicU8],
    best_exit: &'a [i8],
    counter: &'a [AtomicU8],
}

impl State<'_> {
    /// Positions that enter `W_t` or `L_t` by their exits alone at threshold `t`: a best
    /// exit of `t` (higher ones settled at a higher threshold), or no in-layer child left
    /// outside `W` and a best exit now `≤ −t`.
    fn seeds(&self, t: i8) -> Vec<u32> {
        let size = self.value.len() as u64;
        let chunks = size.div_ceil(CHUNK);
        (0..chunks)
            .into_par_iter()
            .flat_map_iter(|c| {
                let start = c * CHUNK;
                let end = (start + CHUNK).min(size);
                let mut found = Vec::new();
                for i in start as usize..end as usize {
                    if self.value[i].load(Relaxed) != UNKNOWN {
                        continue;
                    }
                    let exit = self.best_exit[i];
                    let settled = if exit >= t {
                        Some(t)
                    } else if exit <= -t && self.counter[i].load(Relaxed) == 0 {
                        Some(-t)
                    } else {
                        None
                    };
                    if let Some(v) = settled {
                        self.value[i].store(v as u8, Relaxed);
                        found.push(i as u32);
                    }
                }
                found
            })
            .collect()
    }

    /// Settles the in-layer predecessors that the newly settled `frontier` decides at
    /// threshold `t`, and returns them.
    fn propagate(&self, t: i8, frontier: &[u32]) -> Vec<u32> {
        frontier
            .par_chunks(1024)
            .flat_map_iter(|chunk| {
                let mut found = Vec::new();
                for &i in chunk {
                    let child_value = self.value[i as usize].load(Relaxed) as i8;
                    let child = index::unrank(self.n, u64::from(i));
                    unsow(self.rules, &child, |parent| {
                        let p = index::rank(&parent) as usize;
                        if child_value < 0 {
                            // A child in L_t: its parent can move there and get ≥ t.
                            if self.settle(p, t) {
                                found.push(p as u32);
                            }
                        } else {
                            // A child in W_t: one fewer way out for its parent.
                            let left = self.counter[p].fetch_sub(1, Relaxed) - 1;
                            if left == 0 && self.best_exit[p] <= -t && self.settle(p, -t) {
                                found.push(p as u32);
                            }
                        }
                    });
                }
                found
            })
            .collect()
    }

    /// Sets an unknown position's value; false if it was already settled.
    #[inline]
    fn settle(&self, p: usize, v: i8) -> bool {
        self.value[p]
            .compare_exchange(UNKNOWN, v as u8, Relaxed, Relaxed)
            .is_ok()
    }
}

fn progress_bar(show: bool, n: u32, size: u64) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(size);
    bar.set_style(
        ProgressStyle::with_template(
            "layer {prefix:>2} {msg:<10} [{bar:30}] {human_pos}/{human_len} {per_sec} eta {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.set_prefix(n.to_string());
    bar
}
