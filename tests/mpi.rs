//! `awari build --mpi`, run with `cargo test --features mpi --test mpi` (Open MPI
//! installed; `.ci/run` installs it): any number of ranks writes the files a single
//! process writes, byte for byte; a killed rank stops the job and the same command
//! resumes; without mpirun, a clear error.
#![cfg(feature = "mpi")]

mod common;

use awari::build::{build, BuildOptions};
use awari::solve::Quiet;
use awari::store::{table_path, LayerFile, TableKind};
use awari::Rules;
use common::assert_same_files;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};
use tempfile::TempDir;

fn scratch() -> TempDir {
    common::scratch_in(&common::scratch_root("awari-mpi-tests"))
}

/// `mpirun -np P awari build --mpi …` on this machine (loopback, more ranks than cores
/// allowed; as root when the tests run as root).
fn mpirun(ranks: usize, rules: Rules, top: u32, db: &Path) -> Command {
    let mut cmd = Command::new("mpirun");
    cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .args([
            "--oversubscribe",
            "--bind-to",
            "none",
            "-np",
            &ranks.to_string(),
        ])
        .arg(env!("CARGO_BIN_EXE_awari"))
        .args(common::mpi_build_args(rules, top, db));
    cmd
}

fn reference(rules: Rules, top: u32) -> TempDir {
    common::in_memory_reference(scratch(), rules, top)
}

fn ok(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// P = 1, 2, 3 and 4 ranks, layers 0..=18 of every preset, the same
/// bytes as the single-process build.
#[test]
fn any_number_of_ranks_writes_the_files_of_a_single_process() {
    const TOP: u32 = 18;
    for rules in Rules::ALL {
        let single = reference(rules, TOP);
        for ranks in 1..=4 {
            let dir = scratch();
            let out = mpirun(ranks, rules, TOP, dir.path()).output().unwrap();
            ok(&out, &format!("{ranks} ranks, {rules}"));
            assert_same_files(
                single.path(),
                dir.path(),
                rules,
                TOP,
                &format!("{ranks} ranks"),
            );
        }
    }
}

/// A rank killed mid-layer stops the whole job with a non-zero exit and a message; no
/// layer file that opens as complete is left for the layer it was building; the same
/// command then resumes at the first missing layer and writes the same bytes.
#[test]
fn a_killed_rank_stops_the_job_and_the_same_command_resumes() {
    const TOP: u32 = 17;
    let single = reference(Rules::AWARI, TOP);
    let dir = scratch();
    let mut job = mpirun(3, Rules::AWARI, TOP, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let values = |n: u32| table_path(dir.path(), Rules::AWARI, n, TableKind::Values);
    let started = Instant::now();
    while !values(15).exists() {
        assert!(started.elapsed() < Duration::from_secs(600), "no layer 15");
        assert!(job.try_wait().unwrap().is_none(), "the job ended early");
        thread::sleep(Duration::from_millis(10));
    }
    // The ranks are mpirun's children; kill one of them.
    let children = Command::new("pgrep")
        .args(["-P", &job.id().to_string()])
        .output()
        .unwrap();
    let pids = String::from_utf8_lossy(&children.stdout);
    let victim = pids.lines().nth(1).or(pids.lines().next()).expect("a rank");
    let killed = Command::new("kill").args(["-9", victim]).status().unwrap();
    assert!(killed.success());
    let out = job.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !out.status.success(),
        "the job survived a dead rank: {said}"
    );
    assert!(
        said.contains("signal 9") || said.contains("Killed"),
        "mpirun says which rank died and how: {said}"
    );
    // Every values file there opens whole; the layer being built has none.
    let mut complete = 0;
    for n in 0..=TOP {
        if values(n).exists() {
            let file = LayerFile::open(&values(n), Rules::AWARI, n).unwrap();
            file.check_blocks().unwrap();
            complete = n + 1;
        }
    }
    assert!(complete <= TOP, "every layer was written before the kill");
    for n in complete..=TOP {
        assert!(!values(n).exists(), "layer {n} exists after a gap");
    }

    let out = mpirun(3, Rules::AWARI, TOP, dir.path()).output().unwrap();
    ok(&out, "the rerun");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(&format!("{complete} already there")),
        "the rerun resumes at layer {complete}: {said}"
    );
    assert_same_files(
        single.path(),
        dir.path(),
        Rules::AWARI,
        TOP,
        "after the kill",
    );
}

