//! The build of the tables that hold a pair per position, low then high: the bounds
//! ([`Tables::Bounds`]) and the own-row values ([`Tables::OwnRow`]). One pass a layer, in
//! memory, over the pairs of the layers below; each layer's pair written as its low file,
//! then its high file (which marks the layer complete). The two kinds differ only by their
//! files and their solver ([`PairKind`]).

use super::{
    BuildError, BuildObserver, BuildOptions, LayerKind, LayerReport, Pass, PassChoice, Tables,
};
use crate::board::MAX_SEEDS;
use crate::index;
use crate::solve::bounds::{solve_layer_bounds, BoundsLayer, MAX_BOUNDS_SEEDS};
use crate::solve::own_row::{self, OwnRowCounts};
use crate::store::{self, LayerFile, LayerSummary, StoreError, TableKind};
use std::path::{Path, PathBuf};

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

/// Working memory of the own-row solver, its searches' trees aside (the build counts one a
/// thread): the bounds solver's, a second copy of the layer's pair (the memoryless bounds
/// beside the values being narrowed), and the components (a number, a member entry, a visit
/// order and a low link per position: 16 bytes, 18 with the pair).
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
    /// The own-row searches stop early when the observer asks (the bounds' pass is short).
    fn solve(
        self,
        opts: &BuildOptions,
        n: u32,
        lower: &[BoundsLayer],
        observer: &dyn BuildObserver,
    ) -> (BoundsLayer, Option<OwnRowCounts>) {
        match self.own_row {
            Some(r) => {
                let stop = || observer.cancelled();
                let (pair, counts) =
                    own_row::solve_layer_until(opts.rules, n, r, lower, opts.search_budget, &stop);
                (pair, Some(counts))
            }
            None => (solve_layer_bounds(opts.rules, n, lower), None),
        }
    }
}

/// Builds every missing layer `0..=max_seeds` of a pair table (the bounds or the own-row
/// values) under the bounds folder, through the layer loop every kind shares. Layers on
/// disk are checked and read back; a layer missing either half is built again, both
/// files. The folder is locked while building.
pub(super) fn build(
    opts: &BuildOptions,
    observer: &dyn BuildObserver,
) -> Result<Vec<LayerReport>, BuildError> {
    let kind = PairKind::of(opts);
    if opts.pass == PassChoice::Lean && kind.own_row.is_none() {
        return Err(BuildError::LeanBounds);
    }
    let root = store::bounds_dir(&opts.db);
    // Above the in-memory solver's limit only the own-row values' lean pass builds.
    let beyond = (MAX_BOUNDS_SEEDS + 1..=MAX_SEEDS).contains(&opts.max_seeds);
    if beyond && (kind.own_row.is_none() || opts.pass == PassChoice::InMemory) {
        return Err(BuildError::TooLarge {
            seeds: opts.max_seeds,
            limit: MAX_BOUNDS_SEEDS,
        });
    }
    let folder = store::rules_dir(&root, opts.rules);
    let limit = opts.memory_limit.or_else(super::physical_memory);
    let choice = PassFor::new(opts, kind, limit);
    let (pool, _lock) = super::prepare(opts, |n| choice.need(n), &folder)?;
    let mut pairs = Pairs {
        opts,
        root,
        kind,
        choice,
        layers: Vec::new(),
    };
    pool.install(|| super::build_layers(opts, observer, &mut pairs))
}

/// Which pass builds each layer of a pair table, and the memory it needs.
struct PassFor {
    kind: PairKind,
    pass: PassChoice,
    limit: Option<u64>,
    /// The own-row searches hold one proof tree a thread, as large as the budget allows.
    trees: u64,
    lean: crate::solve::lean::LeanOptions,
}

impl PassFor {
    fn new(opts: &BuildOptions, kind: PairKind, limit: Option<u64>) -> PassFor {
        let trees = if kind.own_row.is_some() {
            let threads = opts.threads.unwrap_or_else(rayon::current_num_threads) as u64;
            threads * own_row::proof_search::tree_bytes(opts.search_budget)
        } else {
            0
        };
        PassFor {
            kind,
            pass: opts.pass,
            limit,
            trees,
            lean: opts.lean.clone(),
        }
    }

