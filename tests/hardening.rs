//! Hardening: one test per defect found by trying the program as a hostile user
//! would (closed pipes, full devices, non-UTF-8 input, overflowing flags, FIFOs, concurrent
//! builds, failed writes, files truncated under an open database, signals).
//!
//! Everything runs the real binary (`CARGO_BIN_EXE_awari`) or the stable library API
//! (`awari::{Board, Database, Rules}`), against small databases built once per test binary
//! with `awari build` under Cargo's per-target scratch folder. Tests that damage a database
//! work on a copy. Every child process runs under a time limit, so a hang is a failed test,
//! not a stuck test run.

mod common;

use assert_cmd::Command;
use awari::{Board, Database, Rules};
use common::{run_limited, Done};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// The layers of the shared fixture: 0..=12 is what `start` (one seed a pit) needs.
const TOP: u32 = 12;
/// How long a command that must not hang may run.
const LIMIT: Duration = Duration::from_secs(10);
/// A 12-seed board (one seed a pit): the opening `start` probes.
const OPENING: &str = "1 1 1 1 1 1 1 1 1 1 1 1";
/// An 8-seed board with moves and captures for both sides.
const EIGHT: &str = "1 0 2 0 1 0 0 1 0 2 1 0";

// ---------------------------------------------------------------------------------------
// Fixtures and helpers
// ---------------------------------------------------------------------------------------

fn awari_bin() -> &'static str {
    env!("CARGO_BIN_EXE_awari")
}

/// A fresh folder under Cargo's per-target scratch folder.
fn scratch() -> TempDir {
    common::scratch_in(&common::scratch_root("awari-hardening-tests"))
}

/// Layers 0..=TOP of `awari`, built with the CLI once per test binary. Never damaged.
fn db() -> &'static Path {
    static DB: OnceLock<PathBuf> = OnceLock::new();
    DB.get_or_init(|| common::build_fixture(&common::scratch_root("awari-hardening-tests"), TOP))
}

fn layer_path(db: &Path, n: u32) -> PathBuf {
    db.join("awari").join(format!("layer-{n:02}.awdb"))
}

/// A private copy of layers `0..=top` of the fixture (values and distances: whole layers).
fn copy_db(top: u32) -> TempDir {
    let to = scratch();
    common::copy_layers(db(), to.path(), Rules::AWARI, 0..=top);
    to
}

fn awari(args: &[&str]) -> StdCommand {
    let mut cmd = StdCommand::new(awari_bin());
    cmd.args(args);
    cmd
}

/// `awari ARGS --db DB`, under the time limit, stdout captured.
fn run_db(db: &Path, args: &[&str]) -> Result<Done, String> {
    let mut cmd = awari(args);
    cmd.arg("--db").arg(db);
    run_limited(cmd, None, Stdio::piped(), LIMIT)
}

/// `awari ARGS --db DB` started in the background, its stdin and stdout null and its
/// stderr as given (piped to read its messages once it ends).
fn spawn_db(db: &Path, args: &[&str], stderr: Stdio) -> std::process::Child {
    let mut cmd = awari(args);
    cmd.arg("--db")
        .arg(db)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr);
    cmd.spawn().unwrap()
}

/// `Err` unless `done` is a failure reported as exactly one line on stderr, starting with
/// "error:", with no panic and an exit code (not a signal).
fn check_one_line_error(done: &Done) -> Result<String, String> {
    let stderr = &done.stderr;
    if done.status.success() {
        return Err(format!("exited successfully; stderr:\n{stderr}"));
    }
    if stderr.contains("panicked") {
        return Err(format!("panicked:\n{stderr}"));
    }
    if done.status.code().is_none() {
        return Err(format!("killed by a signal ({:?}):\n{stderr}", done.status));
    }
    let lines: Vec<&str> = stderr.lines().collect();
    if lines.len() != 1 || !lines[0].starts_with("error: ") {
        return Err(format!(
            "expected exactly one 'error: ' line on stderr, got {} lines:\n{stderr}",
            lines.len()
        ));
    }
    Ok(lines[0].to_string())
}

fn one_line_error(done: &Done, what: &str) -> String {
    check_one_line_error(done).unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// Every file under `dir` (recursively) whose name ends in ".tmp".
fn tmp_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    if let Ok(entries) = fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                found.extend(tmp_files(&p));
            } else if p.to_string_lossy().ends_with(".tmp") {
                found.push(p);
            }
        }
    }
    found
}

