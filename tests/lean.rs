//! The lean pass: the same files as the in-memory pass, byte for byte, however
//! small its buffer; a build killed mid-layer resumes from its checkpoint and still writes
//! the same bytes; the automatic choice; damaged scratch files and a full disk are clear
//! errors.

mod common;

use awari::build::{build, BuildOptions, PassChoice};
use awari::solve::lean::{scratch_dir, LeanOptions};
use awari::solve::Quiet;
use awari::store::{table_path, TableKind};
use awari::Rules;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;
use tempfile::TempDir;

fn scratch() -> TempDir {
    common::scratch_in(&common::scratch_root("awari-lean-tests"))
}

fn awari() -> Command {
    Command::new(env!("CARGO_BIN_EXE_awari"))
}

/// Layers `0..=top` of `rules` built by the in-memory pass into `db`.
fn in_memory(db: &Path, rules: Rules, top: u32) {
    let opts = BuildOptions {
        pass: PassChoice::InMemory,
        ..BuildOptions::new(db, rules, top)
    };
    build(&opts, &Quiet).unwrap();
}

/// Every values and distances file of layers `0..=top` is the same in both folders.
fn assert_same_files(reference: &Path, other: &Path, rules: Rules, top: u32) {
    common::assert_same_files(reference, other, rules, top, "the lean pass");
}

/// Layers 0..=14 of all three presets, the lean pass forced to spill
/// with a tiny buffer (64 KiB: 8,192 entries, against rounds of up to hundreds of
/// thousands). For one preset it also saves a checkpoint after every round, so every
/// save is exercised on the way.
#[test]
fn the_lean_pass_with_a_tiny_buffer_writes_the_same_files() {
    const TOP: u32 = 14;
    for rules in Rules::ALL {
        let reference = scratch();
        in_memory(reference.path(), rules, TOP);
        let lean = scratch();
        let opts = BuildOptions {
            pass: PassChoice::Lean,
            lean: LeanOptions {
                buffer_bytes: Some(1),
                checkpoint_every: if rules == Rules::AWARI {
                    Some(Duration::ZERO)
                } else {
                    LeanOptions::default().checkpoint_every
                },
                ..LeanOptions::default()
            },
            ..BuildOptions::new(lean.path(), rules, TOP)
        };
        build(&opts, &Quiet).unwrap();
        assert_same_files(reference.path(), lean.path(), rules, TOP);
        for n in 0..=TOP {
            assert!(
                !scratch_dir(lean.path(), rules, n).exists(),
                "layer {n}'s scratch folder is left behind"
            );
        }
    }
}

/// Reads the checkpoint of layer `n`, if there is one: its next threshold.
fn checkpoint_threshold(db: &Path, n: u32) -> Option<u32> {
    let text = std::fs::read_to_string(scratch_dir(db, Rules::AWARI, n).join("checkpoint")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("next-threshold "))
        .and_then(|t| t.parse().ok())
}

/// Copies the files of layers `0..=top` of `awari` from `from` to `to`.
fn copy_layers(from: &Path, to: &Path, top: u32) {
    common::copy_layers(from, to, Rules::AWARI, 0..=top);
}

/// Layers `0..=top` of `awari` built by the in-memory pass, and a folder holding a copy of
/// its layers below `top`, for a lean build of `top` alone.
fn reference_and_lower_layers(top: u32) -> (TempDir, TempDir) {
    let reference = scratch();
    in_memory(reference.path(), Rules::AWARI, top);
    let dir = scratch();
    copy_layers(reference.path(), dir.path(), top - 1);
    (reference, dir)
}

/// Waits (polling) until `ready` holds, failing after `limit` or if `child` ends first.
fn wait_until(child: &mut std::process::Child, limit: Duration, ready: impl FnMut() -> bool) {
    common::wait_for(child, limit, "it could be killed mid-layer", ready);
}

fn lean_build(db: &Path, top: u32) -> Command {
    let mut cmd = awari();
    cmd.args(["build", "-q", "--lean", "--checkpoint-minutes", "0"])
        .args(["--lean-buffer-mib", "0.25", "--max-seeds", &top.to_string()])
        .arg("--db")
        .arg(db);
    cmd
}

