//! What the lean pass will hold in memory and on disk for a layer ([`LeanPlan`]): the
//! figures a build checks before it starts a layer and prints.

use super::{nibbles::Nibbles, runs, LeanOptions, LOOKUP_BYTES_PER_POSITION, MAX_SLICE};
use super::{MIN_BUFFER, PART, SUB};
use crate::index;

/// What the lean pass will hold in memory for a layer (bytes), printed before it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeanPlan {
    /// The layer.
    pub seeds: u32,
    /// The positions this process holds: the layer, or a rank's share of it.
    pub positions: u64,
    /// The nibbles: half a byte a position.
    pub state_bytes: u64,
    /// Frontier buffers and exits-pass lookups.
    pub buffer_bytes: u64,
    /// Positions per slice of the exits pass.
    pub slice_positions: u64,
    /// Decompressed blocks, chunk buffers and output batches, an allowance.
    pub other_bytes: u64,
    /// Free disk space the layer needs: its scratch files and its two table files.
    pub disk_bytes: u64,
}

impl LeanPlan {
    /// The peak memory the plan adds up to.
    pub fn total_bytes(&self) -> u64 {
        self.state_bytes + self.buffer_bytes + self.other_bytes
    }
}

/// Disk bytes a position of the layer needs at most while it is built, with its distances:
/// at layer 24 the layer peaked at 2.04 (the final merge: the thresholds' runs, 1.04, and
/// the two tables, 0.89, beside the last checkpoint's manifest), and the scratch folder
/// alone at 1.59 near the end of the last threshold; the rest is a margin for layers
/// whose tables compress less.
const DISK_BYTES_PER_POSITION: f64 = 2.4;
/// What a layer built without its distances needs less: its distances table (0.41 at
/// layer 24) and the rounds of its runs (0.06 at layer 22).
const DISTANCES_DISK_BYTES_PER_POSITION: f64 = 0.45;

/// The plan for layer `n`, built with its distances or not.
pub fn plan(n: u32, opts: &LeanOptions, distances: bool) -> LeanPlan {
    plan_share(n, index::size(n), opts, distances)
}

/// The plan for layer `n` of the own-row values' reachability game
/// ([`super::Game::Reach`]): the values' plan without distances, with a `W` bit a position
/// more, and a second table of the pair on disk where the distances would be.
pub(crate) fn plan_reach(n: u32, opts: &LeanOptions) -> LeanPlan {
    let mut plan = plan_share(n, index::size(n), opts, true);
    plan.state_bytes = Nibbles::bytes_for(plan.positions, true);
    plan
}

/// The plan of one rank holding `positions` of layer `n` (all of them for a single
/// process): the nibbles, the default buffer and the disk scale with the share.
pub fn plan_share(n: u32, positions: u64, opts: &LeanOptions, distances: bool) -> LeanPlan {
    let buffer_bytes = opts
        .buffer_bytes
        .unwrap_or((positions * 3 / 25).max(16 << 20))
        .max(MIN_BUFFER);
    let slice_positions =
        (buffer_bytes / (LOOKUP_BYTES_PER_POSITION + 1)).clamp(SUB as u64, MAX_SLICE) / SUB as u64
            * SUB as u64;
    let threads = rayon::current_num_threads() as u64;
    // Per thread: a decompressed lower block and a run's chunk; per threshold, the exits
    // pass's writer of its exits file (a chunk and a write buffer); the output batch of
    // the final merge (two bytes a position, compressed copies beside it); the merges'
    // buffers (a chunk of each run read); and what any run of the program holds besides
    // (code, thread stacks, allocator slack: 28 MiB measured at layer 24 beyond the rest
    // of the plan).
    let other_bytes = threads * (3 << 16)
        + u64::from(n) * (2 << 16)
        + 4 * PART
        + runs::merge_bytes(runs::merge_fan_in(positions))
        + (28 << 20);
    LeanPlan {
        seeds: n,
        positions,
        state_bytes: Nibbles::bytes_for(positions, false),
        buffer_bytes,
        slice_positions,
        other_bytes,
        disk_bytes: (positions as f64
            * if distances {
                DISK_BYTES_PER_POSITION
            } else {
                DISK_BYTES_PER_POSITION - DISTANCES_DISK_BYTES_PER_POSITION
            }) as u64
            + (1 << 20),
    }
}