/// Every command of the program with arguments that make it print, each with the stdin it
/// reads (if any) and the database it needs (a fresh empty folder for `build`).
fn every_command(build_dir: &Path) -> Vec<(String, StdCommand, Option<Vec<u8>>)> {
    let db = db();
    let with_db = |args: &[&str]| {
        let mut c = awari(args);
        c.arg("--db").arg(db);
        c
    };
    let batch: Vec<u8> = std::iter::repeat_n(format!("{EIGHT}\n{OPENING}\n"), 5000)
        .collect::<String>()
        .into_bytes();
    let mut build = awari(&["build", "-q", "--max-seeds", "6", "--db"]);
    build.arg(build_dir);
    vec![
        ("stats".into(), with_db(&["stats", "--histogram"]), None),
        ("probe".into(), with_db(&["probe", EIGHT]), None),
        (
            "probe --json".into(),
            with_db(&["probe", "--json", EIGHT]),
            None,
        ),
        (
            "probe --batch".into(),
            with_db(&["probe", "--batch"]),
            Some(batch),
        ),
        ("moves".into(), awari(&["moves", EIGHT]), None),
        ("pv".into(), with_db(&["pv", EIGHT]), None),
        (
            "verify".into(),
            with_db(&["verify", "--layers", "0..8"]),
            None,
        ),
        ("start".into(), with_db(&["start"]), None),
        ("build".into(), build, None),
        // Printed by clap, which drops a failed write.
        ("--help".into(), awari(&["--help"]), None),
        ("--version".into(), awari(&["--version"]), None),
        ("build --help".into(), awari(&["build", "--help"]), None),
    ]
}

// ---------------------------------------------------------------------------------------
// 1. Closed stdout, full device
// ---------------------------------------------------------------------------------------