/// Starts the lean build of layer `top` (its lower layers already in `db`), waits until
/// it has checkpointed three thresholds, and kills it (SIGKILL) there.
fn kill_after_thresholds(db: &Path, top: u32) {
    kill_after_thresholds_with(db, top, &[]);
}

/// As [`kill_after_thresholds`], the build given `args` too.
fn kill_after_thresholds_with(db: &Path, top: u32, args: &[&str]) {
    let mut child = lean_build(db, top)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until(&mut child, Duration::from_secs(300), || {
        checkpoint_threshold(db, top).is_some_and(|t| t < top - 2)
    });
    child.kill().unwrap();
    child.wait().unwrap();
    let values = table_path(db, Rules::AWARI, top, TableKind::Values);
    assert!(
        !values.exists(),
        "killed mid-layer, yet layer {top} looks whole"
    );
}

/// A lean build killed (SIGKILL) in the middle of a layer, after some of its thresholds
/// were checkpointed, resumes from the checkpoint and writes every file byte for byte as
/// the in-memory pass does.
#[test]
fn a_lean_build_killed_mid_layer_resumes_from_its_checkpoint() {
    const TOP: u32 = 15;
    // Only the top layer is built lean, checkpointed after every round.
    let (reference, dir) = reference_and_lower_layers(TOP);
    kill_after_thresholds(dir.path(), TOP);

    let out = lean_build(dir.path(), TOP).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the resumed build failed: {stderr}");
    assert!(
        stderr.contains(&format!("layer {TOP}: resuming from its checkpoint")),
        "the resumed build must say it resumes: {stderr}"
    );
    assert_same_files(reference.path(), dir.path(), Rules::AWARI, TOP);
    assert!(!scratch_dir(dir.path(), Rules::AWARI, TOP).exists());
}

/// A layer whose lean build was started without its distances (its thresholds' runs keep
/// no rounds) resumes only as it was started: asked for the distances, the build stops
/// with one line naming the flag; without them, it resumes and writes the values of a
/// full build, and a distances file that keeps no entries.
#[test]
fn a_layer_started_without_distances_resumes_only_without_them() {
    const TOP: u32 = 15;
    let without = ["--distances-up-to", "14"];
    let (reference, dir) = reference_and_lower_layers(TOP);
    kill_after_thresholds_with(dir.path(), TOP, &without);

    let out = lean_build(dir.path(), TOP).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "resumed with distances: {stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(errors[0].contains("--distances-up-to"), "{stderr}");
    assert!(!errors[0].contains("corrupted"), "{stderr}");
    assert!(
        checkpoint_threshold(dir.path(), TOP).is_some(),
        "the checkpoint is kept"
    );

    let out = lean_build(dir.path(), TOP).args(without).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the resumed build failed: {stderr}");
    assert!(stderr.contains(&format!("layer {TOP}: resuming from its checkpoint")));
    let read = |db: &Path, kind| std::fs::read(table_path(db, Rules::AWARI, TOP, kind)).unwrap();
    assert_eq!(
        read(dir.path(), TableKind::Values),
        read(reference.path(), TableKind::Values)
    );
    let distances = table_path(dir.path(), Rules::AWARI, TOP, TableKind::Distances);
    let file =
        awari::store::LayerFile::open_kind(&distances, Rules::AWARI, TOP, TableKind::Distances)
            .unwrap();
    assert!(!file.keeps_entries());
}

/// Dies (panics) when layer `layer` saves its checkpoint after the last threshold, and
/// counts the resumes it sees.
struct DieAfterThresholds {
    layer: u32,
    resumed_at: std::sync::Mutex<Vec<u32>>,
}

impl awari::SolveObserver for DieAfterThresholds {}
impl awari::LeanObserver for DieAfterThresholds {
    fn checkpoint(&self, seeds: u32, threshold: u32, _rounds: usize, _took: Duration) {
        if seeds == self.layer && threshold == 0 {
            panic!("stopped after the last threshold");
        }
    }
    fn resumed(&self, _seeds: u32, threshold: u32, _rounds: usize) {
        self.resumed_at.lock().unwrap().push(threshold);
    }
}
impl awari::BuildObserver for DieAfterThresholds {}

