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
//! i.e. the best one. So the working state is two bytes a position: the best exit, and
//! one byte that holds the counter while the position is unsettled and its value after.
//!
//! Predecessors are found by un-sowing ([`unsow`]); each candidate is confirmed by playing
//! its move forward with the rules, which keeps every rule subtlety (feeding, grand slams)
//! in one place.
//!
//! # Parallelism
//!
//! Passes over the layer split the index range into chunks (rayon); propagation processes a
//! frontier in parallel. Shared per-position state is one atomic byte, updated by
//! compare-and-swap; there is no lock. The fixpoint does not depend
//! on the order of work, so any thread count gives the same values, byte for byte.

mod unsow;

pub use unsow::{unsow, unsow_reference};

use crate::board::Board;
use crate::index;
use crate::rules::{Rules, Turn};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

/// Best exit of a position without capturing moves.
const NO_EXIT: i8 = i8::MIN;
/// Positions per unit of parallel work in whole-layer passes.
const CHUNK: u64 = 1 << 14;
/// Below this distance, stepping a board forward is cheaper than unranking.
const STEP_INSTEAD_OF_UNRANK: usize = 8;
/// Parent updates gathered (and prefetched) before they are applied.
const PREFETCH_BATCH: usize = 64;

/// Asks the CPU to start loading the cache line of `cell`.
#[inline(always)]
fn prefetch<T>(cell: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; it never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(
            cell as *const T as *const i8,
            std::arch::x86_64::_MM_HINT_T0,
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = cell;
}

/// The largest layer the solver handles: a frontier entry packs each pit in 5 bits.
pub const MAX_SOLVABLE_SEEDS: u32 = 31;

/// A newly settled position waiting to be propagated: its board, 5 bits a pit, and in the
/// top bit whether its mover lost (entered `L`) rather than won. Carrying the board saves
/// unranking it, and carrying the verdict saves reading its cell back.
#[derive(Clone, Copy)]
struct Settled(u64);

impl Settled {
    const LOST: u64 = 1 << 63;
    #[inline]
    fn new(board: &Board, lost: bool) -> Settled {
        let mut packed = 0u64;
        for (i, &p) in board.pits().iter().enumerate() {
            packed |= u64::from(p) << (5 * i);
        }
        Settled(packed | if lost { Settled::LOST } else { 0 })
    }
    #[inline]
    fn board(self) -> Board {
        let mut pits = [0u8; crate::board::PITS];
        for (i, p) in pits.iter_mut().enumerate() {
            *p = ((self.0 >> (5 * i)) & 31) as u8;
        }
        Board::from_pits_unchecked(pits)
    }
    #[inline]
    fn lost(self) -> bool {
        self.0 & Settled::LOST != 0
    }
}

/// Working memory of the pass, in bytes per position of the layer being solved (the state
/// byte and the best exit), not counting the frontier.
pub const WORK_BYTES_PER_POSITION: u64 = 2;

/// One byte of shared state per position. While a position is unsettled it holds
/// `0x80 | k`, `k` being its number of in-layer moves whose child is not yet known to be in
/// `W` (at most 6); once settled it holds the value as an `i8` (−48..=48), which never
/// collides with `0x80..=0x87`. Packing the counter and the value together makes every
/// predecessor update a single random access and a single compare-and-swap.
mod cell {
    pub const UNSETTLED: u8 = 0x80;
    #[inline]
    pub fn unsettled(counter: u8) -> u8 {
        UNSETTLED | counter
    }
    #[inline]
    pub fn is_unsettled(cell: u8) -> bool {
        cell & 0xF8 == UNSETTLED
    }
    #[inline]
    pub fn counter(cell: u8) -> u8 {
        cell & 0x07
    }
}

/// Values of the layers already solved, by layer then index.
pub trait LowerLayers: Sync {
    fn value(&self, seeds: u32, index: u64) -> i8;
    /// A hint that `value(seeds, index)` is coming soon.
    fn prefetch(&self, _seeds: u32, _index: u64) {}
}

impl<T: AsRef<[i8]> + Sync> LowerLayers for [T] {
    #[inline]
    fn value(&self, seeds: u32, index: u64) -> i8 {
        self[seeds as usize].as_ref()[index as usize]
    }
    #[inline]
    fn prefetch(&self, seeds: u32, index: u64) {
        prefetch(&self[seeds as usize].as_ref()[index as usize]);
    }
}

impl<T: AsRef<[i8]> + Sync> LowerLayers for Vec<T> {
    #[inline]
    fn value(&self, seeds: u32, index: u64) -> i8 {
        self.as_slice().value(seeds, index)
    }
    #[inline]
    fn prefetch(&self, seeds: u32, index: u64) {
        self.as_slice().prefetch(seeds, index);
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
    let t0 = std::time::Instant::now();

    let mut cells: Vec<AtomicU8> = Vec::with_capacity(size as usize);
    cells.resize_with(size as usize, || AtomicU8::new(0));
    let mut best_exit = vec![NO_EXIT; size as usize];

    // Pass 1: each position's best exit and its number of in-layer moves. Lower-layer
    // values are looked up a batch at a time after prefetching, as in propagation.
    bar.set_message("exits");
    best_exit
        .par_chunks_mut(CHUNK as usize)
        .zip(cells.par_chunks_mut(CHUNK as usize))
        .enumerate()
        .for_each(|(c, (exits, cells))| {
            let start = c as u64 * CHUNK;
            let end = start + exits.len() as u64;
            // (position in chunk, seeds captured, child's layer, child's index)
            let mut pending: Vec<(u32, u8, u32, u64)> = Vec::with_capacity(PREFETCH_BATCH + 8);
            for (i, board) in index::walk(n, start, end) {
                let k = (i - start) as usize;
                match rules.turn(&board) {
                    Turn::GameOver { value } => {
                        exits[k] = value;
                        *cells[k].get_mut() = cell::unsettled(0);
                    }
                    Turn::Moves(moves) => {
                        let mut stays = 0u8;
                        for m in &moves {
                            if m.captured == 0 {
                                stays += 1;
                            } else {
                                let seeds = n - u32::from(m.captured);
                                let idx = index::rank(&m.child);
                                lower.prefetch(seeds, idx);
                                pending.push((k as u32, m.captured, seeds, idx));
                            }
                        }
                        *cells[k].get_mut() = cell::unsettled(stays);
                    }
                }
                if pending.len() >= PREFETCH_BATCH {
                    apply_exits(&mut pending, exits, lower);
                }
            }
            apply_exits(&mut pending, exits, lower);
            bar.inc(exits.len() as u64);
        });

    // A profiling aid: AWARI_TIMING=1 prints the time of each phase and threshold.
    let timing = std::env::var_os("AWARI_TIMING").is_some();
    if timing {
        eprintln!("layer {n}: exits {:?}", t0.elapsed());
    }
    // Pass 2: thresholds from n down to 1.
    bar.set_position(0);
    for t in (1..=n as i8).rev() {
        bar.set_message(format!("value ±{t}"));
        let ts = std::time::Instant::now();
        let mut frontier = seeds(n, t, bytes_mut(&mut cells), &best_exit);
        let state = State {
            rules,
            cells: &cells,
            best_exit: &best_exit,
        };
        let seed_time = ts.elapsed();
        let seeded = frontier.len();
        let mut rounds = 0;
        let mut settled = 0;
        bar.inc(frontier.len() as u64);
        while !frontier.is_empty() {
            frontier = state.propagate(t, &frontier);
            settled += frontier.len();
            rounds += 1;
            bar.inc(frontier.len() as u64);
        }
        if timing {
            eprintln!("  t={t}: seeds {seeded} in {seed_time:?}, {rounds} rounds settle {settled}, total {:?}", ts.elapsed());
        }
    }
    bar.finish_and_clear();
    drop(best_exit);

    // What is left unsettled is endless play: value 0. Collecting a mapped `into_iter`
    // reuses the allocation, so this needs no second layer-sized buffer.
    cells
        .into_iter()
        .map(|c| {
            let c = c.into_inner();
            if cell::is_unsettled(c) {
                0
            } else {
                c as i8
            }
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

/// The cells as plain bytes, for the phases where one thread owns each part of the layer.
fn bytes_mut(cells: &mut [AtomicU8]) -> &mut [u8] {
    // SAFETY: AtomicU8 has the same size, alignment and bit validity as u8, and the
    // exclusive borrow rules out any concurrent atomic access while the bytes are in use.
    unsafe { &mut *(cells as *mut [AtomicU8] as *mut [u8]) }
}

/// Positions that enter `W_t` or `L_t` by their exits alone at threshold `t`: a best exit
/// of `t` (higher ones settled at a higher threshold), or no in-layer child left outside
/// `W` and a best exit now `≤ −t`. They are settled here and returned.
///
/// This runs once per threshold over the whole layer, so it tests 64 positions at a time
/// with branch-free code the compiler vectorises, and only looks closer at the hits.
fn seeds(n: u32, t: i8, cells: &mut [u8], best_exit: &[i8]) -> Vec<Settled> {
    let per_chunk: Vec<Vec<Settled>> = cells
        .par_chunks_mut(CHUNK as usize)
        .zip(best_exit.par_chunks(CHUNK as usize))
        .enumerate()
        .map(|(c, (cells, exits))| {
            let start = c * CHUNK as usize;
            let mut found = Vec::new();
            // The board of the last seed found, to step forward from rather than unrank.
            let mut cursor: Option<(usize, Board)> = None;
            for (b, (cells, exits)) in cells.chunks_mut(64).zip(exits.chunks(64)).enumerate() {
                let mut hits = 0u64;
                for (j, (&c, &e)) in cells.iter().zip(exits).enumerate() {
                    let unsettled = c & 0xF8 == cell::UNSETTLED;
                    let lost_all = c == cell::UNSETTLED && e <= -t;
                    let hit = unsettled & (e >= t) | lost_all;
                    hits |= u64::from(hit) << j;
                }
                while hits != 0 {
                    let j = hits.trailing_zeros() as usize;
                    hits &= hits - 1;
                    let settled = if exits[j] >= t { t } else { -t };
                    cells[j] = settled as u8;
                    let i = start + 64 * b + j;
                    let board = match cursor {
                        Some((k, mut bd)) if i - k <= STEP_INSTEAD_OF_UNRANK => {
                            for _ in k..i {
                                index::next_in_layer(&mut bd);
                            }
                            bd
                        }
                        _ => index::unrank(n, i as u64),
                    };
                    cursor = Some((i, board));
                    found.push(Settled::new(&board, settled < 0));
                }
            }
            found
        })
        .collect();
    per_chunk.concat()
}

/// Folds a batch of capturing moves into their positions' best exits, emptying it.
#[inline]
fn apply_exits(pending: &mut Vec<(u32, u8, u32, u64)>, exits: &mut [i8], lower: &dyn LowerLayers) {
    for &(k, captured, seeds, idx) in pending.iter() {
        let v = captured as i8 - lower.value(seeds, idx);
        let e = &mut exits[k as usize];
        *e = (*e).max(v);
    }
    pending.clear();
}

struct State<'a> {
    rules: Rules,
    cells: &'a [AtomicU8],
    best_exit: &'a [i8],
}

impl State<'_> {
    /// Settles the in-layer predecessors that the newly settled `frontier` decides at
    /// threshold `t`, and returns them.
    fn propagate(&self, t: i8, frontier: &[Settled]) -> Vec<Settled> {
        let per_chunk: Vec<Vec<Settled>> = frontier
            .par_chunks(4096)
            .map(|chunk| {
                let mut found = Vec::new();
                // Parents are gathered a batch at a time and their cells prefetched before
                // any is updated: the cells are scattered over the whole layer, and a
                // compare-and-swap would otherwise wait for each cache miss in turn.
                let mut batch: Vec<(usize, Board, bool)> = Vec::with_capacity(PREFETCH_BATCH + 64);
                for &entry in chunk {
                    let child_lost = entry.lost();
                    unsow(self.rules, &entry.board(), |parent| {
                        let p = index::rank(&parent) as usize;
                        prefetch(&self.cells[p]);
                        batch.push((p, parent, child_lost));
                    });
                    if batch.len() >= PREFETCH_BATCH {
                        self.update_parents(t, &mut batch, &mut found);
                    }
                }
                self.update_parents(t, &mut batch, &mut found);
                found
            })
            .collect();
        per_chunk.concat()
    }

    /// Applies a batch of (parent, parent board, child lost) edges, emptying the batch.
    #[inline]
    fn update_parents(
        &self,
        t: i8,
        batch: &mut Vec<(usize, Board, bool)>,
        found: &mut Vec<Settled>,
    ) {
        for &(p, parent, child_lost) in batch.iter() {
            if child_lost {
                // A child in L_t: its parent can move there and get ≥ t.
                if self.settle(p, t) {
                    found.push(Settled::new(&parent, false));
                }
            } else if self.count_down(p, t) {
                // That was its parent's last way out: the parent is in L_t.
                found.push(Settled::new(&parent, true));
            }
        }
        batch.clear();
    }

    /// Sets an unsettled position's value to `v`; false if it was already settled.
    #[inline]
    fn settle(&self, p: usize, v: i8) -> bool {
        let cell = &self.cells[p];
        let mut c = cell.load(Relaxed);
        while cell::is_unsettled(c) {
            match cell.compare_exchange_weak(c, v as u8, Relaxed, Relaxed) {
                Ok(_) => return true,
                Err(now) => c = now,
            }
        }
        false
    }

    /// One more in-layer child of `p` is in `W_t`. If that was the last child outside `W`
    /// and every exit gives `≤ −t`, `p` enters `L_t`: true.
    #[inline]
    fn count_down(&self, p: usize, t: i8) -> bool {
        let cell = &self.cells[p];
        let mut c = cell.load(Relaxed);
        while cell::is_unsettled(c) {
            let left = cell::counter(c) - 1;
            let next = if left == 0 && self.best_exit[p] <= -t {
                -t as u8
            } else {
                cell::unsettled(left)
            };
            match cell.compare_exchange_weak(c, next, Relaxed, Relaxed) {
                Ok(_) => return !cell::is_unsettled(next),
                Err(now) => c = now,
            }
        }
        false
    }
}

fn progress_bar(show: bool, n: u32, size: u64) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(size);
    bar.set_style(
        ProgressStyle::with_template(
            "layer {prefix:>2} {msg:<10} [{bar:30}] {human_pos}/{human_len} {rate} eta {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .with_key(
            "rate",
            |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.2} M/s", state.per_sec() / 1e6);
            },
        )
        .progress_chars("=> "),
    );
    bar.set_prefix(n.to_string());
    bar
}
