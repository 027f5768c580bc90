//! `awari build`: every missing layer of the values or of the bounds, through the one
//! library entry point ([`awari::build::build`]).

use super::args::{BuildArgs, Cycles, LeanArgs, TableArgs};
use super::output::{self, say, tell};
use super::progress::{BoundsProgress, BuildProgress, NO_LAYER};
use anyhow::{bail, Context, Result};
use awari::build::{self, BuildOptions, LayerReport, PassChoice, Tables};
use awari::solve::lean::LeanOptions;
use awari::store::{temporary_path, TableKind, WriteOptions};
use std::sync::atomic::Ordering::Relaxed;

/// Runs `build`.
pub fn run(tables: &TableArgs, build: &BuildArgs, lean: &LeanArgs) -> Result<bool> {
    match tables.cycles {
        Cycles::Share => values(tables, build, lean),
        Cycles::Bounds | Cycles::OwnRowFirst | Cycles::OwnRowThird => bounds(tables, build, lean),
    }
}

/// The options of `build` both kinds of table take, checked.
fn build_options(tables: &TableArgs, args: &BuildArgs) -> Result<BuildOptions> {
    if args.block_size == 0 {
        bail!("--block-size must be at least 1");
    }
    if let Some(limit) = args.memory_limit {
        if limit.is_nan() || limit <= 0.0 {
            bail!("--memory-limit must be a positive number of GiB");
        }
    }
    Ok(BuildOptions {
        threads: args.threads.map(usize::from),
        memory_limit: args.memory_limit.map(|g| (g * (1u64 << 30) as f64) as u64),
        write: WriteOptions {
            block_size: args.block_size,
            zstd_level: args.zstd_level,
        },
        tables: match tables.cycles {
            Cycles::Share => Tables::Values,
            Cycles::Bounds => Tables::Bounds,
            Cycles::OwnRowFirst => Tables::OwnRow(awari::Repetition::First),
            Cycles::OwnRowThird => Tables::OwnRow(awari::Repetition::Third),
        },
        search_budget: tables.search_budget,
        ..BuildOptions::new(tables.db.db.clone(), tables.db.rules, args.max_seeds)
    })
}

/// The pass and the lean pass's settings from the command line.
fn lean_options(args: &LeanArgs) -> Result<(PassChoice, LeanOptions)> {
    let pass = match (args.lean, args.in_memory) {
        (true, _) => PassChoice::Lean,
        (_, true) => PassChoice::InMemory,
        _ => PassChoice::Auto,
    };
    let mut lean = LeanOptions::default();
    if let Some(mib) = args.lean_buffer_mib {
        if !(mib > 0.0 && mib < 1e9) {
            bail!("--lean-buffer-mib must be a positive number of MiB");
        }
        lean.buffer_bytes = Some((mib * (1u64 << 20) as f64) as u64);
    }
    if let Some(minutes) = args.checkpoint_minutes {
        if !(0.0..=1e6).contains(&minutes) {
            bail!("--checkpoint-minutes must be a number of minutes, 0 or more");
        }
        lean.checkpoint_every = Some(std::time::Duration::from_secs_f64(minutes * 60.0));
    }
    lean.scratch = args.scratch.clone();
    Ok((pass, lean))
}

/// The last line of a build: how many layers, where, how long.
fn summary(what: &str, reports: &[LayerReport], place: &str, started: std::time::Instant) {
    let built = reports.iter().filter(|r| r.built).count();
    say!(
        "{} {what} in {place}: {} built, {} already there, {:.1} s",
        reports.len(),
        built,
        reports.len() - built,
        started.elapsed().as_secs_f64()
    );
}

fn values(tables: &TableArgs, args: &BuildArgs, lean: &LeanArgs) -> Result<bool> {
    let mut opts = build_options(tables, args)?;
    (opts.pass, opts.lean) = lean_options(lean)?;
    opts.distances_up_to = lean.distances_up_to;
    if lean.mpi {
        return values_mpi(opts, args.quiet);
    }
    output::keep_going_without_stdout();
    let progress = BuildProgress::new(!args.quiet);
    values_on_ctrl_c(&opts, &progress)?;
    let started = std::time::Instant::now();
    let reports = build::build(&opts, &progress)?;
    let folder = awari::store::rules_dir(&opts.db, opts.rules);
    let what = format!("layers of '{}'", opts.rules);
    summary(&what, &reports, &folder.display().to_string(), started);
    output::stdout_result()?;
    Ok(true)
}