/// After the last threshold a checkpoint is saved whatever the interval, with an empty
/// nibbles snapshot and only the thresholds' runs beside it; a build stopped there resumes
/// straight into the final merge and writes the same bytes.
#[test]
fn a_build_stopped_before_its_final_merge_resumes_there() {
    const TOP: u32 = 13;
    let (reference, dir) = reference_and_lower_layers(TOP);
    let opts = BuildOptions {
        pass: PassChoice::Lean,
        ..BuildOptions::new(dir.path(), Rules::AWARI, TOP)
    };
    let observer = DieAfterThresholds {
        layer: TOP,
        resumed_at: Default::default(),
    };
    let died = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| build(&opts, &observer)));
    assert!(
        died.is_err(),
        "the build was to stop after its last threshold"
    );
    let folder = scratch_dir(dir.path(), Rules::AWARI, TOP);
    let mut names: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(checkpoint_threshold(dir.path(), TOP), Some(0), "{names:?}");
    let nibbles: Vec<&String> = names.iter().filter(|n| n.starts_with("nibbles")).collect();
    assert_eq!(nibbles.len(), 1, "{names:?}");
    assert_eq!(std::fs::metadata(folder.join(nibbles[0])).unwrap().len(), 0);
    assert!(
        names
            .iter()
            .all(|n| n == "checkpoint" || n.starts_with("nibbles") || n.starts_with("threshold-")),
        "only the thresholds' runs are left: {names:?}"
    );

    let observer = DieAfterThresholds {
        layer: TOP + 1,
        resumed_at: Default::default(),
    };
    build(&opts, &observer).unwrap();
    assert_eq!(*observer.resumed_at.lock().unwrap(), vec![0]);
    assert_same_files(reference.path(), dir.path(), Rules::AWARI, TOP);
    assert!(!folder.exists());
}

/// A damaged checkpoint or scratch file stops the build with one clear line, and the
/// layer builds once the folder is removed.
#[test]
fn damaged_scratch_files_are_a_clear_error() {
    const TOP: u32 = 12;
    let dir = scratch();
    in_memory(dir.path(), Rules::AWARI, TOP - 1);
    // A layer interrupted after its exits pass: a checkpoint, then damage.
    for damage in ["checkpoint", "exits-01.run"] {
        let lean = scratch_dir(dir.path(), Rules::AWARI, TOP);
        let _ = std::fs::remove_dir_all(&lean);
        let mut child = lean_build(dir.path(), TOP)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_until(&mut child, Duration::from_secs(120), || {
            checkpoint_threshold(dir.path(), TOP).is_some()
        });
        child.kill().unwrap();
        child.wait().unwrap();
        if table_path(dir.path(), Rules::AWARI, TOP, TableKind::Values).exists() {
            // Finished before the kill landed: nothing to damage this time.
            std::fs::remove_file(table_path(dir.path(), Rules::AWARI, TOP, TableKind::Values))
                .unwrap();
            continue;
        }
        let path = lean.join(damage);
        let mut bytes = std::fs::read(&path).unwrap();
        let at = bytes.len() / 2;
        bytes[at] ^= 0x5A;
        std::fs::write(&path, &bytes).unwrap();
        let out = lean_build(dir.path(), TOP).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "built on a damaged {damage}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
        assert_eq!(lines.len(), 1, "one error line: {stderr}");
        assert!(
            lines[0].contains("lean-12") && lines[0].contains("corrupted"),
            "the error names the damaged scratch file: {stderr}"
        );
        std::fs::remove_dir_all(&lean).unwrap();
        let out = lean_build(dir.path(), TOP).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::remove_file(table_path(dir.path(), Rules::AWARI, TOP, TableKind::Values)).unwrap();
    }
}

