//! Tables for the rule "an endless game ends with each side keeping its own row": per
//! position the pair `low ≤ high` that the two sides can guarantee whatever the history (see
//! [`crate::solve::own_row`] for the semantics and the solver), built, stored, probed and
//! verified.
//!
//! Files: `DIR/own-row/<rules>/layer-NN.awlo` (low) and `layer-NN.awhi` (high), in the same
//! format as the value tables ([`crate::store`]) with their own table-kind codes (3 and 4),
//! so a values file is never read as a bound and a bound never as a value. The high file is
//! written after the low one, so a layer with its high file present is complete.

use crate::board::{Board, MAX_SEEDS};
use crate::build::{BuildError, BuildOptions};
use crate::index;
use crate::rules::{Rules, Turn};
use crate::solve::own_row::{solve_layer_own_row, BoundsLayer, MAX_OWN_ROW_SEEDS};
use crate::store::{self, LayerFile, LayerSummary, StoreError, TableKind};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The subfolder of a database folder that holds the own-row tables.
pub const SUBDIR: &str = "own-row";

/// The folder under which the own-row tables of `db` live (one subfolder per rule set).
pub fn own_row_db(db: &Path) -> PathBuf {
    db.join(SUBDIR)
}

/// Working memory of the own-row solver per position of the layer being solved (the
/// predecessor lists, each node's exit and state, the first pass's result, the move counts
/// and the sorted seeds: about 27 bytes, measured at layers 18, 20 and 24; 36 with a
/// margin, since a build that swaps or is killed for memory hours in is worse than one
/// refused up front), plus two bytes per position of every lower layer, which stay in
/// memory.
pub fn memory_needed(n: u32) -> u64 {
    let lower = if n == 0 { 0 } else { index::size_up_to(n - 1) };
    2 * lower + 36 * index::size(n)
}

/// The two bounds of a position, for its side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// What the side to move is guaranteed.
    pub low: i8,
    /// What the opponent can hold it to.
    pub high: i8,
}

impl Bounds {
    /// Whether the two guarantees meet: the value is then the same whatever the history.
    pub fn exact(&self) -> bool {
        self.low == self.high
    }
}

/// One legal move and its pair: `captured − high(child)`, `captured − low(child)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveBounds {
    /// The mover's pit, 0..=5.
    pub pit: u8,
    /// Seeds the move captures.
    pub captured: u8,
    /// The position after the move, from the opponent's side.
    pub child: Board,
    /// The mover's guarantee by playing it.
    pub low: i8,
    /// The most the mover can get by playing it.
    pub high: i8,
}

/// Why an own-row probe failed.
#[derive(Debug, thiserror::Error)]
pub enum OwnRowError {
    /// The board's layer is not built.
    #[error("layer {seeds} ({seeds} seeds on the board) of rules '{rules}' with own-row cycles is not built in {}", dir.display())]
    LayerMissing {
        /// The layer.
        seeds: u32,
        /// The rule set.
        rules: Rules,
        /// The database folder (the parent of `own-row/`).
        dir: PathBuf,
    },
    /// A file could not be read, or is damaged.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The own-row tables of one rule set, opened for probing.
#[derive(Debug)]
pub struct BoundsDatabase {
    dir: PathBuf,
    rules: Rules,
    low: Vec<Option<LayerFile>>,
    high: Vec<Option<LayerFile>>,
    cache: Mutex<BlockCache>,
}

/// Decompressed blocks by (layer, block, high file?).
type BlockCache = HashMap<(u32, u64, bool), Arc<Vec<u8>>>;

/// Blocks kept decompressed by a [`BoundsDatabase`].
const CACHE_BLOCKS: usize = 64;

impl BoundsDatabase {
    /// Opens the own-row tables of `rules` under `db` (the database folder, as for
    /// [`crate::Database::open`]). Missing layers are fine; a probe into one is an error.
    ///
    /// # Errors
    ///
    /// A present file that is not a table of the right kind, rules and layer, or is damaged.
    pub fn open(db: impl AsRef<Path>, rules: Rules) -> Result<BoundsDatabase, StoreError> {
        let db = db.as_ref();
        let root = own_row_db(db);
        store::check_folder(&store::rules_dir(&root, rules))?;
        let open = |seeds, kind| -> Result<Option<LayerFile>, StoreError> {
            let path = store::table_path(&root, rules, seeds, kind);
            if std::fs::symlink_metadata(&path).is_err() {
                return Ok(None);
            }
            LayerFile::open_kind(&path, rules, seeds, kind).map(Some)
        };
        let mut low = Vec::new();
        let mut high = Vec::new();
        for seeds in 0..=MAX_SEEDS {
            let h = open(seeds, TableKind::OwnRowHigh)?;
            // A layer counts only when both files are there (high is written last).
            low.push(if h.is_some() {
                open(seeds, TableKind::OwnRowLow)?
            } else {
                None
            });
            high.push(if low[seeds as usize].is_some() {
                h
            } else {
                None
            });
        }
        Ok(BoundsDatabase {
            dir: db.to_path_buf(),
            rules,
            low,
            high,
            cache: Mutex::new(HashMap::new()),
        })
    }