    /// The in-memory pass's need for layer `n`.
    fn in_memory_need(&self, n: u32) -> u64 {
        if self.kind.own_row.is_some() {
            own_row_memory_needed(n) + self.trees
        } else {
            bounds_memory_needed(n)
        }
    }

    /// The pass of layer `n`: the lean pass for the own-row values when asked, when the
    /// in-memory pass would not fit under the limit, or above its largest layer.
    fn pass(&self, n: u32) -> Pass {
        if self.kind.own_row.is_none() {
            return Pass::InMemory;
        }
        match self.pass {
            PassChoice::InMemory => Pass::InMemory,
            PassChoice::Lean => Pass::Lean,
            PassChoice::Auto if n > MAX_BOUNDS_SEEDS => Pass::Lean,
            PassChoice::Auto => match self.limit {
                Some(limit) if self.in_memory_need(n) > limit => Pass::Lean,
                _ => Pass::InMemory,
            },
        }
    }

    /// The memory layer `n` needs with its pass.
    fn need(&self, n: u32) -> u64 {
        match self.pass(n) {
            Pass::InMemory => self.in_memory_need(n),
            Pass::Lean => crate::solve::lean::plan_reach(n, &self.lean).total_bytes(),
        }
    }

    /// Whether the in-memory pass fits layer `n` under the limit (it then searches what a
    /// lean pass leaves open).
    fn in_memory_fits(&self, n: u32) -> bool {
        n <= MAX_BOUNDS_SEEDS && self.limit.is_none_or(|l| self.in_memory_need(n) <= l)
    }
}

/// The pair tables' side of the layer loop.
struct Pairs<'a> {
    opts: &'a BuildOptions,
    /// The bounds folder.
    root: PathBuf,
    kind: PairKind,
    choice: PassFor,
    /// Every lower layer's pair (empty for a layer no build above needs).
    layers: Vec<BoundsLayer>,
}

impl LayerKind for Pairs<'_> {
    fn reads_lower(&self, m: u32) -> bool {
        // A layer searched again is searched in memory, over every lower layer.
        self.choice.pass(m) == Pass::InMemory || self.refines(m)
    }

    fn read_back(&mut self, n: u32, needed: bool) -> Result<LayerReport, BuildError> {
        if !needed {
            // Checked and counted block by block: a lean build above never holds it.
            self.layers.push(BoundsLayer::default());
            return check_back(&self.root, self.opts, n, self.kind);
        }
        let (pair, report) = read_back(&self.root, self.opts, n, self.kind)?;
        self.layers.push(pair);
        Ok(report)
    }

    fn build(&mut self, n: u32, observer: &dyn BuildObserver) -> Result<LayerReport, BuildError> {
        observer.layer_started(n, index::size(n));
        if self.choice.pass(n) == Pass::Lean {
            return self.build_lean(n, observer);
        }
        let (pair, searched) = self.kind.solve(self.opts, n, &self.layers, observer);
        // A cancelled layer never reaches the disk.
        if observer.cancelled() {
            return Err(BuildError::Cancelled { seeds: n });
        }
        let report = LayerReport {
            searched,
            ..write_pair(&self.root, self.opts, n, &pair, self.kind)?
        };
        self.layers.push(pair);
        Ok(report)
    }

    fn refines(&self, m: u32) -> bool {
        self.kind.own_row.is_some() && self.opts.refine.as_ref().is_some_and(|r| r.contains(&m))
    }

    fn refine(&mut self, n: u32, observer: &dyn BuildObserver) -> Result<LayerReport, BuildError> {
        // The searches run in memory only.
        if !self.choice.in_memory_fits(n) {
            return Err(BuildError::RefineOverMemory { seeds: n });
        }
        let (start, on_disk) = read_back(&self.root, self.opts, n, self.kind)?;
        let Some(r) = self.kind.own_row else {
            unreachable!("only the own-row values are refined")
        };
        if start.exact() == on_disk.positions {
            self.layers.push(start);
            return Ok(on_disk);
        }
        observer.layer_started(n, index::size(n));
        let stop = || observer.cancelled();
        let (pair, counts) = own_row::refine_layer_until(
            self.opts.rules,
            n,
            r,
            &self.layers,
            &start,
            self.opts.search_budget,
            &stop,
        )
        .map_err(|v| {
            // The file holds an interval the layers below rule out: it cannot be trusted.
            BuildError::Damaged(StoreError::Corrupted {
                path: path(&self.root, self.opts, n, self.kind.high),
                what: format!(
                    "position {v}: its interval lies outside the bounds over the layers below"
                ),
            })
        })?;
        if observer.cancelled() {
            return Err(BuildError::Cancelled { seeds: n });
        }
        // Written again only if something narrowed: the files stay as they were otherwise.
        let report = if pair == start {
            on_disk
        } else {
            write_pair(&self.root, self.opts, n, &pair, self.kind)?
        };
        self.layers.push(pair);
        Ok(LayerReport {
            searched: Some(counts),
            ..report
        })
    }
}