/// A killed build's scratch files put in each other's places (two finished thresholds
/// swapped, one threshold's run copied over another's) are refused on resume with one
/// line naming the file, never resumed into: every chunk of a swapped file passes its own
/// checksum, so only the checkpoint's record of each file can tell. The folder removed,
/// the layer builds to the in-memory pass's bytes.
#[test]
fn a_resume_refuses_scratch_files_out_of_place() {
    const TOP: u32 = 14;
    let (reference, dir) = reference_and_lower_layers(TOP);
    let lean = scratch_dir(dir.path(), Rules::AWARI, TOP);
    type Swap = fn(&Path) -> Option<String>;
    let swaps: [Swap; 2] = [
        |d| {
            let (a, b) = (d.join("threshold-13.run"), d.join("threshold-12.run"));
            std::fs::rename(&a, d.join("x")).ok()?;
            std::fs::rename(&b, &a).ok()?;
            std::fs::rename(d.join("x"), &b).ok()?;
            Some("threshold-1".into())
        },
        |d| {
            std::fs::copy(d.join("threshold-14.run"), d.join("threshold-12.run")).ok()?;
            Some("threshold-12.run".into())
        },
    ];
    for swap in swaps {
        let _ = std::fs::remove_dir_all(&lean);
        kill_after_thresholds(dir.path(), TOP);
        let values = table_path(dir.path(), Rules::AWARI, TOP, TableKind::Values);
        let named = swap(&lean).expect("the checkpoint's files to swap");
        let out = lean_build(dir.path(), TOP).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success(),
            "resumed into swapped scratch files: {stderr}"
        );
        assert!(!values.exists(), "a table was written from swapped files");
        let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
        assert_eq!(lines.len(), 1, "one error line: {stderr}");
        assert!(
            lines[0].contains(&named) && lines[0].contains("not the file this checkpoint saved"),
            "the error names the file out of place: {stderr}"
        );
    }
    std::fs::remove_dir_all(&lean).unwrap();
    let out = lean_build(dir.path(), TOP).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_same_files(reference.path(), dir.path(), Rules::AWARI, TOP);
}

/// Without `--lean`, the build uses the in-memory pass while a layer fits under
/// `--memory-limit` and the lean pass above it, says so, prints the lean pass's memory
/// plan, and writes the same files.
#[test]
fn the_build_chooses_the_lean_pass_above_the_memory_limit() {
    const TOP: u32 = 16;
    let reference = scratch();
    in_memory(reference.path(), Rules::AWARI, TOP);
    let dir = scratch();
    // 0.05 GiB: layer 15 needs 41 MB in memory, layer 16 70 MB.
    let out = awari()
        .args(["build", "--max-seeds", "16", "--memory-limit", "0.05"])
        .args(["--lean-buffer-mib", "1", "--db"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("layer 0: in-memory pass"), "{stderr}");
    assert!(stderr.contains("layer 16: lean pass"), "{stderr}");
    assert!(
        !stderr.contains("layer 15: lean"),
        "layer 15 fits in memory: {stderr}"
    );
    assert!(
        stderr.contains("layer 16: lean pass, memory plan"),
        "{stderr}"
    );
    assert_same_files(reference.path(), dir.path(), Rules::AWARI, TOP);
}

/// A layer whose scratch files and tables would not fit on the disk is refused before it
/// starts, with the space needed and the space free. Needs a small file system: a tmpfs
/// mounted for the test, which only root can do, so a plain `cargo test` ignores it
/// (`.ci/run` runs it with `--ignored`).
#[test]
#[ignore = "needs root to mount a 2 MiB tmpfs; run with --ignored (.ci/run does)"]
fn a_layer_that_would_fill_the_disk_is_refused() {
    let dir = scratch();
    let small = dir.path().join("small");
    std::fs::create_dir_all(&small).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=2m", "tmpfs"])
        .arg(&small)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        mounted,
        "cannot mount a 2 MiB tmpfs on {} (this test needs root)",
        small.display()
    );
    let out = awari()
        .args(["build", "-q", "--lean", "--max-seeds", "12", "--db"])
        .arg(&small)
        .output()
        .unwrap();
    let _ = Command::new("umount").arg(&small).status();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a build that cannot fit succeeded");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains("free disk space") && stderr.contains("are free"),
        "the error gives the space needed and free: {stderr}"
    );
    // In a unit that shows them: a 2 MiB disk has no "0.00 GiB" free.
    assert!(
        stderr.contains("MiB are free") && !stderr.contains("0.00"),
        "{stderr}"
    );
}

