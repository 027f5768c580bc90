//! A build observer can stop a build (what the Python package does on Ctrl-C): the build
//! returns `BuildError::Cancelled` naming the layer, nothing of that layer is on disk, the
//! layers below are whole, and the same build resumes there and writes the same bytes as
//! a build that was never stopped.

use awari::build::{self, BuildError, BuildObserver, BuildOptions};
use awari::solve::lean::LeanObserver;
use awari::solve::{Phase, Quiet, SolveObserver};
use awari::store;
use awari::Rules;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Asks the build to stop when layer `layer` reaches phase `at`.
struct StopAt {
    layer: u32,
    at: Phase,
    stop: AtomicBool,
}

impl SolveObserver for StopAt {
    fn phase(&self, seeds: u32, phase: Phase) {
        if seeds == self.layer && phase == self.at {
            self.stop.store(true, Relaxed);
        }
    }
    fn cancelled(&self) -> bool {
        self.stop.load(Relaxed)
    }
}
impl LeanObserver for StopAt {}
impl BuildObserver for StopAt {}

#[test]
fn a_stopped_build_writes_nothing_of_its_layer_and_resumes_to_the_same_bytes() {
    const TOP: u32 = 12;
    let whole = tempfile::tempdir().unwrap();
    build::build(&BuildOptions::new(whole.path(), Rules::ABAPA, TOP), &Quiet).unwrap();
    for at in [Phase::Exits, Phase::Threshold(10), Phase::Threshold(1)] {
        let dir = tempfile::tempdir().unwrap();
        let opts = BuildOptions::new(dir.path(), Rules::ABAPA, TOP);
        let observer = StopAt {
            layer: 10,
            at,
            stop: AtomicBool::new(false),
        };
        let err = build::build(&opts, &observer).unwrap_err();
        assert!(
            matches!(err, BuildError::Cancelled { seeds: 10 }),
            "{at:?}: {err}"
        );
        assert!(err.to_string().contains("resumes at layer 10"), "{err}");
        let folder = store::rules_dir(dir.path(), Rules::ABAPA);
        for n in 0..=TOP {
            assert_eq!(
                store::layer_path(dir.path(), Rules::ABAPA, n).exists(),
                n < 10,
                "{at:?}: layer {n}"
            );
        }
        let leftovers: Vec<_> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        let reports = build::build(&opts, &Quiet).unwrap();
        let built: Vec<bool> = reports.iter().map(|r| r.built).collect();
        assert_eq!(built, (0..=TOP).map(|n| n >= 10).collect::<Vec<_>>());
        for n in 0..=TOP {
            for kind in [store::TableKind::Values, store::TableKind::Distances] {
                let ours = std::fs::read(store::table_path(dir.path(), Rules::ABAPA, n, kind));
                let theirs = std::fs::read(store::table_path(whole.path(), Rules::ABAPA, n, kind));
                assert_eq!(ours.unwrap(), theirs.unwrap(), "layer {n} {kind:?}");
            }
        }
    }
}

#[test]
fn an_observer_that_says_stop_at_once_stops_before_layer_0() {
    let dir = tempfile::tempdir().unwrap();
    let observer = StopAt {
        layer: 0,
        at: Phase::Exits,
        stop: AtomicBool::new(true),
    };
    let err = build::build(&BuildOptions::new(dir.path(), Rules::AWARI, 5), &observer).unwrap_err();
    assert!(matches!(err, BuildError::Cancelled { seeds: 0 }), "{err}");
    assert!(!store::layer_path(dir.path(), Rules::AWARI, 0).exists());
}
