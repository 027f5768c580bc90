//! What a build shows while it runs: a progress bar per layer (indicatif, on stderr), the
//! per-layer table on stdout, the `AWARI_TIMING` profile, and which layer a Ctrl-C stopped.

use super::output::{say, tell};
use awari::build::{self, BuildObserver, LayerReport, Pass};
use awari::solve::lean::{LeanObserver, LeanPlan};
use awari::solve::{Phase, SolveObserver, ThresholdCounts};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU8, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// No layer is being built.
pub const NO_LAYER: u32 = u32::MAX;

/// The build's observer.
pub struct BuildProgress {
    bar: ProgressBar,
    /// `AWARI_TIMING=1`: each phase's wall time on stderr, a profiling aid.
    timing: bool,
    phase_started: Mutex<Instant>,
    table_started: AtomicBool,
    /// The layer being built, for the Ctrl-C handler.
    pub building: Arc<AtomicU32>,
    /// Set by the Ctrl-C handler: the library then stops at its next check
    /// ([`SolveObserver::cancelled`]) and removes what it was writing.
    pub stop: Arc<AtomicBool>,
    /// The pass of the last layer built (0: none yet, 1: in memory, 2: lean).
    last_pass: AtomicU8,
    /// `-q`: no bars, no word on the in-memory pass (the lean pass is always said), and no
    /// line per layer of a pair table (the values' table on stdout stays).
    quiet: bool,
}

impl BuildProgress {
    /// The observer of a build, `quiet` with `-q`; `show_bar` for passes that report their
    /// progress (the values').
    pub fn new(quiet: bool, show_bar: bool) -> BuildProgress {
        let bar = if show_bar && !quiet {
            ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr())
        } else {
            ProgressBar::hidden()
        };
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
        BuildProgress {
            bar,
            timing: std::env::var_os("AWARI_TIMING").is_some(),
            phase_started: Mutex::new(Instant::now()),
            table_started: AtomicBool::new(false),
            building: Arc::new(AtomicU32::new(NO_LAYER)),
            stop: Arc::new(AtomicBool::new(false)),
            last_pass: AtomicU8::new(0),
            quiet,
        }
    }

    fn phase_elapsed(&self) -> std::time::Duration {
        let mut started = self.phase_started.lock().unwrap_or_else(|e| e.into_inner());
        let elapsed = started.elapsed();
        *started = Instant::now();
        elapsed
    }
}