/// Ctrl-C: say what was lost and how to go on. Layers already on disk are whole (each is
/// renamed into place when complete); the one being built is dropped with its temporary
/// files, and the same command resumes there.
fn values_on_ctrl_c(opts: &BuildOptions, progress: &BuildProgress) -> Result<()> {
    let building = progress.building.clone();
    let since = progress.building_since.clone();
    let (db, rules, lean) = (opts.db.clone(), opts.rules, opts.lean.clone());
    ctrlc::set_handler(move || {
        let n = building.load(Relaxed);
        if n == NO_LAYER {
            tell!("\ninterrupted between layers; every layer on disk is whole, and the same command resumes the build");
        } else if written_since(&awari::store::layer_path(&db, rules, n), &since) {
            // Its files renamed into place (its values last), the layer not yet reported.
            tell!(
                "\ninterrupted after layer {n} was written; layers up to it are whole on disk, and the same command resumes at layer {}",
                n + 1
            );
        } else {
            for kind in [TableKind::Values, TableKind::Distances] {
                let _ = std::fs::remove_file(temporary_path(&db, rules, n, kind));
            }
            let scratch = lean.scratch_for(&db, rules, n);
            if scratch.exists() {
                tell!("\ninterrupted while building layer {n}; layers below it are whole on disk, and the same command resumes layer {n} from its last checkpoint in {}", scratch.display());
            } else {
                tell!("\ninterrupted while building layer {n}; layers below it are whole on disk, and the same command resumes at layer {n}");
            }
        }
        std::process::exit(130);
    })
    .context("installing the Ctrl-C handler")
}

/// Whether the values file `path` was written since the time in `since` (the layer's
/// start): the layer is whole.
fn written_since(path: &std::path::Path, since: &std::sync::Mutex<std::time::SystemTime>) -> bool {
    let since = *since.lock().unwrap_or_else(|e| e.into_inner());
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .is_ok_and(|t| t >= since)
}

/// `build --mpi`: this process is one rank of an MPI job; rank 0 shows the progress and
/// the table, and an error on any rank stops the whole job.
#[cfg(feature = "mpi")]
fn values_mpi(opts: BuildOptions, quiet: bool) -> Result<bool> {
    let cluster = awari::mpi::Cluster::init()?;
    output::keep_going_without_stdout();
    let root = cluster.rank() == 0;
    let progress = BuildProgress::new(!quiet && root);
    let observer: &dyn build::BuildObserver = if root {
        &progress
    } else {
        &awari::solve::Quiet
    };
    if root {
        tell!(
            "MPI: {} ranks share every layer (the lean pass); every rank reads the lower layers from {}",
            cluster.ranks(),
            opts.db.display()
        );
    }
    let started = std::time::Instant::now();
    match cluster.build(&opts, observer) {
        Ok(reports) => {
            if root {
                let folder = awari::store::rules_dir(&opts.db, opts.rules);
                let what = format!("layers of '{}'", opts.rules);
                let by = format!("{} by {} ranks", folder.display(), cluster.ranks());
                summary(&what, &reports, &by, started);
            }
            output::stdout_result()?;
            Ok(true)
        }
        Err(e) => {
            tell!(
                "error: rank {}: {}",
                cluster.rank(),
                output::error_line(&e.into())
            );
            cluster.abort(1)
        }
    }
}

#[cfg(not(feature = "mpi"))]
fn values_mpi(_opts: BuildOptions, _quiet: bool) -> Result<bool> {
    bail!("this awari was built without MPI; build it with: cargo build --release --features mpi")
}

fn bounds(tables: &TableArgs, args: &BuildArgs, lean: &LeanArgs) -> Result<bool> {
    if let Some(flag) = lean.first_given() {
        bail!("{flag} is for the values' build; the bounds' build has one pass, in memory");
    }
    if tables.search_budget == 0 {
        bail!("--search-budget must be at least 1 node");
    }
    let opts = build_options(tables, args)?;
    output::keep_going_without_stdout();
    let progress = BoundsProgress::new(args.quiet);
    bounds_on_ctrl_c(&opts, &progress)?;
    let started = std::time::Instant::now();
    let reports = build::build(&opts, &progress)?;
    let folder = awari::store::rules_dir(&awari::store::bounds_dir(&opts.db), opts.rules);
    let what = match tables.cycles.repetition() {
        Some(r) => format!(
            "own-row layers ({} repetition ends the game) of '{}'",
            r.name(),
            opts.rules
        ),
        None => format!("bounds layers of '{}'", opts.rules),
    };
    summary(&what, &reports, &folder.display().to_string(), started);
    output::stdout_result()?;
    Ok(true)
}

/// Ctrl-C during a build of the bounds, as during the values' build: the layer being
/// built loses its temporary files, and the message says what is whole and how to go on.
/// (A layer is complete once its high file, written last, is renamed into place.)
fn bounds_on_ctrl_c(opts: &BuildOptions, progress: &BoundsProgress) -> Result<()> {
    let building = progress.building.clone();
    let root = awari::store::bounds_dir(&opts.db);
    let (rules, top) = (opts.rules, opts.max_seeds);
    let kinds = match opts.tables {
        Tables::OwnRow(r) => [TableKind::OwnRowLow(r), TableKind::OwnRowHigh(r)],
        _ => [TableKind::BoundsLow, TableKind::BoundsHigh],
    };
    ctrlc::set_handler(move || {
        let n = building.load(Relaxed);
        for kind in kinds {
            let _ = std::fs::remove_file(temporary_path(&root, rules, n, kind));
        }
        if n > top {
            tell!("\ninterrupted after the last layer; every bounds layer on disk is whole");
        } else {
            tell!("\ninterrupted while building bounds layer {n}; layers below it are whole on disk, and the same command resumes at layer {n}");
        }
        std::process::exit(130);
    })
    .context("installing the Ctrl-C handler")
}
