//! The build of the tables that hold a pair per position, low then high: the bounds
//! ([`Tables::Bounds`]) and the own-row values ([`Tables::OwnRow`]). One pass a layer, in
//! memory, over the pairs of the layers below; each layer's pair written as its low file,
//! then its high file (which marks the layer complete). The two kinds differ only by their
//! files and their solver ([`PairKind`]).

use super::{BuildError, BuildObserver, BuildOptions, LayerReport, PassChoice, Tables};
use crate::board::MAX_SEEDS;
use crate::index;
use crate::solve::bounds::{solve_layer_bounds, BoundsLayer, MAX_BOUNDS_SEEDS};
use crate::solve::own_row::{self, OwnRowCounts};
use crate::store::{self, LayerFile, LayerSummary, StoreError, TableKind};
use std::path::Path;
use std::time::Instant;

/// Working memory of the bounds solver per position of the layer being solved (the
/// predecessor lists, each node's exit and state, the first pass's result, the move counts
/// and the sorted seeds: about 27 bytes, measured at layers 18, 20 and 24; 36 with a
/// margin, since a build that swaps or is killed for memory hours in is worse than one
/// refused up front), plus two bytes per position of every lower layer, which stay in
/// memory.
pub fn bounds_memory_needed(n: u32) -> u64 {
    let lower = if n == 0 { 0 } else { index::size_up_to(n - 1) };
    2 * lower + 36 * index::size(n)
}

/// Working memory of the own-row solver: the bounds solver's, a second copy of the
/// layer's pair (the memoryless bounds beside the values being narrowed), and the
/// components (a number, a member entry, a visit order and a low link per position: 16
/// bytes, 18 with the pair).
pub fn own_row_memory_needed(n: u32) -> u64 {
    bounds_memory_needed(n) + 18 * index::size(n)
}

/// One kind of pair table: its two files and how a layer is solved.
#[derive(Clone, Copy)]
struct PairKind {
    low: TableKind,
    high: TableKind,
    /// The own-row rule's repetition, for its values; `None` for the bounds.
    own_row: Option<own_row::Repetition>,
}

impl PairKind {
    fn of(opts: &BuildOptions) -> PairKind {
        match opts.tables {
            Tables::OwnRow(r) => PairKind {
                low: TableKind::OwnRowLow(r),
                high: TableKind::OwnRowHigh(r),
                own_row: Some(r),
            },
            _ => PairKind {
                low: TableKind::BoundsLow,
                high: TableKind::BoundsHigh,
                own_row: None,
            },
        }
    }

    /// Layer `n`'s pair from the pairs below it, and what its searches took.
    fn solve(
        self,
        opts: &BuildOptions,
        n: u32,
        lower: &[BoundsLayer],
    ) -> (BoundsLayer, Option<OwnRowCounts>) {
        match self.own_row {
            Some(r) => {
                let (pair, counts) =
                    own_row::solve_layer(opts.rules, n, r, lower, opts.search_budget);
                (pair, Some(counts))
            }
            None => (solve_layer_bounds(opts.rules, n, lower), None),
        }
    }
}

/// Builds every missing layer `0..=max_seeds` of a pair table (the bounds or the own-row
/// values) under the bounds folder. Layers on disk are checked and read back; the build
/// resumes at the first layer whose files are missing. The folder is locked while building.
pub(super) fn build(
    opts: &BuildOptions,
    observer: &dyn BuildObserver,
) -> Result<Vec<LayerReport>, BuildError> {
    let kind = PairKind::of(opts);
    if opts.pass == PassChoice::Lean {
        return Err(BuildError::LeanBounds);
    }
    let root = store::bounds_dir(&opts.db);
    if (MAX_BOUNDS_SEEDS + 1..=MAX_SEEDS).contains(&opts.max_seeds) {
        return Err(BuildError::TooLarge {
            seeds: opts.max_seeds,
            limit: MAX_BOUNDS_SEEDS,
        });
    }
    let folder = store::rules_dir(&root, opts.rules);
    let need = if kind.own_row.is_some() {
        own_row_memory_needed
    } else {
        bounds_memory_needed
    };
    let (pool, _lock) = super::prepare(opts, need, &folder)?;
    pool.install(|| {
        let mut layers: Vec<BoundsLayer> = Vec::new();
        let mut reports = Vec::new();
        for n in 0..=opts.max_seeds {
            if observer.cancelled() {
                return Err(BuildError::Cancelled { seeds: n });
            }
            let started = Instant::now();
            let report = if on_disk(&root, opts, n, kind) {
                let (pair, report) = read_back(&root, opts, n, kind)?;
                let above_missing =
                    (n + 1..=opts.max_seeds).any(|m| !on_disk(&root, opts, m, kind));
                layers.push(if above_missing {
                    pair
                } else {
                    BoundsLayer::default()
                });
                report
            } else {
                observer.layer_started(n, index::size(n));
                let (pair, searched) = kind.solve(opts, n, &layers);
                let report = LayerReport {
                    searched,
                    ..write_pair(&root, opts, n, &pair, kind)?
                };
                layers.push(pair);
                report
            };
            let report = LayerReport {
                seconds: started.elapsed().as_secs_f64(),
                ..report
            };
            observer.layer_done(&report);
            reports.push(report);
        }
        Ok(reports)
    })
}

