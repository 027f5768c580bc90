//! The distances file is part of a complete layer: a build rebuilds a layer whose distances
//! are missing or damaged (to the same bytes), `verify` fails such a layer, and `pv`, which
//! would otherwise have to search (for minutes on layer 16), stops at once with one line
//! saying how to complete the layer.

mod common;

use awari::probe::ProbeError;
use awari::store::{table_path, TableKind, FIXED_HEADER};
use awari::{Board, Database, Rules};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use tempfile::TempDir;

const RULES: Rules = Rules::AWARI;

fn root() -> PathBuf {
    common::scratch_root("awari-distances-tests")
}

fn scratch() -> TempDir {
    common::scratch_in(&root())
}

/// Layers 0..=10 of `awari`, built once per test binary by the CLI. Never changed.
fn small_db() -> &'static Path {
    static DB: OnceLock<PathBuf> = OnceLock::new();
    DB.get_or_init(|| common::build_fixture(&root(), 10))
}

/// A private copy of every values and distances file of layers `0..=top` of `from`.
fn copy_db(from: &Path, top: u32) -> TempDir {
    let to = scratch();
    common::copy_layers(from, to.path(), RULES, 0..=top);
    to
}

fn awari(db: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_awari"))
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Insists on a failure reported as one `error:` line on stderr containing each needle.
fn one_line_error(out: &Output, what: &str, needles: &[&str]) -> String {
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{what}: exited successfully");
    assert!(out.status.code().is_some(), "{what}: killed:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{what}: panicked:\n{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{what}: expected one line, got:\n{stderr}");
    assert!(lines[0].starts_with("error: "), "{what}: {stderr}");
    for needle in needles {
        assert!(
            lines[0].contains(needle),
            "{what}: no '{needle}' in:\n{stderr}"
        );
    }
    lines[0].to_string()
}

/// Flips a byte in the middle of the first block of a table file (behind a valid header).
fn damage_first_block(path: &Path) {
    let mut bytes = fs::read(path).unwrap();
    let at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap()) as usize;
    let (start, end) = (at(FIXED_HEADER), at(FIXED_HEADER + 8));
    bytes[(start + end) / 2] ^= 0x10;
    fs::remove_file(path).unwrap();
    fs::write(path, bytes).unwrap();
}

/// `build` over a layer without its distances file (or with a damaged one) builds that
/// layer again, by either pass, and the files come out byte for byte as before; the other
/// layers are left alone.
#[test]
fn build_rebuilds_a_layer_whose_distances_are_missing_or_damaged() {
    let original = |n: u32, kind| fs::read(table_path(small_db(), RULES, n, kind)).unwrap();
    for pass in ["--in-memory", "--lean"] {
        let db = copy_db(small_db(), 10);
        let distances = table_path(db.path(), RULES, 8, TableKind::Distances);
        fs::remove_file(&distances).unwrap();
        damage_first_block(&table_path(db.path(), RULES, 10, TableKind::Distances));
        let out = awari(db.path(), &["build", "-q", pass, "--max-seeds", "10"]);
        assert!(
            out.status.success(),
            "{pass}: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        let stdout = text(&out.stdout);
        assert!(
            stdout.contains("2 built, 9 already there"),
            "{pass}: {stdout}"
        );
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("layer 8: ") && stderr.contains("layer-08.awdz: missing"),
            "{pass}: {stderr}"
        );
        assert!(
            stderr.contains("layer 10: ") && stderr.contains("layer-10.awdz: corrupted"),
            "{pass}: {stderr}"
        );
        for n in 0..=10 {
            for kind in [TableKind::Values, TableKind::Distances] {
                let now = fs::read(table_path(db.path(), RULES, n, kind))
                    .unwrap_or_else(|e| panic!("{pass}: layer {n} {kind:?}: {e}"));
                assert!(
                    now == original(n, kind),
                    "{pass}: layer {n} {kind:?} differs"
                );
            }
        }
        // Complete now: a second build finds every layer there.
        let out = awari(db.path(), &["build", "-q", "--max-seeds", "10"]);
        assert!(
            text(&out.stdout).contains("0 built, 11 already there"),
            "{pass}: {}",
            text(&out.stdout)
        );
    }
}

/// `verify`, whole or sampled, fails a layer without its distances file, in one line that
/// names the file and the build that completes the layer; a damaged one fails too.
#[test]
fn verify_fails_a_layer_without_its_distances() {
    let db = copy_db(small_db(), 10);
    let distances = table_path(db.path(), RULES, 9, TableKind::Distances);
    fs::remove_file(&distances).unwrap();
    for args in [&["verify"][..], &["verify", "--sample", "100"]] {
        let out = awari(db.path(), args);
        one_line_error(
            &out,
            &format!("{args:?}"),
            &["layer 9", "layer-09.awdz", "awari build", "--max-seeds 9"],
        );
    }
    // Layers below the one without distances still pass on their own.
    let out = awari(db.path(), &["verify", "--layers", "0..8"]);
    assert!(out.status.success(), "{}", text(&out.stderr));

    let db = copy_db(small_db(), 10);
    damage_first_block(&table_path(db.path(), RULES, 9, TableKind::Distances));
    let out = awari(db.path(), &["verify"]);
    one_line_error(&out, "verify, damaged", &["layer-09.awdz", "corrupted"]);
}

/// The reported case: layers 0..=16 without `layer-16.awdz`. `pv` of a won position of
/// layer 16 used to search for over a minute; now it stops at once, with one line naming
/// the file and the build that restores it (and the library says the same, typed).
#[test]
fn pv_without_distances_stops_at_once_with_a_clear_error() {
    const TOP: u32 = 16;
    let db = common::build_fixture(&root(), TOP);
    let _cleanup = DropDir(db.clone());
    fs::remove_file(table_path(&db, RULES, TOP, TableKind::Distances)).unwrap();
    let text_board = "1 2 2 0 2 1 1 2 0 0 3 2";
    let board: Board = text_board.parse().unwrap();
    assert_eq!(board.seeds(), TOP);

    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_awari"))
        .args(["pv", text_board, "--db"])
        .arg(&db)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Generous for a loaded machine; the old search ran for minutes.
    let limit = Duration::from_secs(5);
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("pv still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    let line = one_line_error(
        &out,
        "pv",
        &[
            "layer 16",
            "layer-16.awdz",
            "awari build --rules awari --max-seeds 16",
        ],
    );
    assert!(line.contains("distances"), "{line}");

    let db = Database::open(&db, RULES).unwrap();
    let started = Instant::now();
    match db.principal_variation(&board, 1000) {
        Err(ProbeError::DistancesMissing { seeds, path, .. }) => {
            assert_eq!(seeds, TOP);
            assert!(path.ends_with("awari/layer-16.awdz"), "{}", path.display());
        }
        other => panic!("expected DistancesMissing, got {other:?}"),
    }
    assert!(matches!(
        db.perfect_move(&board),
        Err(ProbeError::DistancesMissing { seeds: TOP, .. })
    ));
    assert!(started.elapsed() < limit, "{:?}", started.elapsed());
    // A layer below, complete, still answers.
    let lower: Board = "1 2 2 0 2 1 1 2 0 0 3 1".parse().unwrap();
    db.principal_variation(&lower, 1000).unwrap();
}

/// Removes a fixture folder when the test ends.
struct DropDir(PathBuf);

impl Drop for DropDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}