/// Without mpirun, `--mpi` is a one-line error that says how to start it.
#[test]
fn mpi_without_mpirun_says_how_to_start_it() {
    let dir = scratch();
    let out = Command::new(env!("CARGO_BIN_EXE_awari"))
        .args(["build", "--mpi", "--max-seeds", "4", "--db"])
        .arg(dir.path())
        .env_remove("OMPI_COMM_WORLD_SIZE")
        .env_remove("PMI_SIZE")
        .env_remove("PMIX_RANK")
        .env_remove("SLURM_PROCID")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("mpirun -np"), "{stderr}");
}

/// A partitioned build over a single process's lean checkpoint of a layer it builds (a
/// `build --lean` killed mid-layer) clears it: the job succeeds, writes the bytes of a
/// single process, and leaves no `lean-NN` folder (it used to leave the old checkpoint).
#[test]
fn a_partitioned_build_clears_a_single_process_checkpoint() {
    const TOP: u32 = 12;
    let single = reference(Rules::AWARI, TOP);
    let dir = scratch();
    common::copy_layers(single.path(), dir.path(), Rules::AWARI, 0..=TOP - 1);
    let lean = awari::solve::lean::scratch_dir(dir.path(), Rules::AWARI, TOP);
    common::stale_lean_checkpoint(&lean);
    let out = mpirun(2, Rules::AWARI, TOP, dir.path()).output().unwrap();
    ok(&out, "2 ranks over a checkpoint");
    assert_same_files(single.path(), dir.path(), Rules::AWARI, TOP, "2 ranks");
    assert!(!lean.exists(), "{} is left behind", lean.display());
}

/// Layers built without their distances (`--distances-up-to`): 2 and 3 ranks write the
/// files a single process writes with the same option, byte for byte, the distances
/// files above the bound headers that keep no entries.
#[test]
fn ranks_leave_out_the_same_distances_as_a_single_process() {
    const TOP: u32 = 12;
    const KEPT: u32 = 9;
    let single = scratch();
    let opts = BuildOptions {
        distances_up_to: Some(KEPT),
        ..BuildOptions::new(single.path(), Rules::AWARI, TOP)
    };
    build(&opts, &Quiet).unwrap();
    for ranks in [2, 3] {
        let dir = scratch();
        let out = mpirun(ranks, Rules::AWARI, TOP, dir.path())
            .args(["--distances-up-to", &KEPT.to_string()])
            .output()
            .unwrap();
        ok(
            &out,
            &format!("{ranks} ranks without distances above {KEPT}"),
        );
        assert_same_files(
            single.path(),
            dir.path(),
            Rules::AWARI,
            TOP,
            &format!("{ranks} ranks"),
        );
        for n in 0..=TOP {
            let path = table_path(dir.path(), Rules::AWARI, n, TableKind::Distances);
            let file = LayerFile::open_kind(&path, Rules::AWARI, n, TableKind::Distances).unwrap();
            assert_eq!(file.keeps_entries(), n <= KEPT, "layer {n}, {ranks} ranks");
        }
    }
}

/// Blocks that do not divide the ranks' segments of the final merge evenly (3,000
/// positions: a segment is 349 blocks, the layer's last block short) and a block larger
/// than a segment would otherwise be (1.5 M positions): 3 ranks write the files a single
/// process writes with the same block size, byte for byte.
#[test]
fn ranks_write_the_same_files_for_any_block_size() {
    const TOP: u32 = 14;
    for block_size in [3_000u32, 1_500_000] {
        let single = scratch();
        let mut opts = BuildOptions::new(single.path(), Rules::AWARI, TOP);
        opts.write.block_size = block_size;
        build(&opts, &Quiet).unwrap();
        let dir = scratch();
        let out = mpirun(3, Rules::AWARI, TOP, dir.path())
            .args(["--block-size", &block_size.to_string()])
            .output()
            .unwrap();
        ok(&out, &format!("3 ranks, blocks of {block_size}"));
        assert_same_files(
            single.path(),
            dir.path(),
            Rules::AWARI,
            TOP,
            &format!("3 ranks, blocks of {block_size}"),
        );
    }
}
