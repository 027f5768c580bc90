//! `awari build`: every missing layer of the values or of the bounds, through the one
//! library entry point ([`awari::build::build`]).

use super::args::{BuildArgs, CodecArg, LeanArgs, TableArgs};
use super::output::{self, say, tell};
use super::progress::{BuildProgress, NO_LAYER};
use anyhow::{bail, Context, Result};
use awari::build::{self, BuildOptions, LayerReport, PassChoice, Tables};
use awari::solve::lean::LeanOptions;
use awari::store::WriteOptions;
use std::sync::atomic::Ordering::Relaxed;

/// Runs `build`: the tables the `--cycles` rule selects, through the one library entry
/// point; the values may also be built by the ranks of an MPI job.
pub fn run(tables: &TableArgs, build: &BuildArgs, lean: &LeanArgs) -> Result<bool> {
    let mut opts = build_options(tables, build)?;
    codec_refused(&opts, build, lean)?;
    let rules = opts.rules;
    // The options each kind refuses rather than ignores, and what its last line calls it.
    let what = match opts.tables {
        Tables::Values => {
            refine_refused(build)?;
            (opts.pass, opts.lean) = lean_options(lean)?;
            opts.distances_up_to = lean.distances_up_to;
            if lean.mpi {
                return values_mpi(opts, build.quiet);
            }
            format!("layers of '{rules}'")
        }
        Tables::Bounds => {
            if let Some(flag) = lean.first_given() {
                bail!("{flag} is for the values' and the own-row values' builds; the bounds' build has one pass, in memory");
            }
            search_budget(tables)?;
            refine_refused(build)?;
            format!("bounds layers of '{rules}'")
        }
        Tables::OwnRow(r) => {
            if lean.mpi || lean.distances_up_to.is_some() {
                let flag = if lean.mpi {
                    "--mpi"
                } else {
                    "--distances-up-to"
                };
                bail!("{flag} is for the values' build; the own-row values' lean pass runs in one process and keeps no distances");
            }
            (opts.pass, opts.lean) = lean_options(lean)?;
            search_budget(tables)?;
            format!(
                "own-row layers ({} repetition ends the game) of '{rules}'",
                r.name()
            )
        }
    };
    let kind = opts.tables;
    output::keep_going_without_stdout();
    let progress = BuildProgress::new(build.quiet, !kind.is_pair());
    on_ctrl_c(&progress)?;
    let started = std::time::Instant::now();
    let result = build::build(&opts, &progress);
    if progress.stop.load(Relaxed) {
        interrupted(&opts, &result);
    }
    let reports = result?;
    let folder = awari::store::rules_dir(&kind.root(&opts.db), opts.rules);
    summary(&what, &reports, &folder.display().to_string(), started);
    output::stdout_result()?;
    Ok(true)
}

/// `--search-budget`, which a build of the bounds or of the own-row values takes, checked.
fn search_budget(tables: &TableArgs) -> Result<()> {
    if tables.search_budget == 0 {
        bail!("--search-budget must be at least 1 node");
    }
    Ok(())
}

/// `--refine`, refused by the kinds that are not the own-row values.
fn refine_refused(build: &BuildArgs) -> Result<()> {
    if build.refine.is_some() {
        bail!("--refine is for the own-row values (--cycles own-row-first or own-row-third)");
    }
    Ok(())
}

/// The options of `build` both kinds of table take, checked.
fn build_options(tables: &TableArgs, args: &BuildArgs) -> Result<BuildOptions> {
    let block_size = args.codec.block_size(args.block_size)?;
    if let Some(limit) = args.memory_limit {
        if limit.is_nan() || limit <= 0.0 {
            bail!("--memory-limit must be a positive number of GiB");
        }
    }
    Ok(BuildOptions {
        threads: args.threads.map(usize::from),
        memory_limit: args.memory_limit.map(|g| (g * (1u64 << 30) as f64) as u64),
        write: WriteOptions {
            block_size,
            zstd_level: args.zstd_level,
            codec: args.codec.into(),
        },
        tables: tables.kind(),
        search_budget: tables.search_budget,
        refine: args.refine.map(|r| r.first..=r.last),
        ..BuildOptions::new(tables.db.db.clone(), tables.db.rules, args.max_seeds)
    })
}