    /// The rule set.
    pub fn rules(&self) -> Rules {
        self.rules
    }

    /// The largest `n` such that layers `0..=n` are all present.
    pub fn complete_up_to(&self) -> Option<u32> {
        let present = self.high.iter().take_while(|l| l.is_some()).count();
        (present > 0).then(|| present as u32 - 1)
    }

    /// The low and high files of layer `seeds`, if present.
    pub fn layer(&self, seeds: u32) -> Option<(&LayerFile, &LayerFile)> {
        let low = self.low.get(seeds as usize)?.as_ref()?;
        let high = self.high.get(seeds as usize)?.as_ref()?;
        Some((low, high))
    }

    fn byte(&self, file: &LayerFile, is_high: bool, board: &Board) -> Result<i8, StoreError> {
        let i = index::rank(board);
        let block = i / u64::from(file.block_size());
        let key = (board.seeds(), block, is_high);
        let cached = self
            .cache
            .lock()
            .map(|c| c.get(&key).cloned())
            .ok()
            .flatten();
        let data = match cached {
            Some(d) => d,
            None => {
                let d = Arc::new(file.read_block_bytes(block)?);
                if let Ok(mut c) = self.cache.lock() {
                    if c.len() >= CACHE_BLOCKS {
                        c.clear();
                    }
                    c.insert(key, d.clone());
                }
                d
            }
        };
        Ok(data[(i % u64::from(file.block_size())) as usize] as i8)
    }

    /// The pair of `board`.
    ///
    /// # Errors
    ///
    /// The board's layer is missing, or a file cannot be read or is damaged.
    pub fn bounds(&self, board: &Board) -> Result<Bounds, OwnRowError> {
        let seeds = board.seeds();
        let (low, high) = self.layer(seeds).ok_or_else(|| OwnRowError::LayerMissing {
            seeds,
            rules: self.rules,
            dir: self.dir.clone(),
        })?;
        Ok(Bounds {
            low: self.byte(low, false, board)?,
            high: self.byte(high, true, board)?,
        })
    }

    /// Every legal move with its pair, in pit order (empty when the game is over).
    ///
    /// # Errors
    ///
    /// As [`BoundsDatabase::bounds`], for the children's layers.
    pub fn moves_with_bounds(&self, board: &Board) -> Result<Vec<MoveBounds>, OwnRowError> {
        let mut out = Vec::new();
        for m in self.rules.legal_moves(board).iter() {
            let b = self.bounds(&m.child)?;
            let c = m.captured as i8;
            out.push(MoveBounds {
                pit: m.pit,
                captured: m.captured,
                child: m.child,
                low: c - b.high,
                high: c - b.low,
            });
        }
        Ok(out)
    }

    /// The best moves: the largest `low`, then among those the largest `high`.
    ///
    /// # Errors
    ///
    /// As [`BoundsDatabase::moves_with_bounds`].
    pub fn best_moves(&self, board: &Board) -> Result<Vec<MoveBounds>, OwnRowError> {
        let moves = self.moves_with_bounds(board)?;
        let best = moves.iter().map(|m| (m.low, m.high)).max();
        Ok(moves
            .into_iter()
            .filter(|m| Some((m.low, m.high)) == best)
            .collect())
    }

    /// A principal variation: the lowest-pit best move, again and again, until the game is
    /// over, a position repeats (since the last capture) or `max_plies` moves are played.
    ///
    /// # Errors
    ///
    /// As [`BoundsDatabase::moves_with_bounds`].
    pub fn principal_variation(
        &self,
        board: &Board,
        max_plies: usize,
    ) -> Result<(Vec<MoveBounds>, PvEnd), OwnRowError> {
        let mut steps = Vec::new();
        let mut seen: Vec<(Board, usize)> = vec![(*board, 0)];
        let mut at = *board;
        loop {
            if let Turn::GameOver { value } = self.rules.turn(&at) {
                return Ok((steps, PvEnd::GameOver { value }));
            }
            if steps.len() >= max_plies {
                return Ok((steps, PvEnd::MaxPlies));
            }
            let best = self.best_moves(&at)?;
            let m = best[0];
            steps.push(m);
            if m.captured > 0 {
                seen.clear();
            }
            at = m.child;
            let ply = steps.len();
            // A position is the board and the side to move: the parity of the ply.
            if seen.iter().any(|&(b, p)| b == at && p % 2 == ply % 2) {
                return Ok((
                    steps,
                    PvEnd::Repetition {
                        own_row: own_row(&at),
                    },
                ));
            }
            seen.push((at, ply));
        }
    }
}

/// How a principal variation stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PvEnd {
    /// The game is over; `value` for the side to move at the end.
    GameOver {
        /// End value for the side to move there.
        value: i8,
    },
    /// The last position repeats one since the last capture: each side keeps its own row,
    /// the side to move there scoring `own_row` from then on.
    Repetition {
        /// Own row minus the other row, for the side to move there.
        own_row: i8,
    },
    /// The move limit was reached.
    MaxPlies,
}