/// `verify --sample` (for layers too large to hold) passes on a sound database and catches
/// a planted wrong value.
#[test]
fn sampled_verify_passes_sound_layers_and_catches_a_planted_value() {
    const TOP: u32 = 9;
    let dir = scratch();
    in_memory(dir.path(), Rules::AWARI, TOP);
    let verify = |sample: &str| {
        awari()
            .args(["verify", "--layers", "5..9", "--sample", sample, "--db"])
            .arg(dir.path())
            .output()
            .unwrap()
    };
    let out = verify("500");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("layer  9: 500 positions sampled"),
        "{stdout}"
    );

    // Plant wrong values all over the layer, every 16th position: a sample of 500
    // positions drawn at random (500 runs of one position here) finds some.
    let file = awari::store::LayerFile::open(
        &table_path(dir.path(), Rules::AWARI, TOP, TableKind::Values),
        Rules::AWARI,
        TOP,
    )
    .unwrap();
    let every = 16;
    let mut values = file.read_all().unwrap();
    drop(file);
    for at in (0..values.len()).step_by(every) {
        values[at] = if values[at] == 1 { 2 } else { 1 };
    }
    awari::store::write_layer(dir.path(), Rules::AWARI, TOP, &values, Default::default()).unwrap();
    let out = verify("500");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "a planted value passed: {stdout}");
    assert!(
        stdout.contains("layer  9: 500 positions, MISMATCHES"),
        "{stdout}"
    );
    // A sample of the whole layer is the whole check: every planted value is found (and
    // the parents in the layer that a planted child misleads).
    let planted = values.len().div_ceil(every) as u64;
    let out = verify(&values.len().to_string());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let head = format!("layer  9: {} positions, MISMATCHES: ", values.len());
    let found: u64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix(&head))
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(found >= planted, "{found} of {planted} planted: {stdout}");
}

/// A sampled check costs about what its sample holds: an eighth of a layer whose tables
/// do not fit the block cache takes less than the whole check of the layer (it read and
/// decompressed a block for nearly every lookup, 25 times the whole check here); a sample
/// at least the layer's size is the whole check.
#[test]
fn a_sample_costs_about_its_share_of_the_whole_check() {
    use awari::verify::{verify, verify_sampled};
    use std::time::Instant;
    const TOP: u32 = 14;
    let dir = scratch();
    in_memory(dir.path(), Rules::AWARI, TOP);
    let db = awari::Database::open(dir.path(), Rules::AWARI).unwrap();
    let size = awari::index::size(TOP);
    let started = Instant::now();
    let whole = verify(&db, TOP, TOP, |_| {}).unwrap();
    let whole_time = started.elapsed();
    let started = Instant::now();
    let sampled = verify_sampled(&db, TOP, TOP, size / 8, |_| {}).unwrap();
    let sampled_time = started.elapsed();
    assert_eq!(sampled[0].positions, size / 8);
    assert_eq!((sampled[0].mismatches, sampled[0].distance_faults), (0, 0));
    assert!(sampled[0].distances_checked);
    // Generous, for a busy machine: about a quarter of the whole check is expected.
    assert!(
        sampled_time < whole_time * 2 + Duration::from_secs(1),
        "sampled {sampled_time:?}, whole {whole_time:?}"
    );
    let all = verify_sampled(&db, TOP, TOP, size, |_| {}).unwrap();
    assert_eq!(all[0].positions, whole[0].positions);
    assert_eq!(all[0].mismatches, 0);
}