/// A codec where nothing would be coded by it: the context model codes the values, ranks
/// the values and the pairs, of a build in one process (the lean pass's layers coded again
/// once written); other kinds of tables and the ranks of an MPI job write zstd.
fn codec_refused(opts: &BuildOptions, build: &BuildArgs, lean: &LeanArgs) -> Result<()> {
    let name = match build.codec {
        CodecArg::Zstd => return Ok(()),
        CodecArg::DontCares => bail!("--codec dont-cares is written from finished layers: build with --codec context, then run awari recode --codec dont-cares"),
        CodecArg::Context if opts.tables != Tables::Values => {
            bail!("--codec context is for the values' tables; the pairs (bounds, own-row values) take --codec ranks or zstd")
        }
        CodecArg::Context => "context",
        CodecArg::Ranks => "ranks",
    };
    if lean.mpi {
        bail!("--codec {name} is for a build in one process; --mpi ranks write zstd blocks: leave out one of them (awari recode codes the layers afterwards)");
    }
    Ok(())
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

/// Ctrl-C: the first asks the library to stop ([`awari::SolveObserver::cancelled`]), which it
/// does at its next check, removing what it was writing (a lean pass keeps its last
/// checkpoint); the build then says what is whole and how to go on. A second Ctrl-C stops
/// at once: the layer being written may then leave its temporary files, which the next
/// build of that layer writes over.
fn on_ctrl_c(progress: &BuildProgress) -> Result<()> {
    let stop = progress.stop.clone();
    let building = progress.building.clone();
    ctrlc::set_handler(move || {
        if !stop.swap(true, Relaxed) {
            tell!("\nstopping (Ctrl-C again stops at once)");
            return;
        }
        match building.load(Relaxed) {
            NO_LAYER => tell!("\nstopped between layers; every layer on disk is whole, and the same command resumes the build"),
            // (Its files may have been renamed into place a moment ago: the next build
            // finds where to resume.)
            n => tell!("\nstopped at once while building layer {n}; every layer on disk is whole, and the same command resumes the build"),
        }
        std::process::exit(130);
    })
    .context("installing the Ctrl-C handler")
}

/// After a Ctrl-C: says what is whole and how to go on, and ends the process (130, the
/// exit of an interrupted command), whether the build stopped or had just finished. A build
/// that failed for another reason returns, to be reported as any error is.
fn interrupted(opts: &BuildOptions, result: &Result<Vec<LayerReport>, build::BuildError>) {
    let layer = opts.tables.layer_name();
    match result {
        Err(build::BuildError::Cancelled { seeds: n }) => {
            let scratch = opts.lean.scratch_for(&opts.db, opts.rules, *n);
            if !opts.tables.is_pair() && scratch.exists() {
                tell!("interrupted while building {layer} {n}; layers below it are whole on disk, and the same command resumes layer {n} from its last checkpoint in {}", scratch.display());
            } else {
                tell!("interrupted while building {layer} {n}; layers below it are whole on disk, and the same command resumes at layer {n}");
            }
        }
        Err(_) => return,
        Ok(_) => tell!("interrupted after the last layer; every {layer} on disk is whole"),
    }
    std::process::exit(130)
}

/// `build --mpi`: this process is one rank of an MPI job; rank 0 shows the progress and
/// the table, and an error on any rank stops the whole job.
#[cfg(feature = "mpi")]
fn values_mpi(opts: BuildOptions, quiet: bool) -> Result<bool> {
    let cluster = awari::mpi::Cluster::init()?;
    output::keep_going_without_stdout();
    let root = cluster.rank() == 0;
    let progress = BuildProgress::new(quiet || !root, true);
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