impl Pairs<'_> {
    /// Layer `n` of the own-row values by the lean pass: its reachability game, whose
    /// pair of bounds is the layer's interval where it is exact. Where it is not, and the
    /// in-memory pass fits, that pass builds the layer instead (with the lower layers read
    /// back for it), so that its searches narrow what the bounds leave open; otherwise the
    /// layer keeps the interval, sound for an empty history, and the report counts it.
    fn build_lean(
        &mut self,
        n: u32,
        observer: &dyn BuildObserver,
    ) -> Result<LayerReport, BuildError> {
        // The lean pass reads the lower layers from their files.
        self.layers
            .iter_mut()
            .for_each(|l| *l = BoundsLayer::default());
        let scratch = self.scratch(n);
        self.check_disk(n, &scratch)?;
        let (low, high, exact) = crate::solve::lean::build_reach_layer(
            &self.root,
            &scratch,
            self.opts.rules,
            n,
            self.kind.high,
            &self.opts.lean,
            self.opts.write,
            observer,
        )
        .map_err(|e| match e {
            StoreError::Stopped { .. } => BuildError::Cancelled { seeds: n },
            e => super::existing_layer_error(e),
        })?;
        let positions = index::size(n);
        if exact < positions && self.choice.in_memory_fits(n) {
            observer.lean_left_open(n, positions - exact);
            // Every lower layer in memory, for the in-memory pass's searches.
            let mut lower = Vec::with_capacity(n as usize);
            for m in 0..n {
                lower.push(read_back(&self.root, self.opts, m, self.kind)?.0);
            }
            let (pair, searched) = self.kind.solve(self.opts, n, &lower, observer);
            if observer.cancelled() {
                return Err(BuildError::Cancelled { seeds: n });
            }
            let report = LayerReport {
                searched,
                ..write_pair(&self.root, self.opts, n, &pair, self.kind)?
            };
            self.layers.push(pair);
            return Ok(report);
        }
        // The lean pass writes its blocks as they come, before the layer's models could
        // be counted: a pair coded by ranks is coded again, aside (a build stopped
        // between the two keeps the zstd pair, whole).
        let (low, high) = match self.opts.write.codec {
            store::Codec::Ranks => store::recode_pair(
                &self.opts.db,
                self.opts.rules,
                n,
                self.opts.tables,
                self.opts.write,
            )?,
            _ => (low, high),
        };
        self.layers.push(BoundsLayer::default());
        let counts = OwnRowCounts {
            positions,
            exact_by_bounds: exact,
            exact,
            ..OwnRowCounts::default()
        };
        Ok(LayerReport {
            seeds: n,
            positions,
            built: true,
            seconds: 0.0,
            bytes: low.bytes + high.bytes,
            summary: low.summary,
            exact: Some(exact),
            searched: Some(counts),
        })
    }

    /// Refuses a lean layer whose scratch files and pair would not fit on the disk (the
    /// values' lean pass's estimate a position, which its runs and two tables stay under:
    /// docs/measurements.md), counting what its scratch folder holds already as its own.
    fn check_disk(&self, n: u32, scratch: &Path) -> Result<(), BuildError> {
        let plan = crate::solve::lean::plan_reach(n, &self.opts.lean);
        let need = plan
            .disk_bytes
            .saturating_sub(super::prepare::folder_bytes(scratch));
        let dir = scratch.parent().unwrap_or(scratch).to_path_buf();
        match super::prepare::free_disk(&dir) {
            Some(free) if free < need => {
                const GIB: f64 = (1u64 << 30) as f64;
                Err(BuildError::DiskFull {
                    seeds: n,
                    dir,
                    need_gib: need as f64 / GIB,
                    free_gib: free as f64 / GIB,
                })
            }
            _ => Ok(()),
        }
    }

    /// The scratch folder of layer `n`'s lean pass: beside the values' (`lean-NN`), one
    /// for each repetition (`lean-r2-NN`, `lean-r3-NN`), so that a checkpoint of one is
    /// never resumed by the other.
    fn scratch(&self, n: u32) -> PathBuf {
        let values = self.opts.lean.scratch_for(&self.root, self.opts.rules, n);
        let tag = &self.kind.high.extension()[..2];
        values.with_file_name(format!("lean-{tag}-{n:02}"))
    }
}

