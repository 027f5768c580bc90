//! `build`: the library's build of the missing layers, on a thread of its own, with a
//! progress bar and Ctrl-C.

use crate::errors::build_error;
use crate::{budget_of, rules_of, tables_of};
use awari::build::{BuildError, BuildObserver, BuildOptions, LayerReport};
use awari::solve::lean::LeanObserver;
use awari::solve::{Phase, SolveObserver};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError};
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

/// A layer's report: (seeds, positions, built, seconds, bytes).
type ReportTuple = (u32, u64, bool, f64, u64);

/// The build's observer: a progress bar on stderr (indicatif draws nothing when stderr is
/// not a terminal) and the stop flag a Ctrl-C sets.
struct Progress {
    bar: ProgressBar,
    stop: AtomicBool,
}

impl Progress {
    fn new(show: bool) -> Progress {
        let bar = if show {
            ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr())
        } else {
            ProgressBar::hidden()
        };
        bar.set_style(
            ProgressStyle::with_template(
                "layer {prefix:>2} {msg:<10} [{bar:30}] {human_pos}/{human_len} eta {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        Progress {
            bar,
            stop: AtomicBool::new(false),
        }
    }
}

impl SolveObserver for Progress {
    fn phase(&self, seeds: u32, phase: Phase) {
        match phase {
            Phase::Exits => self.bar.set_message("exits"),
            Phase::Threshold(t) => {
                // The thresholds together settle each position at most once: the bar
                // counts them afresh after the exits pass.
                if t == seeds as i8 {
                    self.bar.set_position(0);
                }
                self.bar.set_message(format!("value ±{t}"));
            }
        }
    }
    fn advance(&self, positions: u64) {
        self.bar.inc(positions);
    }
    fn cancelled(&self) -> bool {
        self.stop.load(Relaxed)
    }
}

impl LeanObserver for Progress {}

impl BuildObserver for Progress {
    fn layer_started(&self, seeds: u32, positions: u64) {
        self.bar.reset();
        self.bar.set_length(positions);
        self.bar.set_prefix(seeds.to_string());
    }
    fn layer_done(&self, report: &LayerReport) {
        if report.built {
            self.bar.set_position(report.positions);
        }
    }
}

/// Builds the missing layers on a thread of its own while this one waits for Ctrl-C:
/// Python runs signal handlers only on the main thread, and only when asked.
#[pyfunction]
#[pyo3(signature = (path, rules, max_seeds, progress = true, threads = None, cycles = "share", search_budget = awari::build::DEFAULT_SEARCH_BUDGET))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn build(
    py: Python<'_>,
    path: PathBuf,
    rules: &str,
    max_seeds: u32,
    progress: bool,
    threads: Option<usize>,
    cycles: &str,
    search_budget: u64,
) -> PyResult<Vec<ReportTuple>> {
    let mut opts = BuildOptions::new(path, rules_of(rules)?, max_seeds);
    opts.threads = threads;
    opts.tables = tables_of(cycles)?;
    opts.search_budget = budget_of(search_budget)?;
    let observer = Arc::new(Progress::new(progress));
    let worker = {
        let observer = Arc::clone(&observer);
        std::thread::Builder::new()
            .name("awari-build".to_string())
            .spawn(move || awari::build::build(&opts, &*observer))
            .map_err(|e| PyRuntimeError::new_err(format!("cannot start the build: {e}")))?
    };
    let mut interrupt: Option<PyErr> = None;
    while !worker.is_finished() {
        py.detach(|| std::thread::sleep(Duration::from_millis(20)));
        if interrupt.is_none() {
            if let Err(e) = py.check_signals() {
                observer.stop.store(true, Relaxed);
                interrupt = Some(e);
            }
        }
    }
    let result = worker
        .join()
        .map_err(|_| PyRuntimeError::new_err("the build thread panicked"))?;
    observer.bar.finish_and_clear();
    match (result, interrupt) {
        (Ok(reports), None) => Ok(reports
            .iter()
            .map(|r| (r.seeds, r.positions, r.built, r.seconds, r.bytes))
            .collect()),
        // A KeyboardInterrupt gets the library's message (which layer, and that the same
        // call resumes); another exception from a signal handler goes out as it is.
        (Err(e @ BuildError::Cancelled { .. }), Some(signal))
            if signal.is_instance_of::<PyKeyboardInterrupt>(py) =>
        {
            Err(build_error(e))
        }
        (_, Some(signal)) => Err(signal),
        (Err(e), None) => Err(build_error(e)),
    }
}
