//! Random-board strategies shared by the property tests.

// Each test binary compiles this module on its own and uses only part of it.
#![allow(dead_code)]

use awari::Board;
use proptest::prelude::*;

/// A random board of `n` seeds: `n` cut into 12 pits at 11 sorted cut points in 0..=n.
pub fn board_of(n: u8) -> impl Strategy<Value = Board> {
    proptest::collection::vec(0..=n, 11).prop_map(move |mut cuts| {
        cuts.sort_unstable();
        let mut pits = [0u8; 12];
        let mut prev = 0;
        for (i, &c) in cuts.iter().enumerate() {
            pits[i] = c - prev;
            prev = c;
        }
        pits[11] = n - prev;
        Board::new(pits).unwrap()
    })
}

/// A random board of up to 48 seeds: a random total, then a random placement.
pub fn any_board() -> impl Strategy<Value = Board> {
    (0u8..=48).prop_flat_map(board_of)
}

/// Every board of `n` seeds, in no particular order.
pub fn every_board(n: u8) -> Vec<Board> {
    fn fill(pits: &mut [u8; 12], at: usize, left: u8, out: &mut Vec<Board>) {
        if at == 11 {
            pits[11] = left;
            out.push(Board::new(*pits).unwrap());
            return;
        }
        for k in 0..=left {
            pits[at] = k;
            fill(pits, at + 1, left - k, out);
        }
    }
    let mut out = Vec::new();
    fill(&mut [0; 12], 0, n, &mut out);
    out
}

/// Removes the scratch folders under `root` left by runs over an hour old (a test killed
/// half-way leaves its folder behind).
pub fn remove_stale(root: &std::path::Path) {
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for entry in std::fs::read_dir(root).into_iter().flatten().flatten() {
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| t < hour_ago);
        if stale {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// `CARGO_TARGET_TMPDIR/<name>`, created, with folders left by runs over an hour old
/// removed (once per test binary).
pub fn scratch_root(name: &str) -> std::path::PathBuf {
    let root = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&root).unwrap();
    static CLEANED: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    CLEANED.get_or_init(|| remove_stale(&root));
    root
}

/// Layers `0..=top` of `awari`, built by the CLI into a new folder under `root` that
/// outlives the test (a fixture shared by a test binary).
pub fn build_fixture(root: &std::path::Path, top: u32) -> std::path::PathBuf {
    let dir = tempfile::Builder::new()
        .prefix("db-")
        .tempdir_in(root)
        .unwrap()
        .keep();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_awari"))
        .args(["build", "-q", "--max-seeds", &top.to_string(), "--db"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "fixture build failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

/// `count` boards of layer `n` spread over its index range (a fixed stride; `salt` moves
/// the start).
pub fn spread_sample(n: u32, count: u64, salt: u64) -> Vec<Board> {
    use awari::index::{size, unrank};
    (0..count)
        .map(|k| unrank(n, (k * 7_919 + salt * 104_729) % size(n)))
        .collect()
}

/// The resident memory of a running process in KiB, from /proc.
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}