fn path(root: &Path, opts: &BuildOptions, n: u32, kind: TableKind) -> std::path::PathBuf {
    store::table_path(root, opts.rules, n, kind)
}

/// A layer found on disk: checked, read back (the layers above need it) and reported.
fn read_back(
    root: &Path,
    opts: &BuildOptions,
    n: u32,
    kind: PairKind,
) -> Result<(BoundsLayer, LayerReport), BuildError> {
    // Both files are there: the layer loop found the layer complete.
    let (low_path, high_path) = (
        path(root, opts, n, kind.low),
        path(root, opts, n, kind.high),
    );
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

/// A layer found on disk that no layer built above reads from memory: every block of both
/// files checked (decompressed, in parallel, one block of each a thread at a time) and its
/// exact positions counted, without holding the layer; a block the high file shares with
/// the low file is exact throughout.
fn check_back(
    root: &Path,
    opts: &BuildOptions,
    n: u32,
    kind: PairKind,
) -> Result<LayerReport, BuildError> {
    use rayon::prelude::*;
    let existing = super::existing_layer_error;
    let open =
        |k| LayerFile::open_kind(&path(root, opts, n, k), opts.rules, n, k).map_err(existing);
    let (low, high) = (open(kind.low)?, open(kind.high)?);
    if low.blocks() != high.blocks() || low.positions() != high.positions() {
        return Err(existing(StoreError::Corrupted {
            path: path(root, opts, n, kind.high),
            what: "its layout is not its low file's".into(),
        }));
    }
    let exact = (0..low.blocks())
        .into_par_iter()
        .map(|b| -> Result<u64, StoreError> {
            let l = low.read_block_bytes(b)?;
            if low.same_block(&high, b)? {
                high.check_block_range(b, &l)?;
                return Ok(l.len() as u64);
            }
            let h = high.read_block_bytes(b)?;
            Ok(l.iter().zip(&h).filter(|(a, b)| a == b).count() as u64)
        })
        .sum::<Result<u64, StoreError>>()
        .map_err(existing)?;
    Ok(LayerReport {
        seeds: n,
        positions: low.positions(),
        built: false,
        seconds: 0.0,
        bytes: low.bytes() + high.bytes(),
        summary: low.summary().clone(),
        exact: Some(exact),
        searched: None,
    })
}

/// Writes the pair: the low file, then the high file (which marks the layer complete),
/// sharing the low file's blocks where the layer is exact ([`store::write_pair`]).
fn write_pair(
    root: &Path,
    opts: &BuildOptions,
    n: u32,
    pair: &BoundsLayer,
    kind: PairKind,
) -> Result<LayerReport, StoreError> {
    let as_bytes = |v: &[i8]| v.iter().map(|&x| x as u8).collect::<Vec<u8>>();
    let summary = LayerSummary::from_values(n, &pair.low);
    let (low, high) = store::write_pair(
        root,
        opts.rules,
        n,
        kind.high,
        &as_bytes(&pair.low),
        &as_bytes(&pair.high),
        (summary.clone(), LayerSummary::from_values(n, &pair.high)),
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