fn own_row(b: &Board) -> i8 {
    crate::solve::own_row::own_row_difference(b)
}

/// What happened to one layer of an own-row build.
#[derive(Clone, Debug)]
pub struct OwnRowLayerReport {
    /// The layer.
    pub seeds: u32,
    /// Its positions.
    pub positions: u64,
    /// False when the layer was already on disk.
    pub built: bool,
    /// Seconds spent (solving and writing, or checking).
    pub seconds: f64,
    /// Bytes of its two files.
    pub bytes: u64,
    /// Positions whose low equals their high.
    pub exact: u64,
}

/// Builds every missing own-row layer `0..=max_seeds` under `DIR/own-row/<rules>/`,
/// calling `on_layer` after each. Layers on disk are checked and read back; the build
/// resumes at the first layer whose files are missing. The folder is locked while building.
///
/// # Errors
///
/// Too many seeds, not enough memory, a damaged layer on disk, a lock held by another
/// build, or a file that cannot be written.
pub fn build_own_row(
    opts: &BuildOptions,
    mut on_layer: impl FnMut(&OwnRowLayerReport) + Send,
) -> Result<Vec<OwnRowLayerReport>, BuildError> {
    let root = own_row_db(&opts.db);
    if (MAX_OWN_ROW_SEEDS + 1..=MAX_SEEDS).contains(&opts.max_seeds) {
        return Err(BuildError::TooLarge {
            seeds: opts.max_seeds,
            limit: MAX_OWN_ROW_SEEDS,
        });
    }
    let (pool, _lock) =
        crate::build::prepare(opts, memory_needed, &store::rules_dir(&root, opts.rules))?;
    pool.install(|| {
        let mut layers: Vec<BoundsLayer> = Vec::new();
        let mut reports = Vec::new();
        let high_path = |n| store::table_path(&root, opts.rules, n, TableKind::OwnRowHigh);
        let low_path = |n| store::table_path(&root, opts.rules, n, TableKind::OwnRowLow);
        for n in 0..=opts.max_seeds {
            let started = Instant::now();
            let report = if high_path(n).exists() {
                let damaged = BuildError::Damaged;
                // (A link that leads nowhere is not missing: opening it says what it is.)
                if std::fs::symlink_metadata(low_path(n)).is_err() {
                    // The high file is written last: without its low file it is what is
                    // left of a layer, and it is the file to remove.
                    let name = low_path(n)
                        .file_name()
                        .map(|f| f.to_string_lossy().into_owned());
                    return Err(damaged(StoreError::Corrupted {
                        path: high_path(n),
                        what: format!(
                            "its low-bounds file {} is missing",
                            name.unwrap_or_default()
                        ),
                    }));
                }
                // Damage is to remove; a file the system will not read may be fine.
                let existing = crate::build::existing_layer_error;
                let low = LayerFile::open_kind(&low_path(n), opts.rules, n, TableKind::OwnRowLow)
                    .map_err(existing)?;
                let high =
                    LayerFile::open_kind(&high_path(n), opts.rules, n, TableKind::OwnRowHigh)
                        .map_err(existing)?;
                let pair = BoundsLayer {
                    low: low.read_all().map_err(existing)?,
                    high: high.read_all().map_err(existing)?,
                };
                let exact = count_exact(&pair);
                let above_missing = (n + 1..=opts.max_seeds).any(|m| !high_path(m).exists());
                layers.push(if above_missing {
                    pair
                } else {
                    BoundsLayer::default()
                });
                OwnRowLayerReport {
                    seeds: n,
                    positions: low.positions(),
                    built: false,
                    seconds: started.elapsed().as_secs_f64(),
                    bytes: low.bytes() + high.bytes(),
                    exact,
                }
            } else {
                let pair = solve_layer_own_row(opts.rules, n, &layers);
                let (bytes, exact) = write_pair(&root, opts, n, &pair)?;
                layers.push(pair);
                OwnRowLayerReport {
                    seeds: n,
                    positions: index::size(n),
                    built: true,
                    seconds: started.elapsed().as_secs_f64(),
                    bytes,
                    exact,
                }
            };
            on_layer(&report);
            reports.push(report);
        }
        Ok(reports)
    })
}