fn path(root: &Path, opts: &BuildOptions, n: u32, kind: TableKind) -> std::path::PathBuf {
    store::table_path(root, opts.rules, n, kind)
}

/// Whether layer `n` has both its files (the high one is written last). A layer missing
/// either half is built again, both files, as a layer missing its distances file is: the
/// advice to remove the remaining half only led to the same build. (A low file that is a
/// link leading nowhere is not missing: opening it says what it is.)
fn on_disk(root: &Path, opts: &BuildOptions, n: u32, kind: PairKind) -> bool {
    path(root, opts, n, kind.high).exists()
        && std::fs::symlink_metadata(path(root, opts, n, kind.low)).is_ok()
}

/// A layer found on disk: checked, read back (the layers above need it) and reported.
fn read_back(
    root: &Path,
    opts: &BuildOptions,
    n: u32,
    kind: PairKind,
) -> Result<(BoundsLayer, LayerReport), BuildError> {
    let (low_path, high_path) = (
        path(root, opts, n, kind.low),
        path(root, opts, n, kind.high),
    );
    // (A link that leads nowhere is not missing: opening it says what it is.)
    if std::fs::symlink_metadata(&low_path).is_err() {
        // The high file is written last: without its low file it is what is left of a
        // layer, and it is the file to remove.
        let name = low_path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned());
        return Err(BuildError::Damaged(StoreError::Corrupted {
            path: high_path,
            what: format!("its low file {} is missing", name.unwrap_or_default()),
        }));
    }
    // Damage is to remove; a file the system will not read may be fine.
    let existing = super::existing_layer_error;
    let low = LayerFile::open_kind(&low_path, opts.rules, n, kind.low).map_err(existing)?;
    let high = LayerFile::open_kind(&high_path, opts.rules, n, kind.high).map_err(existing)?;
    let pair = BoundsLayer {
        low: low.read_all().map_err(existing)?,
        high: high.read_all().map_err(existing)?,
    };
    let report = LayerReport {
        seeds: n,
        positions: low.positions(),
        built: false,
        seconds: 0.0,
        bytes: low.bytes() + high.bytes(),
        summary: low.summary().clone(),
        exact: Some(pair.exact()),
        searched: None,
    };
    Ok((pair, report))
}

/// Writes the low file, then the high file (which marks the layer complete).
fn write_pair(
    root: &Path,
    opts: &BuildOptions,
    n: u32,
    pair: &BoundsLayer,
    kind: PairKind,
) -> Result<LayerReport, StoreError> {
    let as_bytes = |v: &[i8]| v.iter().map(|&x| x as u8).collect::<Vec<u8>>();
    let summary = LayerSummary::from_values(n, &pair.low);
    let low = store::write_table(
        root,
        opts.rules,
        kind.low,
        &as_bytes(&pair.low),
        summary.clone(),
        opts.write,
    )?;
    let high = store::write_table(
        root,
        opts.rules,
        kind.high,
        &as_bytes(&pair.high),
        LayerSummary::from_values(n, &pair.high),
        opts.write,
    )?;
    Ok(LayerReport {
        seeds: n,
        positions: index::size(n),
        built: true,
        seconds: 0.0,
        bytes: low.bytes + high.bytes,
        summary,
        exact: Some(pair.exact()),
        searched: None,
    })
}
