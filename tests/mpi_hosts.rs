//! `awari build --mpi` with its ranks on separate hosts: network namespaces of this
//! machine joined by a bridge, each rank alone in its own, the ranks talking over TCP only
//! (tests/netns/mpirun-hosts makes them and starts mpirun across them). They need root,
//! `ip` and Open MPI, so a plain `cargo test --features mpi` ignores them; `.ci/run` (as
//! root) runs them with `--ignored`, where a missing prerequisite fails.
#![cfg(feature = "mpi")]

mod common;

use awari::store::{table_path, TableKind};
use awari::Rules;
use common::assert_same_files;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};
use tempfile::TempDir;

fn scratch() -> TempDir {
    common::scratch_in(&common::scratch_root("awari-mpi-hosts-tests"))
}

fn harness() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/netns/mpirun-hosts")
}

/// Fails, saying what is missing, unless this runs as root with `ip` and `mpirun`.
fn require_prerequisites() {
    let uid = Command::new("id").arg("-u").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&uid.stdout).trim(),
        "0",
        "the multi-host tests make network namespaces: run them as root"
    );
    for tool in ["ip", "mpirun"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .status()
            .unwrap();
        assert!(found.success(), "the multi-host tests need {tool}");
    }
}

/// `tests/netns/mpirun-hosts HOSTS awari build --mpi …`: one rank on each of `hosts`
/// hosts.
fn on_hosts(hosts: usize, rules: Rules, top: u32, db: &Path) -> Command {
    let mut cmd = Command::new(harness());
    cmd.arg(hosts.to_string())
        .arg(env!("CARGO_BIN_EXE_awari"))
        .args(common::mpi_build_args(rules, top, db));
    cmd
}

fn reference(rules: Rules, top: u32) -> TempDir {
    common::in_memory_reference(scratch(), rules, top)
}

fn said(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The names a run of the harness with process id `pid` makes that are still there
/// (namespaces, and links in this namespace).
fn leftovers(pid: u32) -> Vec<String> {
    let prefix = format!("awn{pid}");
    let mut left = Vec::new();
    for args in [&["netns", "list"][..], &["-o", "link", "show"][..]] {
        let out = Command::new("ip").args(args).output().unwrap();
        left.extend(
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .filter(|l| {
                    l.split_whitespace()
                        .any(|w| w.trim_end_matches(':').starts_with(&prefix))
                })
                .map(str::to_owned),
        );
    }
    left
}

/// The bytes each host's link sent and received, as the harness prints them.
fn link_bytes(out: &str, hosts: usize) -> Vec<(u64, u64)> {
    let counts: Vec<(u64, u64)> = out
        .lines()
        .filter_map(|l| l.strip_prefix("mpirun-hosts: h"))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w[2].parse().unwrap(), w[4].parse().unwrap())
        })
        .collect();
    assert_eq!(counts.len(), hosts, "a count for each host: {out}");
    counts
}

/// 2 and 3 ranks, each on a host of its own, layers 0..=16 of `awari` and `abapa`: the
/// files a single process writes, byte for byte; every host's link carried the ranks'
/// traffic; no namespace, bridge or veth is left.
#[test]
#[ignore = "needs root, ip and mpirun (makes network namespaces); .ci/run runs it"]
fn ranks_on_separate_hosts_write_the_files_of_a_single_process() {
    const TOP: u32 = 16;
    require_prerequisites();
    for rules in [Rules::AWARI, Rules::ABAPA] {
        let single = reference(rules, TOP);
        for hosts in [2, 3] {
            let dir = scratch();
            let job = on_hosts(hosts, rules, TOP, dir.path())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let pid = job.id();
            let out = job.wait_with_output().unwrap();
            let said = said(&out);
            assert!(
                out.status.success(),
                "{hosts} hosts, {rules} failed: {said}"
            );
            for (k, (sent, received)) in link_bytes(&said, hosts).into_iter().enumerate() {
                assert!(
                    sent > 100_000 && received > 100_000,
                    "host {}'s link carried {sent} and {received} bytes: {said}",
                    k + 1
                );
            }
            assert_same_files(
                single.path(),
                dir.path(),
                rules,
                TOP,
                &format!("{hosts} hosts"),
            );
            assert_eq!(leftovers(pid), Vec::<String>::new(), "after {hosts} hosts");
        }
    }
}

/// The harness stopped midway (SIGTERM, as a CI timeout or a Ctrl-C would) stops the
/// job and removes its namespaces, bridge and veths, with the ranks in them.
#[test]
#[ignore = "needs root, ip and mpirun (makes network namespaces); .ci/run runs it"]
fn the_harness_stopped_midway_leaves_nothing() {
    const TOP: u32 = 16;
    require_prerequisites();
    let dir = scratch();
    let job = on_hosts(3, Rules::AWARI, TOP, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = job.id();
    let values = |n: u32| table_path(dir.path(), Rules::AWARI, n, TableKind::Values);
    let started = Instant::now();
    while !values(12).exists() {
        assert!(started.elapsed() < Duration::from_secs(300), "no layer 12");
        thread::sleep(Duration::from_millis(10));
    }
    assert!(!leftovers(pid).is_empty(), "the harness made no namespaces");
    let killed = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = job.wait_with_output().unwrap();
    assert!(!out.status.success(), "the job survived: {}", said(&out));
    assert!(!values(TOP).exists(), "the job finished before the kill");
    assert_eq!(leftovers(pid), Vec::<String>::new(), "after the kill");
}
