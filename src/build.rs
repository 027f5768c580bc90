//! The build driver: solve layers in order, write each one, skip the ones already built.

use crate::board::MAX_SEEDS;
use crate::index;
use crate::rules::Rules;
use crate::solve::{self, SolveOptions, MAX_SOLVABLE_SEEDS, WORK_BYTES_PER_POSITION};
use crate::store::{self, LayerFile, LayerSummary, StoreError, WriteOptions};
use std::path::PathBuf;
use std::time::Instant;

/// What to build.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    pub db: PathBuf,
    pub rules: Rules,
    pub max_seeds: u32,
    /// Worker threads (None: rayon's default, one per core).
    pub threads: Option<usize>,
    /// Show progress bars.
    pub progress: bool,
    /// Refuse a layer whose working memory would exceed this many bytes.
    pub memory_limit: Option<u64>,
    pub write: WriteOptions,
}

/// What happened to one layer.
#[derive(Clone, Debug)]
pub struct LayerReport {
    pub seeds: u32,
    pub positions: u64,
    /// False when the layer was already on disk.
    pub built: bool,
    pub seconds: f64,
    pub bytes: u64,
    pub summary: LayerSummary,
}

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("--max-seeds {0} is beyond the 48 seeds of the game")]
    TooManySeeds(u32),
    #[error(
        "layer {seeds} is beyond what this solver builds (at most {MAX_SOLVABLE_SEEDS} seeds)"
    )]
    TooLarge { seeds: u32 },
    #[error("layer {seeds} needs about {need_gib:.2} GiB of memory to build, over the limit of {limit_gib:.2} GiB; lower --max-seeds or raise --memory-limit")]
    OverMemory {
        seeds: u32,
        need_gib: f64,
        limit_gib: f64,
    },
    #[error("{0}; remove the damaged file and build again")]
    Damaged(StoreError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot start {0} worker threads: {1}")]
    Threads(usize, String),
}

/// Estimated peak memory to build layer `n`: every lower layer uncompressed (one byte a
/// position), the working state, and room for the frontier (8 bytes an entry, held twice
/// while a round's pieces are joined) and the compressed blocks being written. The
/// allowance of 2 bytes a position covers the peaks measured up to layer 24 (README).
pub fn memory_needed(n: u32) -> u64 {
    let lower = if n == 0 { 0 } else { index::size_up_to(n - 1) };
    let size = index::size(n);
    lower + size * (WORK_BYTES_PER_POSITION + 2)
}

/// A "Key: N kB" line of a /proc file, in bytes.
fn proc_kib(file: &str, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(file).ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The peak resident memory of this process so far (bytes), if the OS says.
pub fn peak_rss() -> Option<u64> {
    proc_kib("/proc/self/status", "VmHWM:")
}

/// The physical memory of this machine, if the OS says.
pub fn physical_memory() -> Option<u64> {
    proc_kib("/proc/meminfo", "MemTotal:")
}

/// Builds every missing layer `0..=max_seeds` in order, calling `on_layer` after each one.
/// Layers already on disk are checked (header and block checksums) and read back, since
/// the layers above them need their values.
pub fn build(
    opts: &BuildOptions,
    mut on_layer: impl FnMut(&LayerReport) + Send,
) -> Result<Vec<LayerReport>, BuildError> {
    if opts.max_seeds > MAX_SEEDS {
        return Err(BuildError::TooManySeeds(opts.max_seeds));
    }
    if opts.max_seeds > MAX_SOLVABLE_SEEDS {
        return Err(BuildError::TooLarge {
            seeds: opts.max_seeds,
        });
    }
    // Refuse up front rather than fail (or swap) hours into the build.
    let limit = opts.memory_limit.or_else(physical_memory);
    if let Some(limit) = limit {
        let need = memory_needed(opts.max_seeds);
        if need > limit {
            const GIB: f64 = (1u64 << 30) as f64;
            return Err(BuildError::OverMemory {
                seeds: opts.max_seeds,
                need_gib: need as f64 / GIB,
                limit_gib: limit as f64 / GIB,
            });
        }
    }
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(t) = opts.threads {
        pool = pool.num_threads(t);
    }
    let pool = pool
        .build()
        .map_err(|e| BuildError::Threads(opts.threads.unwrap_or(0), e.to_string()))?;
    pool.install(|| build_in_pool(opts, &mut on_layer))
}

fn build_in_pool(
    opts: &BuildOptions,
    on_layer: &mut (dyn FnMut(&LayerReport) + Send),
) -> Result<Vec<LayerReport>, BuildError> {
    let mut layers: Vec<Vec<i8>> = Vec::new();
    let mut reports = Vec::new();
    for n in 0..=opts.max_seeds {
        let path = store::layer_path(&opts.db, opts.rules, n);
        let started = Instant::now();
        let report = if path.exists() {
            let file = LayerFile::open(&path, opts.rules, n).map_err(BuildError::Damaged)?;
            // Lower layers are only needed if something above them is still to build;
            // reading them back checks every block's checksum on the way.
            let above_missing = (n + 1..=opts.max_seeds)
                .any(|m| !store::layer_path(&opts.db, opts.rules, m).exists());
            if above_missing {
                layers.push(file.read_all().map_err(BuildError::Damaged)?);
            } else {
                file.check_blocks().map_err(BuildError::Damaged)?;
                layers.push(Vec::new());
            }
            LayerReport {
                seeds: n,
                positions: file.positions(),
                built: false,
                seconds: started.elapsed().as_secs_f64(),
                bytes: file.bytes(),
                summary: file.summary().clone(),
            }
        } else {
            let values = solve::solve_layer(
                opts.rules,
                n,
                &layers,
                SolveOptions {
                    progress: opts.progress,
                },
            );
            let written = store::write_layer(&opts.db, opts.rules, n, &values, opts.write)?;
            layers.push(values);
            LayerReport {
                seeds: n,
                positions: index::size(n),
                built: true,
                seconds: started.elapsed().as_secs_f64(),
                bytes: written.bytes,
                summary: written.summary,
            }
        };
        on_layer(&report);
        reports.push(report);
    }
    Ok(reports)
}