/// Two builds given one `--scratch` folder: while one holds it, the other refuses in one
/// line naming the holder, before touching the scratch (two lean builds of different
/// databases sharing it corrupted each other's runs). The scratch given as the database
/// folder itself is the database's own lock, and builds.
#[test]
fn a_scratch_folder_in_use_by_another_build_is_refused() {
    let dir = scratch();
    let shared = dir.path().join("sc");
    let lock = shared.join(Rules::AWARI.name()).join("build.lock");
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    std::fs::write(&lock, "process 4242").unwrap();
    let held = std::fs::File::open(&lock).unwrap();
    held.try_lock().unwrap();
    let stale = shared.join(Rules::AWARI.name()).join("lean-05");
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::write(stale.join("exits-01.run"), b"the other build's run").unwrap();
    let lean_build = |db: &Path, scratch: &Path| {
        awari()
            .args(["build", "--lean", "--max-seeds", "6", "-q", "--db"])
            .arg(db)
            .arg("--scratch")
            .arg(scratch)
            .output()
            .unwrap()
    };
    let db = dir.path().join("db");
    let out = lean_build(&db, &shared);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "a held scratch folder was used: {stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("in use by another build or recode (process 4242)"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(stale.join("exits-01.run")).unwrap(),
        b"the other build's run"
    );
    drop(held);
    let out = lean_build(&db, &shared);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let own = dir.path().join("own");
    let out = lean_build(&own, &own);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Fills the scratch folder of layer `n` with what a killed build of another kind leaves:
/// a partitioned build's `rank-K` subfolders, or a single process's checkpoint files.
fn fabricate_scratch(db: &Path, n: u32, ranks: bool) {
    let lean = scratch_dir(db, Rules::AWARI, n);
    if ranks {
        for k in 0..2 {
            let dir = lean.join(format!("rank-{k}"));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("exits-01.run"), b"stale exits of a killed rank").unwrap();
        }
    } else {
        common::stale_lean_checkpoint(&lean);
    }
}

/// A build killed after a layer's files were renamed into place but before its scratch
/// folder was removed leaves the folder behind; the next build finds the layer whole and
/// removes the folder (single-process and rank scratch alike), the layers untouched.
#[test]
fn a_whole_layers_leftover_scratch_is_removed() {
    const TOP: u32 = 11;
    let reference = scratch();
    in_memory(reference.path(), Rules::AWARI, TOP);
    for ranks in [false, true] {
        let dir = scratch();
        copy_layers(reference.path(), dir.path(), TOP);
        for n in [TOP - 1, TOP] {
            fabricate_scratch(dir.path(), n, ranks);
        }
        build(&BuildOptions::new(dir.path(), Rules::AWARI, TOP), &Quiet).unwrap();
        assert_same_files(reference.path(), dir.path(), Rules::AWARI, TOP);
        for n in [TOP - 1, TOP] {
            let lean = scratch_dir(dir.path(), Rules::AWARI, n);
            assert!(
                !lean.exists(),
                "ranks {ranks}: {} is left behind",
                lean.display()
            );
        }
    }
}

/// Scratch of one kind of build does not break another: the single-process lean pass clears
/// a partitioned build's `rank-K` folders (it used to stop with "Is a directory"), and the
/// in-memory pass removes whatever lean scratch a layer it writes had; each writes the same
/// files as a clean build and leaves no scratch folder.
#[test]
fn scratch_of_another_kind_of_build_is_cleared() {
    const TOP: u32 = 11;
    let reference = scratch();
    in_memory(reference.path(), Rules::AWARI, TOP);
    for (pass, ranks) in [
        (PassChoice::Lean, true),
        (PassChoice::InMemory, true),
        (PassChoice::InMemory, false),
    ] {
        let what = format!(
            "{pass:?} over {}",
            if ranks {
                "rank folders"
            } else {
                "a checkpoint"
            }
        );
        let dir = scratch();
        copy_layers(reference.path(), dir.path(), TOP - 1);
        fabricate_scratch(dir.path(), TOP, ranks);
        let opts = BuildOptions {
            pass,
            ..BuildOptions::new(dir.path(), Rules::AWARI, TOP)
        };
        if let Err(e) = build(&opts, &Quiet) {
            panic!("{what}: {e}");
        }
        assert_same_files(reference.path(), dir.path(), Rules::AWARI, TOP);
        let lean = scratch_dir(dir.path(), Rules::AWARI, TOP);
        assert!(!lean.exists(), "{what}: {} is left behind", lean.display());
    }
}