/// `awari … | head -c0`: stdout is a pipe whose read end is already closed, so the first
/// write fails (EPIPE). Every command must end quietly: no panic, not exit code 101.
#[test]
fn a_closed_stdout_ends_every_command_without_a_panic() {
    let build_dir = scratch();
    let mut failures = Vec::new();
    for (name, cmd, stdin) in every_command(build_dir.path()) {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        match run_limited(cmd, stdin, Stdio::from(writer), LIMIT) {
            Err(e) => failures.push(format!("{name}: {e}")),
            Ok(done) => {
                if done.status.code() == Some(101) || done.stderr.contains("panicked") {
                    failures.push(format!(
                        "{name}: {:?}, stderr:\n{}",
                        done.status, done.stderr
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} command(s) panicked on a closed stdout:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `awari … >/dev/full`: a write error other than a closed pipe is a one-line error and a
/// non-zero exit, for every command.
#[test]
fn a_full_device_is_a_one_line_error_for_every_command() {
    if !Path::new("/dev/full").exists() {
        panic!("/dev/full is missing: this test needs a Linux /dev");
    }
    let build_dir = scratch();
    let mut failures = Vec::new();
    for (name, cmd, stdin) in every_command(build_dir.path()) {
        let full = fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        match run_limited(cmd, stdin, Stdio::from(full), LIMIT) {
            Err(e) => failures.push(format!("{name}: {e}")),
            Ok(done) => {
                if let Err(e) = check_one_line_error(&done) {
                    failures.push(format!("{name}: {e}"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} command(s) mishandled a full device:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------------------
// 3. A non-UTF-8 byte in a batch
// ---------------------------------------------------------------------------------------

#[test]
fn a_non_utf8_batch_line_is_one_bad_line_and_the_others_are_answered() {
    let good = [EIGHT, OPENING, "0 0 0 0 0 1 0 1 0 1 1 2"];
    let mut input = Vec::new();
    input.extend_from_slice(format!("{}\n{}\n", good[0], good[1]).as_bytes());
    input.extend_from_slice(b"1 1 1 1 \xff\xfe 1 1 1 1 1 1 1\n");
    input.extend_from_slice(format!("{}\n", good[2]).as_bytes());
    let out = Command::new(awari_bin())
        .args(["probe", "--batch", "--db"])
        .arg(db())
        .write_stdin(input)
        .timeout(LIMIT)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!out.status.success(), "a bad line makes the exit non-zero");
    assert!(out.status.code().is_some(), "{:?}", out.status);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines.len(),
        4,
        "one output line per input line; stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(lines[2].starts_with("error: line 3: "), "{}", lines[2]);
    let db = Database::open(db(), Rules::AWARI).unwrap();
    for (line, text) in [lines[0], lines[1], lines[3]].into_iter().zip(good) {
        let value: i8 = text
            .parse::<Board>()
            .map(|b| db.value(&b).unwrap())
            .unwrap();
        let first = line.split_whitespace().next().unwrap_or("");
        assert_eq!(first, value.to_string(), "answer to '{text}': {line}");
    }
}

// ---------------------------------------------------------------------------------------
// 4. --captured
// ---------------------------------------------------------------------------------------

#[test]
fn captured_counts_and_the_board_add_up_to_at_most_48_seeds() {
    for captured in [
        "0,4294967295",
        "4294967295,4294967295",
        "30,30",
        "37,0",
        "0,37",
    ] {
        let done = run_db(db(), &["probe", "--captured", captured, OPENING]).unwrap();
        one_line_error(
            &done,
            &format!("probe --captured {captured} (12 seeds on the board)"),
        );
    }
    // The limit itself is accepted: 36 captured + 12 on the board.
    let done = run_db(db(), &["probe", "--captured", "20,16", OPENING]).unwrap();
    assert!(done.status.success(), "--captured 20,16: {}", done.stderr);
}

// ---------------------------------------------------------------------------------------
// 5. A FIFO named like a layer
// ---------------------------------------------------------------------------------------

#[test]
fn a_fifo_named_like_a_layer_is_refused_not_waited_on() {
    let dir = copy_db(8);
    let fifo = layer_path(dir.path(), 9);
    let made = StdCommand::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success(), "mkfifo failed");
    let commands = [
        vec!["probe", EIGHT],
        vec!["stats"],
        vec!["verify"],
        vec!["build", "-q", "--max-seeds", "9"],
    ];
    // All at once: today each one hangs until the time limit.
    let failures: Vec<String> = thread::scope(|s| {
        let running: Vec<_> = commands
            .iter()
            .map(|args| {
                let dir = dir.path();
                s.spawn(move || {
                    let name = args.join(" ");
                    match run_db(dir, args) {
                        Err(e) => Some(format!("{name}: {e}")),
                        Ok(done) => match check_one_line_error(&done) {
                            Err(e) => Some(format!("{name}: {e}")),
                            Ok(line) if !line.contains("layer-09.awdb") => {
                                Some(format!("{name}: the error does not name the file: {line}"))
                            }
                            Ok(_) => None,
                        },
                    }
                })
            })
            .collect();
        running
            .into_iter()
            .filter_map(|t| t.join().unwrap())
            .collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---------------------------------------------------------------------------------------
// 6. Two builds into one folder
// ---------------------------------------------------------------------------------------

#[test]
fn a_second_build_into_the_same_folder_is_refused_while_the_first_runs() {
    let dir = scratch();
    let mut first = spawn_db(
        dir.path(),
        &["build", "-q", "--max-seeds", "14"],
        Stdio::piped(),
    );
    // Wait until the first build is under way (its first layer is on disk).
    common::wait_for(&mut first, LIMIT, "the first build wrote layer 0", || {
        layer_path(dir.path(), 0).exists()
    });
    let second = run_db(dir.path(), &["build", "-q", "--max-seeds", "14"]);
    let first_still_running = first.try_wait().unwrap().is_none();
    let first_status = first.wait().unwrap();
    let mut first_err = String::new();
    first
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut first_err)
        .unwrap();
    let second = second.unwrap();
    let line = one_line_error(&second, "the second build");
    let lower = line.to_lowercase();
    assert!(
        lower.contains("lock") || lower.contains("in use"),
        "the second build must say the folder is locked / in use: {line}"
    );
    assert!(
        first_still_running,
        "the first build ended before the second was refused; make the first build longer"
    );
    assert!(
        first_status.success(),
        "the first build failed:\n{first_err}"
    );
    assert!(
        tmp_files(dir.path()).is_empty(),
        "{:?}",
        tmp_files(dir.path())
    );
    let verify = run_limited(
        {
            let mut c = awari(&["verify", "--db"]);
            c.arg(dir.path());
            c
        },
        None,
        Stdio::piped(),
        Duration::from_secs(60),
    )
    .unwrap();
    assert!(
        verify.status.success(),
        "verify after the two builds:\n{}{}",
        verify.stdout,
        verify.stderr
    );
}

// ---------------------------------------------------------------------------------------
// 7. Failed writes, OS errors, what is echoed
// ---------------------------------------------------------------------------------------

/// A write that fails part-way (the file-size limit, `ulimit -f`, with SIGXFSZ ignored so
/// the write returns EFBIG, as on a full disk) leaves no `.tmp` behind, and the error is
/// one line that neither repeats the OS cause nor calls the file damaged.
#[test]
fn a_write_that_fails_part_way_leaves_no_tmp_and_one_clear_error() {
    let dir = scratch();
    let mut cmd = StdCommand::new("sh");
    // 40 blocks of 512 bytes: layers up to 7 fit, layer 8 (about 21 kB) does not.
    cmd.arg("-c")
        .arg("trap '' XFSZ; ulimit -f 40; exec \"$0\" build -q --max-seeds 9 --db \"$1\"")
        .arg(awari_bin())
        .arg(dir.path());
    let done = run_limited(cmd, None, Stdio::null(), LIMIT).unwrap();
    let line = one_line_error(&done, "build under a file-size limit");
    assert!(
        tmp_files(dir.path()).is_empty(),
        "a partial file is left behind: {:?} ({line})",
        tmp_files(dir.path())
    );
    assert_eq!(
        line.matches("os error").count(),
        1,
        "the OS cause once: {line}"
    );
    assert!(!line.contains("damaged"), "not corruption: {line}");
    assert!(
        layer_path(dir.path(), 0).exists(),
        "the small layers were written before the failure ({line})"
    );
}

/// `--db` under a regular file: the OS cause (ENOTDIR) is printed once, for every command
/// that opens the database.
#[test]
fn an_os_error_is_printed_once() {
    let dir = scratch();
    let file = dir.path().join("plain-file");
    fs::write(&file, b"not a folder").unwrap();
    let under = file.join("db");
    let mut failures = Vec::new();
    for args in [
        vec!["build", "-q", "--max-seeds", "3"],
        vec!["probe", EIGHT],
        vec!["stats"],
        vec!["verify"],
    ] {
        let done = run_db(&under, &args).unwrap();
        match check_one_line_error(&done) {
            Err(e) => failures.push(format!("{}: {e}", args[0])),
            Ok(line) if line.matches("os error").count() > 1 => {
                failures.push(format!("{}: the OS cause twice: {line}", args[0]))
            }
            Ok(_) => {}
        }
    }
    // At least `build` must meet an OS error here (it creates the folder).
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A layer the build cannot read for a reason that is not corruption (permission denied)
/// is not called damaged. Root ignores permissions, so as root the build runs as `nobody`
/// through `setpriv`.
#[test]
fn build_does_not_call_an_unreadable_layer_damaged() {
    use std::os::unix::fs::PermissionsExt;
    let dir = copy_db(6);
    let is_root = StdCommand::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    let locked = layer_path(dir.path(), 5);
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
    let cmd = if is_root {
        // `nobody` must be able to reach the folder and write in it.
        let mut p = dir.path().to_path_buf();
        loop {
            let mode = fs::metadata(&p).unwrap().permissions().mode();
            fs::set_permissions(&p, fs::Permissions::from_mode(mode | 0o755)).unwrap();
            if p.file_name().is_some_and(|n| n == "awari-hardening-tests") || !p.pop() {
                break;
            }
        }
        let awari_dir = dir.path().join("awari");
        fs::set_permissions(&awari_dir, fs::Permissions::from_mode(0o777)).unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o777)).unwrap();
        let mut c = StdCommand::new("setpriv");
        c.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            awari_bin(),
            "build",
            "-q",
            "--max-seeds",
            "7",
            "--db",
        ])
        .arg(dir.path());
        c
    } else {
        let mut c = awari(&["build", "-q", "--max-seeds", "7", "--db"]);
        c.arg(dir.path());
        c
    };
    let done = run_limited(cmd, None, Stdio::null(), LIMIT).unwrap();
    assert!(
        !done.stderr.contains("setpriv:"),
        "setpriv could not run the build: {}",
        done.stderr
    );
    let line = one_line_error(&done, "build over an unreadable layer");
    assert!(
        line.contains("layer-05.awdb"),
        "the error names the file: {line}"
    );
    assert!(
        !line.to_lowercase().contains("damaged"),
        "a permission error is not damage: {line}"
    );
    assert!(
        line.matches("os error").count() <= 1,
        "the OS cause once: {line}"
    );
}

/// A board with a newline in it cannot forge a second `error:` line; a huge bad board is
/// not echoed whole.
#[test]
fn what_is_echoed_from_bad_input_is_one_short_line() {
    let forged = "1 2\nerror: forged";
    for args in [
        vec!["probe", forged],
        vec!["pv", forged],
        vec!["moves", forged],
    ] {
        let done = run_db(db(), &args).unwrap();
        one_line_error(&done, &format!("{} with a newline in the board", args[0]));
    }
    let huge = "7 ".repeat(5_000_000);
    // Linux caps one argument at 128 KiB, so the huge board goes through --batch; a
    // 100 kB argument is the largest that goes on the command line.
    let big_arg = "7 ".repeat(50_000);
    let done = run_db(db(), &["probe", &big_arg]).unwrap();
    let line = one_line_error(&done, "probe with a 100 kB board");
    assert!(
        line.len() < 300,
        "a 100 kB bad board gave a {}-byte message",
        line.len()
    );
    let mut cmd = awari(&["probe", "--batch", "--db"]);
    cmd.arg(db());
    let input = format!("{EIGHT}\n{huge}\n{EIGHT}\n").into_bytes();
    let done = run_limited(cmd, Some(input), Stdio::piped(), LIMIT).unwrap();
    assert!(!done.stderr.contains("panicked"), "{}", done.stderr);
    assert!(!done.status.success());
    let stdout = done.stdout.clone();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "one line per input line");
    assert!(lines[1].starts_with("error: line 2: "), "{:.200}", lines[1]);
    assert!(
        lines[1].len() < 300,
        "a 10 MB bad batch line gave a {}-byte message",
        lines[1].len()
    );
}

// ---------------------------------------------------------------------------------------
// 8. A layer file truncated under an open database
// ---------------------------------------------------------------------------------------

const TRUNCATE_ENV: &str = "AWARI_HARDENING_TRUNCATE_DB";

/// The crash-prone sequence, run in a child process by
/// `a_layer_truncated_after_open_is_an_error_not_a_crash` (a SIGBUS here would kill the
/// whole test binary).
#[test]
#[ignore = "child-process target of a_layer_truncated_after_open_is_an_error_not_a_crash"]
fn truncate_under_an_open_database_child() {
    let Ok(dir) = std::env::var(TRUNCATE_ENV) else {
        return;
    };
    let dir = PathBuf::from(dir);
    let db = Database::open(&dir, Rules::AWARI).unwrap();
    let boards = common::every_board(8);
    let before: Vec<i8> = boards.iter().map(|b| db.value(b).unwrap()).collect();
    let file = fs::OpenOptions::new()
        .write(true)
        .open(layer_path(&dir, 8))
        .unwrap();
    file.set_len(1000).unwrap();
    drop(file);
    db.clear_cache();
    let mut errors = 0;
    for (b, want) in boards.iter().zip(before) {
        match db.value(b) {
            Ok(v) => assert_eq!(v, want, "a wrong value for {b} after the truncation"),
            Err(_) => errors += 1,
        }
    }
    println!("{errors} of {} probes failed cleanly", boards.len());
}

/// The safe API does not crash (SIGBUS) when a layer file shrinks after it was opened: a
/// probe returns the right value or an error.
#[test]
fn a_layer_truncated_after_open_is_an_error_not_a_crash() {
    let dir = copy_db(8);
    let mut cmd = StdCommand::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "truncate_under_an_open_database_child",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(TRUNCATE_ENV, dir.path());
    let done = run_limited(cmd, None, Stdio::piped(), Duration::from_secs(60)).unwrap();
    assert!(
        done.status.success(),
        "the child died ({:?}{}):\n{}\n{}",
        done.status,
        {
            use std::os::unix::process::ExitStatusExt;
            done.status
                .signal()
                .map(|s| format!(", signal {s}"))
                .unwrap_or_default()
        },
        done.stdout,
        done.stderr
    );
    assert!(
        done.stdout.contains("probes failed cleanly"),
        "the child did not run the sequence:\n{}",
        done.stdout
    );
}

// ---------------------------------------------------------------------------------------
// 9. Small things
// ---------------------------------------------------------------------------------------

/// When `start` suggests a build, `build` accepts that suggestion's --max-seeds.
#[test]
fn start_suggests_only_a_build_that_build_accepts() {
    let dir = copy_db(8);
    for per_pit in 1..=4u8 {
        let done = run_db(
            dir.path(),
            &["start", "--seeds-per-pit", &per_pit.to_string()],
        )
        .unwrap();
        let line = one_line_error(&done, &format!("start --seeds-per-pit {per_pit}"));
        let Some(at) = line.find("--max-seeds ") else {
            continue;
        };
        let n: u32 = line[at + "--max-seeds ".len()..]
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap();
        // Ask build with a memory limit of almost nothing: an accepted --max-seeds fails
        // on memory (or builds nothing), a refused one fails on the number itself.
        let build = run_db(
            dir.path(),
            &[
                "build",
                "-q",
                "--max-seeds",
                &n.to_string(),
                "--memory-limit",
                "0.000001",
            ],
        )
        .unwrap();
        let err = one_line_error(&build, "the suggested build (with a tiny memory limit)");
        assert!(
            err.contains("memory"),
            "start --seeds-per-pit {per_pit} suggested --max-seeds {n}, which build refuses: {err}"
        );
    }
}

/// Sends SIGINT to `child` (its stderr piped) and waits for it to end, failing if it is
/// still running at `deadline`: its exit status and everything it wrote on stderr.
fn interrupt(
    child: &mut std::process::Child,
    deadline: Instant,
    what: &str,
) -> (std::process::ExitStatus, String) {
    let sent = StdCommand::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let mut err = child.stderr.take().unwrap();
    let reader = thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not stop after SIGINT");
        }
        thread::sleep(Duration::from_millis(20));
    };
    (status, reader.join().unwrap())
}

/// SIGINT during a build: the build says which layer it interrupted and that the next
/// build resumes, and exits non-zero.
#[test]
fn sigint_during_a_build_says_where_it_stopped() {
    let dir = scratch();
    let mut child = spawn_db(
        dir.path(),
        &["build", "-q", "--max-seeds", "18"],
        Stdio::piped(),
    );
    let started = Instant::now();
    common::wait_for(&mut child, LIMIT, "the build wrote layer 10", || {
        layer_path(dir.path(), 10).exists()
    });
    let (status, stderr) = interrupt(&mut child, started + LIMIT * 3, "the build");
    assert!(!status.success(), "an interrupted build exits non-zero");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let lower = stderr.to_lowercase();
    assert!(
        lower.contains("layer") && lower.contains("interrupt") && lower.contains("resume"),
        "stderr must name the interrupted layer and say the next build resumes: {status:?}\n{stderr}"
    );
    let names_a_layer = (11..=18).any(|n| {
        stderr.contains(&format!("layer {n}")) || stderr.contains(&format!("layer-{n:02}"))
    });
    assert!(names_a_layer, "which layer was interrupted: {stderr}");
}

#[test]
fn threads_beyond_reason_is_a_quick_error() {
    let dir = scratch();
    let started = Instant::now();
    let done = run_db(
        dir.path(),
        &["build", "-q", "--max-seeds", "4", "--threads", "100000"],
    )
    .unwrap();
    one_line_error(&done, "build --threads 100000");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    assert!(
        !layer_path(dir.path(), 0).exists(),
        "refused before building anything"
    );
}

#[test]
fn no_arguments_is_a_usage_error() {
    let done = run_limited(awari(&[]), None, Stdio::piped(), LIMIT).unwrap();
    assert!(
        !done.status.success(),
        "awari with no arguments exited {:?}",
        done.status
    );
    assert!(done.status.code().is_some());
    assert!(!done.stderr.contains("panicked"), "{}", done.stderr);
}

// ---------------------------------------------------------------------------------------
// Second round: stderr, bounded input, a closed stdout during a build, Ctrl-C of the
// bounds' build, messages
// ---------------------------------------------------------------------------------------

/// Runs `cmd` with stdin null, stdout discarded and stderr `stderr`, under the time limit.
fn status_with_stderr(mut cmd: StdCommand, stderr: Stdio) -> ExitStatus {
    let what = format!("{cmd:?}");
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap();
    drop(cmd);
    let started = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if started.elapsed() > LIMIT * 3 {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {:?}", LIMIT * 3);
        }
        thread::sleep(Duration::from_millis(20));
    }
}

fn dev_full() -> Stdio {
    Stdio::from(
        fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap(),
    )
}

/// Writes to a full or closed stderr are dropped, never a panic: an error still exits 1, a
/// build (whose lean pass writes its plan to stderr) still succeeds.
#[test]
fn a_full_or_closed_stderr_is_never_a_panic() {
    let mut probe = awari(&["probe", "bad"]);
    probe.arg("--db").arg(db());
    let status = status_with_stderr(probe, dev_full());
    assert_eq!(status.code(), Some(1), "probe bad 2>/dev/full: {status:?}");

    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut stats = awari(&["stats", "--layers", "99"]);
    stats.arg("--db").arg(db());
    let status = status_with_stderr(stats, Stdio::from(writer));
    assert!(
        status.code().is_some() && status.code() != Some(101),
        "stats with stderr a closed pipe: {status:?}"
    );

    let dir = scratch();
    let mut build = awari(&["build", "--lean", "--max-seeds", "7", "--db"]);
    build.arg(dir.path());
    let status = status_with_stderr(build, dev_full());
    assert!(status.success(), "build 2>/dev/full: {status:?}");
    assert!(layer_path(dir.path(), 7).exists());
}

/// `awari build | head -c1`: the reader of the table goes away after the first layer; the
/// build goes on silently to the end (an exit 0 means every layer is built).
#[test]
fn a_build_whose_stdout_closes_builds_every_layer() {
    let dir = scratch();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut build = awari(&["build", "-q", "--max-seeds", "12", "--db"]);
    build.arg(dir.path());
    let done = run_limited(build, None, Stdio::from(writer), LIMIT * 3).unwrap();
    assert!(done.status.success(), "{:?}: {}", done.status, done.stderr);
    let missing: Vec<u32> = (0..=12)
        .filter(|&n| !layer_path(dir.path(), n).exists())
        .collect();
    assert!(
        missing.is_empty(),
        "exit 0 with layers {missing:?} not built"
    );
}

/// SIGINT during `build --cycles bounds`: a message naming the layer, a non-zero exit and
/// no temporary file left, as for the exact tables' build.
#[test]
fn sigint_during_a_bounds_build_says_where_it_stopped_and_leaves_no_tmp() {
    let dir = scratch();
    let mut child = spawn_db(
        dir.path(),
        &["build", "--cycles", "bounds", "-q", "--max-seeds", "16"],
        Stdio::piped(),
    );
    let done = dir.path().join("own-row/awari/layer-10.awhi");
    let started = Instant::now();
    common::wait_for(&mut child, LIMIT * 2, "the build wrote layer 10", || {
        done.exists()
    });
    // Into layer 11, whose files are being written or about to be.
    thread::sleep(Duration::from_millis(200));
    let (status, stderr) = interrupt(&mut child, started + LIMIT * 4, "the bounds' build");
    assert!(
        status.code().is_some_and(|c| c != 0),
        "an exit code, not a signal: {status:?}\n{stderr}"
    );
    assert!(
        stderr.contains("interrupted") && stderr.contains("resumes"),
        "{stderr}"
    );
    assert!(
        (11..=16).any(|n| stderr.contains(&format!("layer {n}"))),
        "{stderr}"
    );
    let left = tmp_files(dir.path());
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

/// `probe --batch` reading endless input (`/dev/zero`: one line without end;
/// `/dev/urandom`: endless short lines) under a 2 GiB address-space limit: still running
/// after 4 s, with its resident memory under 200 MiB.
#[test]
fn endless_input_keeps_probe_batch_memory_flat() {
    for source in ["/dev/zero", "/dev/urandom"] {
        let mut child = StdCommand::new("sh")
            .arg("-c")
            .arg("ulimit -v 2097152 && exec \"$0\" probe --batch --db \"$1\"")
            .arg(awari_bin())
            .arg(db())
            .stdin(Stdio::from(fs::File::open(source).unwrap()))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut peak = 0;
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(4) {
            if let Some(status) = child.try_wait().unwrap() {
                let mut stderr = String::new();
                let _ = child.stderr.take().unwrap().read_to_string(&mut stderr);
                panic!("{source}: ended early, {status:?}: {stderr}");
            }
            peak = peak.max(common::rss_kib(child.id()).unwrap_or(0));
            thread::sleep(Duration::from_millis(100));
        }
        let _ = child.kill();
        let _ = child.wait();
        assert!(peak < 200 << 10, "{source}: {peak} KiB resident");
    }
}

/// `analyze` of an endless file stops with one line, quickly, under a memory limit.
#[test]
fn analyze_of_endless_input_is_a_quick_error() {
    for source in ["/dev/zero", "/dev/urandom"] {
        let mut cmd = StdCommand::new("sh");
        cmd.arg("-c")
            .arg("ulimit -v 2097152 && exec \"$0\" analyze --db \"$1\" \"$2\"")
            .arg(awari_bin())
            .arg(db())
            .arg(source);
        let done = run_limited(cmd, None, Stdio::piped(), LIMIT).unwrap();
        let line = one_line_error(&done, source);
        assert!(line.contains("larger than"), "{source}: {line}");
    }
    // A game file over the cap, from stdin too.
    let mut cmd = awari(&["analyze", "--db"]);
    cmd.arg(db());
    let big = format!("1 2 3 {}", " ".repeat(2 << 20)).into_bytes();
    let done = run_limited(cmd, Some(big), Stdio::piped(), LIMIT).unwrap();
    assert!(one_line_error(&done, "stdin").contains("larger than"));
}

/// A line over the cap is an error of its own (the others are answered), and with --json
/// every line of the answer, errors included, is a JSON object.
#[test]
fn a_long_batch_line_is_an_error_and_json_errors_are_json() {
    let long = "1 ".repeat(3000);
    let input = format!("{EIGHT}\n{long}\nnot a board\n\n{OPENING}\n").into_bytes();
    let out = Command::new(awari_bin())
        .args(["probe", "--batch", "--db"])
        .arg(db())
        .write_stdin(input.clone())
        .timeout(LIMIT)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 5, "{stdout}");
    assert!(
        lines[1].starts_with("error: line 2: line too long"),
        "{}",
        lines[1]
    );
    assert!(lines[2].starts_with("error: line 3: "), "{}", lines[2]);
    assert_eq!(lines[3], "");
    assert!(lines[4].contains("best"), "{}", lines[4]);
    assert_eq!(out.status.code(), Some(1));

    let out = Command::new(awari_bin())
        .args(["probe", "--batch", "--json", "--db"])
        .arg(db())
        .write_stdin(input)
        .timeout(LIMIT)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 5, "{stdout}");
    for (i, line) in lines.iter().enumerate().filter(|(_, l)| !l.is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("line {}: not JSON ({e}): {line}", i + 1));
        if i == 1 || i == 2 {
            assert_eq!(v["line"], serde_json::json!(i + 1), "{line}");
            assert!(v["error"].is_string(), "{line}");
        } else {
            assert!(v["value"].is_i64(), "{line}");
        }
    }
}

/// A key that is not UTF-8 in `awari play` is an unknown key: the game goes on.
#[test]
fn a_non_utf8_key_does_not_end_play() {
    let mut cmd = awari(&["play", "--computer", "none", "--db"]);
    cmd.arg(db());
    let done = run_limited(
        cmd,
        Some(b"\xff\xfe\n1\nq\n".to_vec()),
        Stdio::piped(),
        LIMIT,
    )
    .unwrap();
    assert!(done.status.success(), "{:?}: {}", done.status, done.stderr);
    let stdout = done.stdout.clone();
    assert!(stdout.contains("not UTF-8"), "{stdout}");
    assert!(
        stdout.trim_end().ends_with("1. 1"),
        "the move after the bad key is played: {stdout}"
    );
}

/// Messages that offer a choice offer only what is accepted, and a suggested command works
/// when pasted.
#[test]
fn suggestions_are_accepted_as_offered() {
    let mut cmd = awari(&["play", "--first", "east", "--db"]);
    cmd.arg(db());
    let done = run_limited(cmd, None, Stdio::piped(), LIMIT).unwrap();
    let line = one_line_error(&done, "--first east");
    assert!(line.contains("south") && !line.contains("none"), "{line}");

    let dir = scratch();
    let spaced = dir.path().join("my tables");
    fs::create_dir_all(&spaced).unwrap();
    let done = run_db(&spaced, &["probe", OPENING]).unwrap();
    let line = one_line_error(&done, "probe in a folder with a space");
    let quoted = format!("--db '{}'", spaced.display());
    assert!(line.contains(&quoted), "{line}");
}

/// A bounds layer whose low file is gone while its high file (written last) is still
/// there is built again, both files, as a layer without its distances file is (the build
/// refused it, advising to remove the high file, only for the same build to follow); the
/// files are those of the first build.
#[test]
fn a_missing_bounds_half_is_built_again() {
    let dir = scratch();
    let build = |dir: &Path| {
        let mut cmd = awari(&[
            "build",
            "--cycles",
            "bounds",
            "-q",
            "--max-seeds",
            "8",
            "--db",
        ]);
        cmd.arg(dir);
        run_limited(cmd, None, Stdio::piped(), LIMIT).unwrap()
    };
    assert!(build(dir.path()).status.success());
    let rows = dir.path().join("own-row/awari");
    let low = fs::read(rows.join("layer-05.awlo")).unwrap();
    let high = fs::read(rows.join("layer-05.awhi")).unwrap();
    fs::remove_file(rows.join("layer-05.awlo")).unwrap();
    let done = build(dir.path());
    assert!(done.status.success(), "{}", done.stderr);
    assert_eq!(fs::read(rows.join("layer-05.awlo")).unwrap(), low);
    assert_eq!(fs::read(rows.join("layer-05.awhi")).unwrap(), high);
    let done = run_limited(
        {
            let mut cmd = awari(&["verify", "--cycles", "bounds", "--db"]);
            cmd.arg(dir.path());
            cmd
        },
        None,
        Stdio::piped(),
        LIMIT,
    )
    .unwrap();
    assert!(done.status.success(), "{}", done.stderr);
}

/// A checkpoint whose manifest has a flipped byte (no longer UTF-8) is damage with one
/// remedy, not a bare "stream did not contain valid UTF-8".
#[test]
fn a_flipped_checkpoint_byte_is_damage_with_one_remedy() {
    let dir = scratch();
    let mut child = spawn_db(
        dir.path(),
        &[
            "build",
            "--lean",
            "-q",
            "--checkpoint-minutes",
            "0",
            "--max-seeds",
            "13",
        ],
        Stdio::null(),
    );
    let checkpoint = dir.path().join("awari/lean-13/checkpoint");
    common::wait_for(
        &mut child,
        LIMIT * 6,
        "the lean build of layer 13 saved a checkpoint",
        || checkpoint.exists(),
    );
    let _ = child.kill();
    let _ = child.wait();
    let mut bytes = fs::read(&checkpoint).unwrap();
    bytes[5] = 0xff;
    fs::write(&checkpoint, bytes).unwrap();
    let mut cmd = awari(&["build", "--lean", "-q", "--max-seeds", "13", "--db"]);
    cmd.arg(dir.path());
    let done = run_limited(cmd, None, Stdio::null(), LIMIT * 3).unwrap();
    // The lean pass says its plan first; the error is the last line.
    assert_eq!(done.status.code(), Some(1), "{}", done.stderr);
    assert!(!done.stderr.contains("panicked"), "{}", done.stderr);
    let line = done.stderr.lines().last().unwrap_or("").to_string();
    assert!(line.starts_with("error: "), "{}", done.stderr);
    assert!(line.contains("checkpoint"), "{line}");
    assert!(!line.contains("valid UTF-8"), "{line}");
    assert_eq!(line.matches("remove").count(), 1, "one remedy: {line}");
}

/// A symbolic link loop where a layer or the rules' folder should be: every command says
/// what it is (the system's "Too many levels of symbolic links"), naming the path, rather
/// than "not built" or a failure to create the lock.
#[test]
fn a_symlink_loop_says_what_it_is() {
    // The rules' folder a loop.
    let dir = scratch();
    std::os::unix::fs::symlink("awari", dir.path().join("awari")).unwrap();
    let commands: [&[&str]; 3] = [
        &["probe", EIGHT],
        &["stats"],
        &["build", "-q", "--max-seeds", "3"],
    ];
    for args in commands {
        let done = run_db(dir.path(), args).unwrap();
        let line = one_line_error(&done, &format!("{args:?} over a looping folder"));
        assert!(
            line.contains("symbolic links") && line.contains("awari"),
            "{args:?}: {line}"
        );
    }
    // A layer file a loop.
    let db = copy_db(8);
    let layer = layer_path(db.path(), 8);
    fs::remove_file(&layer).unwrap();
    std::os::unix::fs::symlink("layer-08.awdb", &layer).unwrap();
    for args in [&["probe", EIGHT][..], &["stats"][..]] {
        let done = run_db(db.path(), args).unwrap();
        let line = one_line_error(&done, &format!("{args:?} over a looping layer"));
        assert!(
            line.contains("symbolic links") && line.contains("layer-08"),
            "{args:?}: {line}"
        );
    }
}