fn count_exact(pair: &BoundsLayer) -> u64 {
    pair.low
        .par_iter()
        .zip(pair.high.par_iter())
        .filter(|(l, h)| l == h)
        .count() as u64
}

/// Writes the low file, then the high file (which marks the layer complete).
fn write_pair(
    root: &Path,
    opts: &BuildOptions,
    n: u32,
    pair: &BoundsLayer,
) -> Result<(u64, u64), StoreError> {
    let as_bytes = |v: &[i8]| v.iter().map(|&x| x as u8).collect::<Vec<u8>>();
    let low = store::write_table(
        root,
        opts.rules,
        TableKind::OwnRowLow,
        &as_bytes(&pair.low),
        LayerSummary::from_values(n, &pair.low),
        opts.write,
    )?;
    let high = store::write_table(
        root,
        opts.rules,
        TableKind::OwnRowHigh,
        &as_bytes(&pair.high),
        LayerSummary::from_values(n, &pair.high),
        opts.write,
    )?;
    Ok((low.bytes + high.bytes, count_exact(pair)))
}

/// The result of checking one own-row layer.
#[derive(Clone, Debug)]
pub struct OwnRowCheck {
    /// The layer.
    pub seeds: u32,
    /// Positions checked.
    pub positions: u64,
    /// Positions whose pair is exact.
    pub exact: u64,
    /// Positions with `low > high`, or a bound that is not the best over the moves of the
    /// child's matching bound.
    pub mismatches: u64,
    /// The first few of them: board, stored pair, pair the moves give.
    pub examples: Vec<(Board, Bounds, Bounds)>,
}

/// Checks own-row layers `first..=last`: every block's checksum, the header histograms,
/// `low ≤ high`, and that `low(P) = max over moves of captured − high(child)` and
/// `high(P) = max over moves of captured − low(child)` (the end value when the game is
/// over). Layers `0..=last` are read into memory.
///
/// # Errors
///
/// A missing layer, or a file that cannot be read or is damaged.
pub fn verify_own_row(
    db: &BoundsDatabase,
    first: u32,
    last: u32,
) -> Result<Vec<OwnRowCheck>, OwnRowError> {
    let mut layers: Vec<BoundsLayer> = Vec::new();
    let mut checks = Vec::new();
    for n in 0..=last {
        let (low, high) = db.layer(n).ok_or_else(|| OwnRowError::LayerMissing {
            seeds: n,
            rules: db.rules,
            dir: db.dir.clone(),
        })?;
        let pair = BoundsLayer {
            low: low.read_all()?,
            high: high.read_all()?,
        };
        for (file, values) in [(low, &pair.low), (high, &pair.high)] {
            if LayerSummary::from_values(n, values) != *file.summary() {
                return Err(StoreError::Corrupted {
                    path: file.path().to_path_buf(),
                    what: "the header histogram does not match the stored values".into(),
                }
                .into());
            }
        }
        layers.push(pair);
        if n < first {
            continue;
        }
        let layer = &layers[n as usize];
        let rules = db.rules;
        const CHUNK: u64 = 1 << 14;
        let size = index::size(n);
        let bad: Vec<(u64, Board, Bounds, Bounds)> = (0..size.div_ceil(CHUNK))
            .into_par_iter()
            .flat_map_iter(|c| index::walk(n, c * CHUNK, ((c + 1) * CHUNK).min(size)))
            .filter_map(|(i, board)| {
                let stored = Bounds {
                    low: layer.low[i as usize],
                    high: layer.high[i as usize],
                };
                let want = match rules.turn(&board) {
                    Turn::GameOver { value } => Bounds {
                        low: value,
                        high: value,
                    },
                    Turn::Moves(moves) => {
                        let mut want = Bounds {
                            low: i8::MIN,
                            high: i8::MIN,
                        };
                        for m in moves.iter() {
                            let child = &layers[m.child.seeds() as usize];
                            let c = index::rank(&m.child) as usize;
                            let cap = m.captured as i8;
                            want.low = want.low.max(cap - child.high[c]);
                            want.high = want.high.max(cap - child.low[c]);
                        }
                        want
                    }
                };
                (stored != want || stored.low > stored.high).then_some((i, board, stored, want))
            })
            .collect();
        checks.push(OwnRowCheck {
            seeds: n,
            positions: index::size(n),
            exact: count_exact(layer),
            mismatches: bad.len() as u64,
            examples: bad.iter().take(10).map(|&(_, b, s, w)| (b, s, w)).collect(),
        });
    }
    Ok(checks)
}