impl SolveObserver for BuildProgress {
    fn phase(&self, seeds: u32, phase: Phase) {
        match phase {
            Phase::Exits => {
                self.phase_elapsed();
                self.bar.set_message("exits");
            }
            Phase::Threshold(t) => {
                if self.timing && t == seeds as i8 {
                    tell!("layer {seeds}: exits {:?}", self.phase_elapsed());
                }
                if t == seeds as i8 {
                    // The thresholds together settle each position at most once.
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
    fn threshold_done(&self, _seeds: u32, t: i8, c: ThresholdCounts) {
        if self.timing {
            tell!(
                "  t={t}: {} settled by exits, {} rounds settle {}, total {:?}",
                c.by_exits,
                c.rounds,
                c.propagated,
                c.elapsed
            );
        }
    }
}

/// Bytes as MiB, for the plan.
fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
}

impl LeanObserver for BuildProgress {
    fn lean_plan(&self, p: &LeanPlan) {
        // Half a byte for the values; the own-row values' two nodes a position take more.
        let each = if p.state_bytes <= p.positions.div_ceil(2) {
            "half a byte".to_string()
        } else {
            format!(
                "{:.3} bytes",
                p.state_bytes as f64 / p.positions.max(1) as f64
            )
        };
        self.bar.suspend(|| {
            tell!(
                "layer {}: lean pass, memory plan {}: state {} ({each} for each of {} positions), buffer {}, other {}; exits in slices of {} positions; disk needed {}",
                p.seeds,
                mib(p.total_bytes()),
                mib(p.state_bytes),
                p.positions,
                mib(p.buffer_bytes),
                mib(p.other_bytes),
                p.slice_positions,
                mib(p.disk_bytes)
            )
        });
    }
    fn checkpoint(&self, seeds: u32, threshold: u32, rounds: usize, took: Duration) {
        if self.timing {
            tell!(
                "  layer {seeds}: checkpoint before threshold {threshold}, {rounds} rounds of it done, saved in {:.2} s",
                took.as_secs_f64()
            );
        }
    }
    fn resumed(&self, seeds: u32, threshold: u32, rounds: usize) {
        self.bar.suspend(|| {
            tell!(
                "layer {seeds}: resuming from its checkpoint (threshold {threshold}, {rounds} rounds of it done)"
            )
        });
    }
    fn exchanged(&self, seeds: u32, bytes: u64, most_received: u64) {
        if bytes > 0 {
            let positions = awari::index::size(seeds) as f64;
            self.bar.suspend(|| {
                tell!(
                    "layer {seeds}: the ranks sent each other {bytes} bytes ({:.2} per position); one rank received at most {most_received} ({:.2} per position)",
                    bytes as f64 / positions,
                    most_received as f64 / positions
                )
            });
        }
    }
    fn lower_blocks(&self, seeds: u32, read: u64, blocks: u64) {
        if self.timing {
            tell!(
                "layer {seeds}: exits read {read} lower blocks ({:.2} times each of {blocks})",
                read as f64 / blocks.max(1) as f64
            );
        }
    }
}

impl BuildObserver for BuildProgress {
    fn pass_chosen(&self, seeds: u32, pass: Pass, need: u64, limit: Option<u64>) {
        let limit = limit.map_or("no known limit".to_string(), |l| {
            format!("the limit of {:.2} GiB", l as f64 / (1u64 << 30) as f64)
        });
        let need = need as f64 / (1u64 << 30) as f64;
        // Said when the choice changes: at the first layer built and where the build
        // moves to the lean pass.
        let code = match pass {
            Pass::InMemory => 1,
            Pass::Lean => 2,
        };
        if self.last_pass.swap(code, Relaxed) == code || (self.quiet && pass == Pass::InMemory) {
            return;
        }
        let why = match pass {
            Pass::InMemory => format!("in-memory pass (needs {need:.2} GiB, under {limit})"),
            Pass::Lean => {
                format!("lean pass (the in-memory pass would need {need:.2} GiB, over {limit})")
            }
        };
        self.bar.suspend(|| tell!("layer {seeds}: {why}"));
    }

    fn lean_left_open(&self, seeds: u32, open: u64) {
        self.bar.suspend(|| {
            tell!(
                "layer {seeds}: the lean pass left {open} positions open; the in-memory pass, which fits, builds the layer to search them"
            )
        });
    }

    fn layer_incomplete(&self, seeds: u32, why: &awari::store::Incomplete) {
        self.bar
            .suspend(|| tell!("layer {seeds}: {why}; building the layer again"));
    }

    fn layer_started(&self, seeds: u32, positions: u64) {
        self.building.store(seeds, Relaxed);
        self.bar.reset();
        self.bar.set_length(positions);
        self.bar.set_prefix(seeds.to_string());
    }

    fn layer_done(&self, r: &LayerReport) {
        self.building.store(NO_LAYER, Relaxed);
        self.bar.finish_and_clear();
        match r.exact {
            Some(exact) => self.pair_line(r, exact),
            None => self.values_row(r),
        }
    }
}

impl BuildProgress {
    /// A values layer's row of the table on stdout.
    fn values_row(&self, r: &LayerReport) {
        // Printed with the first layer, so a build refused up front prints only its error.
        if !self.table_started.swap(true, Relaxed) {
            say!(
                "{:>5} {:>13} {:>9} {:>12} {:>9} {:>12} {:>8} {:>12} {:>12} {:>12}",
                "layer",
                "positions",
                "seconds",
                "pos/s",
                "peak MiB",
                "bytes",
                "B/pos",
                "wins",
                "draws",
                "losses"
            );
        }
        let rate = if r.built && r.seconds > 0.0 {
            format!("{:.0}", r.positions as f64 / r.seconds)
        } else {
            "on disk".to_string()
        };
        let peak = build::peak_rss()
            .map(|b| (b >> 20).to_string())
            .unwrap_or_else(|| "?".into());
        say!(
            "{:>5} {:>13} {:>9.2} {:>12} {:>9} {:>12} {:>8.4} {:>12} {:>12} {:>12}",
            r.seeds,
            r.positions,
            r.seconds,
            rate,
            peak,
            r.bytes,
            r.bytes as f64 / r.positions as f64,
            r.summary.wins(),
            r.summary.draws(),
            r.summary.losses()
        );
    }
}

impl BuildProgress {
    /// A pair layer's line on stderr (none with `-q`): its share of exact positions.
    fn pair_line(&self, r: &LayerReport, exact: u64) {
        if self.quiet {
            return;
        }
        let percent = |k: u64| 100.0 * k as f64 / r.positions as f64;
        // An own-row layer also says what the bounds alone gave and what the searches took.
        let searched = r.searched.as_ref().map_or(String::new(), |s| {
            format!(
                " ({} {:.2}%; {} searches, {} nodes; open: {} budget, {} tree limit, {} stuck; \
                 straddling leaves: {} captures, {} exits; left open next to an open position: {})",
                if s.refined { "before" } else { "bounds" },
                percent(s.exact_by_bounds),
                s.searches,
                s.nodes,
                s.out_of_budget,
                s.tree_limit,
                s.stuck,
                s.straddling_captures,
                s.straddling_exits,
                s.open_next_to_open
            )
        });
        tell!(
            "layer {:>2}: {:>11} positions, {:>6.2}% exact{searched}, {:>11} bytes, {:.2} s{}",
            r.seeds,
            r.positions,
            percent(exact),
            r.bytes,
            r.seconds,
            match (r.built, &r.searched) {
                (true, _) => "",
                (false, Some(_)) => " (searched again, nothing narrower)",
                (false, None) => " (already built)",
            }
        );
    }
}
