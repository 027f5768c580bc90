//! What several test binaries share: random-board strategies, every board of a layer, the
//! scratch folders, the database fixtures and their copies, and reading `awari serve`'s
//! address.

// Each test binary compiles this module on its own and uses only part of it.
#![allow(dead_code)]

pub mod real_game;

use awari::build::{build, BuildOptions};
use awari::solve::Quiet;
use awari::store::{rules_dir, table_path, TableKind};
use awari::{Board, Rules};
use proptest::prelude::*;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

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

/// Every placement of `n` seeds in 12 pits, by plain recursion over the pits (independent
/// of the library's index, which tests check against it), in lexicographic order.
pub fn boards_of_layer(n: u32) -> Vec<[u8; 12]> {
    fn place(pit: usize, left: u8, current: &mut [u8; 12], out: &mut Vec<[u8; 12]>) {
        if pit == 11 {
            current[11] = left;
            out.push(*current);
            return;
        }
        for k in 0..=left {
            current[pit] = k;
            place(pit + 1, left - k, current, out);
        }
        current[pit] = 0;
    }
    let mut out = Vec::new();
    place(0, n as u8, &mut [0; 12], &mut out);
    out
}

/// Every board of `n` seeds, in the order of [`boards_of_layer`].
pub fn every_board(n: u8) -> Vec<Board> {
    boards_of_layer(n.into())
        .into_iter()
        .map(|pits| Board::new(pits).unwrap())
        .collect()
}

/// Removes the scratch folders under `root` left by runs over an hour old (a test killed
/// half-way leaves its folder behind).
pub fn remove_stale(root: &Path) {
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
pub fn scratch_root(name: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&root).unwrap();
    static CLEANED: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    CLEANED.get_or_init(|| remove_stale(&root));
    root
}

/// A new folder under `root`, removed when dropped (a test's own scratch space).
pub fn scratch_in(root: &Path) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("t-")
        .tempdir_in(root)
        .unwrap()
}

/// Leaves in `lean` (a layer's lean-pass scratch folder) what a single-process lean build
/// stopped mid-layer leaves: a checkpoint and an exits file (stale here, so a build that
/// trusted them would fail or write other bytes).
pub fn stale_lean_checkpoint(lean: &Path) {
    std::fs::create_dir_all(lean).unwrap();
    std::fs::write(
        lean.join("checkpoint"),
        b"a stale single-process checkpoint",
    )
    .unwrap();
    std::fs::write(lean.join("exits-01.run"), b"stale exits").unwrap();
}

/// A new folder under `root` that outlives the test (a fixture shared by a test binary:
/// statics are never dropped, and [`scratch_root`] removes it after an hour).
pub fn kept_dir(root: &Path) -> PathBuf {
    tempfile::Builder::new()
        .prefix("db-")
        .tempdir_in(root)
        .unwrap()
        .keep()
}

/// Layers `0..=top` of `rules`, built in-process by the library into a new folder under
/// `root` that outlives the test.
pub fn library_fixture(root: &Path, rules: Rules, top: u32) -> PathBuf {
    let dir = kept_dir(root);
    build(&BuildOptions::new(dir.clone(), rules, top), &Quiet).unwrap();
    dir
}

/// Layers `0..=top` of `rules` built into `dir` by the in-memory pass of a single process:
/// what the partitioned builds are compared with, byte for byte.
pub fn in_memory_reference(dir: tempfile::TempDir, rules: Rules, top: u32) -> tempfile::TempDir {
    let opts = BuildOptions {
        pass: awari::build::PassChoice::InMemory,
        ..BuildOptions::new(dir.path(), rules, top)
    };
    build(&opts, &Quiet).unwrap();
    dir
}

/// What follows the program in `awari build --mpi` with one thread a rank: layers
/// `0..=top` of `rules` into `db`, quietly.
pub fn mpi_build_args(rules: Rules, top: u32, db: &Path) -> Vec<std::ffi::OsString> {
    let mut args: Vec<std::ffi::OsString> = ["build", "--mpi", "-q", "--threads", "1", "--rules"]
        .into_iter()
        .map(Into::into)
        .collect();
    args.push(rules.name().into());
    args.push("--max-seeds".into());
    args.push(top.to_string().into());
    args.push("--db".into());
    args.push(db.into());
    args
}

/// Layers `0..=top` of `awari`, built by the CLI into a new folder under `root` that
/// outlives the test (a fixture shared by a test binary).
#[cfg(feature = "cli")]
pub fn build_fixture(root: &Path, top: u32) -> PathBuf {
    build_fixture_of(root, &[Rules::AWARI], top)
}

