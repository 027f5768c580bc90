//! The own-row values' lean pass, from the command line: a layer it builds is an interval
//! that holds the in-memory pass's (equal to it wherever it is exact), it writes the same
//! files as the in-memory pass where that is exact, it is chosen by itself when the
//! in-memory pass would not fit, and a build killed mid-layer resumes from its checkpoint
//! and writes the same bytes as one left alone.

mod common;

use awari::store::{table_path, LayerFile, TableKind};
use awari::{Repetition, Rules};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;
use tempfile::TempDir;

const LOW: TableKind = TableKind::OwnRowLow(Repetition::First);
const HIGH: TableKind = TableKind::OwnRowHigh(Repetition::First);

fn scratch() -> TempDir {
    common::scratch_in(&common::scratch_root("awari-own-row-lean-tests"))
}

/// `awari build --cycles own-row-first --rules abapa` into `db` up to `top`, with `args`.
fn build(db: &Path, top: u32, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_awari"));
    cmd.args([
        "build",
        "-q",
        "--cycles",
        "own-row-first",
        "--rules",
        "abapa",
    ])
    .args(["--max-seeds", &top.to_string(), "--search-budget", "2000"])
    .args(args)
    .arg("--db")
    .arg(db);
    cmd
}

fn ok(out: Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    stderr
}

fn own_row(db: &Path) -> PathBuf {
    db.join("own-row")
}

/// Layer `n`'s pair in `db`: every position's low and high.
fn pair(db: &Path, n: u32) -> (Vec<i8>, Vec<i8>) {
    let read = |kind| {
        let path = table_path(&own_row(db), Rules::ABAPA, n, kind);
        LayerFile::open_kind(&path, Rules::ABAPA, n, kind)
            .unwrap()
            .read_all()
            .unwrap()
    };
    (read(LOW), read(HIGH))
}

/// Copies layers `layers` of the own-row pairs from `from` to `to`.
fn copy_pairs(from: &Path, to: &Path, layers: std::ops::RangeInclusive<u32>) {
    for n in layers {
        for kind in [LOW, HIGH] {
            let dest = table_path(&own_row(to), Rules::ABAPA, n, kind);
            std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
            std::fs::copy(table_path(&own_row(from), Rules::ABAPA, n, kind), dest).unwrap();
        }
    }
}

fn same_bytes(a: &Path, b: &Path, layers: std::ops::RangeInclusive<u32>) {
    for n in layers {
        for kind in [LOW, HIGH] {
            let path = |db| table_path(&own_row(db), Rules::ABAPA, n, kind);
            assert!(
                std::fs::read(path(a)).unwrap() == std::fs::read(path(b)).unwrap(),
                "layer {n}: {} differs",
                path(b).display()
            );
        }
    }
}

/// Layers 0..=5 are exact under the memoryless bounds alone (none of the in-memory pass's
/// searches narrows them), so `--lean` writes the in-memory pass's files, byte for byte;
/// and the lean pass leaves no scratch folder behind.
#[test]
fn where_the_bounds_are_exact_the_lean_pass_writes_the_in_memory_files() {
    let (memory, lean) = (scratch(), scratch());
    ok(build(memory.path(), 5, &["--in-memory"]).output().unwrap());
    ok(build(lean.path(), 5, &["--lean"]).output().unwrap());
    same_bytes(memory.path(), lean.path(), 0..=5);
    let folder = own_row(lean.path()).join("abapa");
    let left: Vec<_> = std::fs::read_dir(&folder)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("lean-"))
        .collect();
    assert!(left.is_empty(), "scratch left behind: {left:?}");
}

/// The scratch folder's checkpoint of layer `n`: its next threshold.
fn checkpoint_threshold(db: &Path, n: u32) -> Option<u32> {
    let path = own_row(db)
        .join("abapa")
        .join(format!("lean-r2-{n:02}"))
        .join("checkpoint");
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("next-threshold "))
        .and_then(|t| t.parse().ok())
}

/// Layer 12 over layers 0..=11 built in memory at a small budget (not all exact): with a
/// memory limit under the in-memory pass's need, the build takes the lean pass by itself
/// and keeps its interval, which holds the in-memory pass's interval of every position
/// and equals it where it is exact. Killed (SIGKILL) after checkpoints well into the
/// layer, the lean build resumes and writes the bytes of a lean build left alone.
#[test]
fn a_lean_layer_holds_the_in_memory_interval_and_resumes_after_a_kill() {
    const TOP: u32 = 12;
    // Just above the lean pass's plan for layer 12 (55 MiB), under the in-memory pass's
    // need (about 75 MiB).
    const LIMIT: &str = "0.06";
    let memory = scratch();
    ok(build(memory.path(), TOP, &["--in-memory"])
        .output()
        .unwrap());
    let (alone, killed) = (scratch(), scratch());
    for db in [alone.path(), killed.path()] {
        copy_pairs(memory.path(), db, 0..=TOP - 1);
    }
    ok(build(alone.path(), TOP, &["--memory-limit", LIMIT])
        .output()
        .unwrap());
    let (low, high) = pair(alone.path(), TOP);
    let (mem_low, mem_high) = pair(memory.path(), TOP);
    let mut exact = 0;
    for i in 0..low.len() {
        assert!(
            low[i] <= mem_low[i] && mem_high[i] <= high[i],
            "position {i}: the lean interval [{}, {}] does not hold the in-memory [{}, {}]",
            low[i],
            high[i],
            mem_low[i],
            mem_high[i]
        );
        exact += usize::from(low[i] == high[i]);
    }
    assert!(exact * 2 > low.len(), "most of layer 12 is exact: {exact}");

    let mut child = build(killed.path(), TOP, &["--memory-limit", LIMIT])
        .args(["--checkpoint-minutes", "0", "--lean-buffer-mib", "0.25"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    common::wait_for(
        &mut child,
        Duration::from_secs(300),
        "it could be killed mid-layer",
        || checkpoint_threshold(killed.path(), TOP).is_some_and(|t| t < 2 * TOP - 4),
    );
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !table_path(&own_row(killed.path()), Rules::ABAPA, TOP, HIGH).exists(),
        "killed mid-layer, yet layer {TOP} looks whole"
    );
    let stderr = ok(build(killed.path(), TOP, &["--memory-limit", LIMIT])
        .args(["--checkpoint-minutes", "0", "--lean-buffer-mib", "0.25"])
        .output()
        .unwrap());
    assert!(
        stderr.contains(&format!("layer {TOP}: resuming from its checkpoint")),
        "the resumed build must say it resumes: {stderr}"
    );
    same_bytes(alone.path(), killed.path(), 0..=TOP);
    let verified = Command::new(env!("CARGO_BIN_EXE_awari"))
        .args([
            "verify",
            "--cycles",
            "own-row-first",
            "--rules",
            "abapa",
            "--db",
        ])
        .arg(killed.path())
        .output()
        .unwrap();
    ok(verified);
}