/// Layers `0..=top` of each of `presets`, built by the CLI (one `awari build` each) into
/// one new folder under `root` that outlives the test.
#[cfg(feature = "cli")]
pub fn build_fixture_of(root: &Path, presets: &[Rules], top: u32) -> PathBuf {
    let dir = kept_dir(root);
    for rules in presets {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_awari"))
            .args(["build", "-q", "--rules", &rules.to_string()])
            .args(["--max-seeds", &top.to_string(), "--db"])
            .arg(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "fixture build of {rules} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    dir
}

/// Copies the values and distances files of `layers` of `rules` from the database folder
/// `from` to `to` (whole layers: a layer is complete only with both).
pub fn copy_layers(from: &Path, to: &Path, rules: Rules, layers: RangeInclusive<u32>) {
    std::fs::create_dir_all(rules_dir(to, rules)).unwrap();
    for n in layers {
        for kind in [TableKind::Values, TableKind::Distances] {
            std::fs::copy(
                table_path(from, rules, n, kind),
                table_path(to, rules, n, kind),
            )
            .unwrap_or_else(|e| panic!("copying {rules} layer {n} {kind:?}: {e}"));
        }
    }
}

/// Every values and distances file of layers `0..=top` of `rules` is the same, byte for
/// byte, in both folders (`what` names the build that wrote `other`).
pub fn assert_same_files(reference: &Path, other: &Path, rules: Rules, top: u32, what: &str) {
    for n in 0..=top {
        for kind in [TableKind::Values, TableKind::Distances] {
            let a = std::fs::read(table_path(reference, rules, n, kind)).unwrap();
            let b = std::fs::read(table_path(other, rules, n, kind))
                .unwrap_or_else(|e| panic!("{what}: {rules} layer {n} {kind:?}: {e}"));
            assert!(a == b, "{what}: {rules} layer {n} {kind:?}: other bytes");
        }
    }
}

/// The address `awari serve` listens on, from the first line it prints (`… http://ADDR/`),
/// read a byte at a time so nothing after that line is taken from `stdout`. An error
/// holding the line when it has no address (the server ended before listening).
pub fn serve_address(stdout: &mut impl std::io::Read) -> Result<String, String> {
    let mut first = Vec::new();
    let mut byte = [0u8; 1];
    while stdout.read(&mut byte).unwrap_or(0) == 1 && byte[0] != b'\n' {
        first.push(byte[0]);
    }
    let first = String::from_utf8_lossy(&first).into_owned();
    first
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .map(str::to_string)
        .ok_or(first)
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

/// What a finished child process left (its output read as UTF-8, lossily).
#[derive(Debug)]
pub struct Done {
    pub status: std::process::ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `cmd` with `stdin` (or none), stdout going to `stdout` (captured when it is
/// `Stdio::piped()`), stderr captured. Kills it and returns `Err` if it is still running
/// after `limit`: a hung command fails its test instead of hanging the suite.
pub fn run_limited(
    mut cmd: std::process::Command,
    stdin: Option<Vec<u8>>,
    stdout: std::process::Stdio,
    limit: std::time::Duration,
) -> Result<Done, String> {
    use std::io::{Read, Write};
    use std::process::Stdio;
    use std::thread;
    let what = format!("{cmd:?}");
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(stdout)
    .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("{what}: cannot spawn: {e}"))?;
    // Drop our copies of the child's stdio (a pipe's write end held here would keep it open).
    drop(cmd);
    if let (Some(bytes), Some(mut w)) = (stdin, child.stdin.take()) {
        thread::spawn(move || {
            let _ = w.write_all(&bytes);
        });
    }
    // Both outputs are drained by threads, so a child that fills one pipe never blocks.
    let reader = |mut r: Box<dyn Read + Send>| {
        thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            String::from_utf8_lossy(&v).into_owned()
        })
    };
    let out = child
        .stdout
        .take()
        .map(|r| reader(Box::new(r) as Box<dyn Read + Send>));
    let err = reader(Box::new(child.stderr.take().unwrap()));
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "{what}: still running after {limit:?} (killed); stderr:\n{}",
                err.join().unwrap()
            ));
        }
        thread::sleep(std::time::Duration::from_millis(10));
    };
    Ok(Done {
        status,
        stdout: out.map(|t| t.join().unwrap()).unwrap_or_default(),
        stderr: err.join().unwrap(),
    })
}

/// Polls until `ready` holds (a file a running command writes, usually). Fails, killing
/// `child`, if it ends first or `limit` passes; `what` names what was waited for.
pub fn wait_for(
    child: &mut std::process::Child,
    limit: std::time::Duration,
    what: &str,
    mut ready: impl FnMut() -> bool,
) {
    let started = std::time::Instant::now();
    while !ready() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the command ended ({status}) before {what}");
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still waiting after {limit:?} for {what}");
        }
        // The cadence the hardening tests always had: a SIGINT sent the moment a layer
        // appears could land between two layers, where the build names none.
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Headless Chromium: `AWARI_CHROMIUM`, else Debian's. The browser tests are ignored by a
/// plain `cargo test` (`.ci/run` installs Chromium and runs them with `--ignored`); asked
/// for without a browser, they fail saying so rather than pass having checked nothing.
pub fn chromium_path() -> PathBuf {
    if let Some(p) = std::env::var_os("AWARI_CHROMIUM") {
        return PathBuf::from(p);
    }
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .unwrap_or_else(|| {
            panic!(
                "this test needs headless Chromium: apt-get install chromium, or set \
                 AWARI_CHROMIUM to its path"
            )
        })
}

/// One HTTP GET of `path` from the server at `addr` (`host:port`), the connection closed
/// after it: the status and the body.
pub fn http_get(addr: &str, path: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status in {text:?}"));
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, body.to_string())
}
