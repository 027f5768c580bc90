//! The scripted hostile run: a seeded, time-bounded campaign of swaps,
//! truncations, flips, kills and endless input against `build`, `probe`, `pv`, `analyze`
//! and `serve`. It looks for four things only: a silent wrong answer (output that differs
//! from the undamaged database's without an error), a panic, a dead listener and unbounded
//! memory.
//!
//! Everything runs the real binary on copies of small databases built once per test
//! binary under Cargo's per-target scratch folder; every child runs under a time limit.
//! The campaign is deterministic: its damages come from a fixed seed (`AWARI_HOSTILE_SEED`
//! picks another one, for a longer hunt by hand). A failure names the seed, the damage, the
//! command and the board.

mod common;

use awari::game::{GameRecord, Side};
use awari::{Board, Rules};
use common::Done;
use std::fs;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// The layers of the reference databases (every preset).
const TOP: u32 = 11;
/// How long one command may run.
const LIMIT: Duration = Duration::from_secs(15);
/// How long one lean build of the killed-build campaign may run. It saves a checkpoint
/// after every round, each synced to disk, so the disk sets its pace: layers 0..=11 built
/// so (debug binary) took 9 to 11 s alone and 19 to 22 s beside another build writing to
/// the same disk, where this campaign's layers 10 and 11 went over [`LIMIT`].
const BUILD_LIMIT: Duration = Duration::from_secs(60);
/// Damages applied by the probe campaign.
const DAMAGES: usize = 40;
/// Kills (and resumes) of a lean build.
const KILLS: usize = 6;
/// The layers the killed lean builds build (the others are copied in).
const LEAN_FROM: u32 = 10;

// ---------------------------------------------------------------------------------------
// A seeded generator
// ---------------------------------------------------------------------------------------

/// SplitMix64: small, deterministic, good enough to pick damages.
struct Rng(u64);

impl Rng {
    fn new(salt: u64) -> Rng {
        Rng(seed() ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

fn seed() -> u64 {
    std::env::var("AWARI_HOSTILE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20)
}

// ---------------------------------------------------------------------------------------
// Fixtures and running children
// ---------------------------------------------------------------------------------------

fn awari_bin() -> &'static str {
    env!("CARGO_BIN_EXE_awari")
}

fn root() -> PathBuf {
    common::scratch_root("awari-hostile-tests")
}

fn scratch() -> TempDir {
    common::scratch_in(&root())
}

/// Layers 0..=TOP of every preset, built once by the CLI (in memory). Never damaged.
fn reference_db() -> &'static Path {
    static DB: OnceLock<PathBuf> = OnceLock::new();
    DB.get_or_init(|| common::build_fixture_of(&root(), &Rules::ALL, TOP))
}

fn table(db: &Path, rules: &str, n: u32, ext: &str) -> PathBuf {
    db.join(rules).join(format!("layer-{n:02}.{ext}"))
}

/// A private copy of the reference's `awari` layers `0..=top`, both kinds of file.
fn copy_db(top: u32) -> TempDir {
    let to = scratch();
    common::copy_layers(reference_db(), to.path(), Rules::AWARI, 0..=top);
    to
}

/// Runs `cmd` with `stdin` (or none), capturing both outputs; `Err` if it is still
/// running after LIMIT (it is then killed).
fn run(cmd: Command, stdin: Option<Vec<u8>>) -> Result<Done, String> {
    common::run_limited(cmd, stdin, Stdio::piped(), LIMIT)
}

/// Runs [`lean_build`] on `db` as [`run`] does, within [`BUILD_LIMIT`].
fn run_build(db: &Path) -> Result<Done, String> {
    common::run_limited(lean_build(db), None, Stdio::piped(), BUILD_LIMIT)
}

fn awari(db: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(awari_bin());
    cmd.args(args).arg("--db").arg(db);
    cmd
}

/// `Err` on a panic or a death by signal.
fn no_panic(done: &Done) -> Result<(), String> {
    if done.stderr.contains("panicked") || done.status.code() == Some(101) {
        return Err(format!("panicked ({}):\n{}", done.status, done.stderr));
    }
    if done.status.code().is_none() {
        return Err(format!(
            "killed by a signal ({}):\n{}",
            done.status, done.stderr
        ));
    }
    Ok(())
}

/// `Err` unless stderr is exactly one line starting with "error: ".
fn one_error_line(done: &Done) -> Result<(), String> {
    let lines: Vec<&str> = done.stderr.lines().collect();
    if lines.len() != 1 || !lines[0].starts_with("error: ") {
        return Err(format!(
            "failed ({}) without exactly one 'error: ' line on stderr:\n{}",
            done.status, done.stderr
        ));
    }
    Ok(())
}

/// A command run on damaged data: no panic, and either its reference output exactly or a
/// failure with one error line (what it printed before failing a prefix of the reference).
fn check_single(done: &Done, reference: &str) -> Result<(), String> {
    no_panic(done)?;
    if done.status.success() {
        if done.stdout != reference {
            return Err(format!(
                "SILENT WRONG ANSWER: succeeded with\n{}\nwhere the undamaged database says\n{reference}",
                done.stdout
            ));
        }
        return Ok(());
    }
    one_error_line(done)?;
    if !reference.starts_with(&done.stdout) {
        return Err(format!(
            "failed, but printed first what the undamaged database does not say:\n{}\nreference:\n{reference}\nstderr: {}",
            done.stdout, done.stderr
        ));
    }
    Ok(())
}

/// `probe --batch` on damaged data: every line its reference line or an error line; fewer
/// lines only on a failure that says so.
fn check_batch(done: &Done, reference: &str) -> Result<(), String> {
    no_panic(done)?;
    let got: Vec<&str> = done.stdout.lines().collect();
    let want: Vec<&str> = reference.lines().collect();
    if got.len() > want.len() {
        return Err(format!("{} lines for {} boards", got.len(), want.len()));
    }
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        if g != w && !g.starts_with("error") {
            return Err(format!(
                "SILENT WRONG ANSWER on batch line {}: {g:?} where the undamaged database says {w:?}",
                k + 1
            ));
        }
    }
    if got.len() < want.len() && (done.status.success() || !done.stderr.contains("error")) {
        return Err(format!(
            "{} lines for {} boards without an error ({}):\n{}",
            got.len(),
            want.len(),
            done.status,
            done.stderr
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// The sample and its reference answers
// ---------------------------------------------------------------------------------------

/// Sample boards over several layers, the reference answers of the undamaged database, and
/// the game files `analyze` reads.
struct Reference {
    boards: Vec<Board>,
    probe: Vec<String>,
    pv: Vec<String>,
    batch_input: Vec<u8>,
    batch: String,
    games: Vec<(PathBuf, String)>,
}

fn reference() -> &'static Reference {
    static REF: OnceLock<Reference> = OnceLock::new();
    REF.get_or_init(|| {
        let db = reference_db();
        let mut boards = Vec::new();
        for (n, salt) in [(3, 1), (5, 2), (7, 3), (8, 4), (9, 5), (10, 6), (11, 7)] {
            boards.extend(common::spread_sample(n, 2, salt));
        }
        let ok = |cmd: Command, stdin: Option<Vec<u8>>, what: &str| {
            let done = run(cmd, stdin).unwrap_or_else(|e| panic!("reference {what}: {e}"));
            assert!(done.status.success(), "reference {what}: {}", done.stderr);
            done.stdout
        };
        let probe = boards
            .iter()
            .map(|b| ok(awari(db, &["probe", &b.to_string()]), None, "probe"))
            .collect();
        let pv = boards
            .iter()
            .map(|b| ok(awari(db, &["pv", &b.to_string()]), None, "pv"))
            .collect();
        let mut batch_input = String::new();
        for b in &boards {
            batch_input.push_str(&format!("{b}\n"));
        }
        let batch = ok(
            awari(db, &["probe", "--batch"]),
            Some(batch_input.clone().into_bytes()),
            "probe --batch",
        );
        // Two games played by "highest pit" from 11- and 9-seed boards, for `analyze`.
        let games_dir = root().join(format!("games-{}", std::process::id()));
        fs::create_dir_all(&games_dir).unwrap();
        let mut games = Vec::new();
        for (k, (n, salt)) in [(TOP, 11), (9, 12)].into_iter().enumerate() {
            let start = common::spread_sample(n, 1, salt)[0];
            let mut record = GameRecord::new(Rules::AWARI, start, Side::South);
            for _ in 0..10 {
                let g = record.replay().unwrap();
                if g.end.is_some() {
                    break;
                }
                let moves = Rules::AWARI.legal_moves(&g.board);
                record.moves.push(moves.as_slice()[moves.len() - 1].pit);
            }
            let path = games_dir.join(format!("game-{k}.txt"));
            fs::write(&path, record.to_string()).unwrap();
            let mut cmd = awari(db, &["analyze"]);
            cmd.arg(&path);
            let answer = ok(cmd, None, "analyze");
            games.push((path, answer));
        }
        Reference {
            boards,
            probe,
            pv,
            batch_input: batch_input.into_bytes(),
            batch,
            games,
        }
    })
}

// ---------------------------------------------------------------------------------------
// Damages to a database's layer files
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Damage {
    /// XOR a byte of a file.
    Flip {
        n: u32,
        ext: &'static str,
        at: u64,
        xor: u8,
    },
    /// Cut a file to a fraction of its length (per mille).
    Truncate {
        n: u32,
        ext: &'static str,
        keep: u64,
    },
    /// Append bytes to a file.
    Append {
        n: u32,
        ext: &'static str,
        garbage: Vec<u8>,
    },
    /// Swap two layers' files of one kind.
    SwapLayers { a: u32, b: u32, ext: &'static str },
    /// Swap a layer's values file with its distances file.
    SwapKinds { n: u32 },
    /// Put another preset's layer (both files) in place of this one.
    OtherPreset { n: u32, rules: &'static str },
    /// Two of the above at once.
    Both(Box<Damage>, Box<Damage>),
}

fn random_damage(rng: &mut Rng, depth: u32) -> Damage {
    let layer = |rng: &mut Rng| {
        // Mostly the layers the sample probes, sometimes the small ones below.
        if rng.below(4) == 0 {
            rng.below(u64::from(TOP) + 1) as u32
        } else {
            3 + rng.below(u64::from(TOP) - 2) as u32
        }
    };
    let ext = |rng: &mut Rng| *rng.pick(&["awdb", "awdb", "awdz"]);
    // Flips count three times: the only damage that can pass the checks made when a
    // layer opens, and so the likeliest to be read as a value.
    match rng.below(if depth == 0 { 9 } else { 8 }) {
        0..=2 => Damage::Flip {
            n: layer(rng),
            ext: ext(rng),
            at: rng.next(),
            xor: 1 + rng.below(255) as u8,
        },
        3 => Damage::Truncate {
            n: layer(rng),
            ext: ext(rng),
            keep: rng.below(1000),
        },
        4 => Damage::Append {
            n: layer(rng),
            ext: ext(rng),
            garbage: (0..1 + rng.below(5000)).map(|_| rng.next() as u8).collect(),
        },
        5 => {
            let a = layer(rng);
            let mut b = layer(rng);
            if b == a {
                b = if a == 0 { 1 } else { a - 1 };
            }
            Damage::SwapLayers {
                a,
                b,
                ext: ext(rng),
            }
        }
        6 => Damage::SwapKinds { n: layer(rng) },
        7 => Damage::OtherPreset {
            n: layer(rng),
            rules: ["abapa", "grand-slam-captures"][rng.below(2) as usize],
        },
        _ => Damage::Both(
            Box::new(random_damage(rng, 1)),
            Box::new(random_damage(rng, 1)),
        ),
    }
}

fn swap_files(a: &Path, b: &Path) {
    let tmp = a.with_extension("swap");
    fs::rename(a, &tmp).unwrap();
    fs::rename(b, a).unwrap();
    fs::rename(&tmp, b).unwrap();
}

/// Applies `damage` to the `awari` layers of `db`; a short text for messages.
fn apply(damage: &Damage, db: &Path) -> String {
    let file = |n: u32, ext: &str| table(db, "awari", n, ext);
    match damage {
        Damage::Flip { n, ext, at, xor } => {
            let path = file(*n, ext);
            let mut bytes = fs::read(&path).unwrap();
            let at = (*at % bytes.len() as u64) as usize;
            bytes[at] ^= xor;
            fs::write(&path, &bytes).unwrap();
            format!(
                "layer-{n:02}.{ext}: byte {at} of {} XOR {xor:#04x}",
                bytes.len()
            )
        }
        Damage::Truncate { n, ext, keep } => {
            let path = file(*n, ext);
            let len = fs::metadata(&path).unwrap().len();
            let to = len * keep / 1000;
            fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .unwrap()
                .set_len(to)
                .unwrap();
            format!("layer-{n:02}.{ext}: truncated from {len} to {to} bytes")
        }
        Damage::Append { n, ext, garbage } => {
            let path = file(*n, ext);
            fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .unwrap()
                .write_all(garbage)
                .unwrap();
            format!("layer-{n:02}.{ext}: {} bytes appended", garbage.len())
        }
        Damage::SwapLayers { a, b, ext } => {
            swap_files(&file(*a, ext), &file(*b, ext));
            format!("layer-{a:02}.{ext} and layer-{b:02}.{ext} swapped")
        }
        Damage::SwapKinds { n } => {
            swap_files(&file(*n, "awdb"), &file(*n, "awdz"));
            format!("layer-{n:02}.awdb and layer-{n:02}.awdz swapped")
        }
        Damage::OtherPreset { n, rules } => {
            for ext in ["awdb", "awdz"] {
                fs::copy(table(reference_db(), rules, *n, ext), file(*n, ext)).unwrap();
            }
            format!("layer {n} replaced by {rules}'s")
        }
        Damage::Both(a, b) => format!("{} + {}", apply(a, db), apply(b, db)),
    }
}

// ---------------------------------------------------------------------------------------
// The campaign
// ---------------------------------------------------------------------------------------

/// Seeded damages to a copy of the database; after each, `probe` (single and `--batch`),
/// `pv` and `analyze` on the sample give their reference answers or fail with one error
/// line — never a different answer, never a panic.
#[test]
fn damaged_databases_never_answer_wrong_or_panic() {
    let reference = reference();
    let mut rng = Rng::new(1);
    let mut failures = Vec::new();
    for k in 0..DAMAGES {
        let damage = random_damage(&mut rng, 0);
        let dir = copy_db(TOP);
        let db = dir.path();
        let what = apply(&damage, db);
        let mut check = |command: String, result: Result<(), String>| {
            if let Err(e) = result {
                failures.push(format!(
                    "seed {} damage {k} ({what}), `{command}`: {e}",
                    seed()
                ));
            }
        };
        for (i, b) in reference.boards.iter().enumerate() {
            let board = b.to_string();
            let probe = run(awari(db, &["probe", &board]), None)
                .and_then(|d| check_single(&d, &reference.probe[i]));
            check(format!("probe '{board}'"), probe);
            let pv = run(awari(db, &["pv", &board]), None)
                .and_then(|d| check_single(&d, &reference.pv[i]));
            check(format!("pv '{board}'"), pv);
        }
        let batch = run(
            awari(db, &["probe", "--batch"]),
            Some(reference.batch_input.clone()),
        )
        .and_then(|d| check_batch(&d, &reference.batch));
        check("probe --batch (the sample)".into(), batch);
        for (path, answer) in &reference.games {
            let mut cmd = awari(db, &["analyze"]);
            cmd.arg(path);
            let analyzed = run(cmd, None).and_then(|d| check_single(&d, answer));
            check(format!("analyze {}", path.display()), analyzed);
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

// ---------------------------------------------------------------------------------------
// Kills of a lean build
// ---------------------------------------------------------------------------------------

fn lean_build(db: &Path) -> Command {
    let mut cmd = Command::new(awari_bin());
    cmd.args(["build", "-q", "--lean", "--checkpoint-minutes", "0"])
        .args(["--lean-buffer-mib", "0.25", "--max-seeds", &TOP.to_string()])
        .arg("--db")
        .arg(db);
    cmd
}

/// Every file directly under the lean scratch folders of `db`, sorted.
fn scratch_files(db: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(db.join("awari")).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("lean-") && entry.path().is_dir() {
            for f in fs::read_dir(entry.path()).unwrap().flatten() {
                if f.path().is_file() {
                    files.push(f.path());
                }
            }
        }
    }
    files.sort();
    files
}

fn remove_scratch(db: &Path) {
    for entry in fs::read_dir(db.join("awari")).unwrap().flatten() {
        if entry.file_name().to_string_lossy().starts_with("lean-") {
            fs::remove_dir_all(entry.path()).unwrap();
        }
    }
}

/// `Err` unless every layer file of `db` is the reference's, byte for byte, and no
/// scratch is left.
fn same_as_reference(db: &Path) -> Result<(), String> {
    for n in 0..=TOP {
        for ext in ["awdb", "awdz"] {
            let want = fs::read(table(reference_db(), "awari", n, ext)).unwrap();
            match fs::read(table(db, "awari", n, ext)) {
                Ok(got) if got == want => {}
                Ok(_) => return Err(format!("layer-{n:02}.{ext} differs from the reference")),
                Err(e) => return Err(format!("layer-{n:02}.{ext}: {e}")),
            }
        }
    }
    let left = scratch_files(db);
    if !left.is_empty() {
        return Err(format!("scratch left behind: {left:?}"));
    }
    Ok(())
}

/// A lean build of the top layers killed (SIGKILL) at seeded moments, its scratch then
/// sometimes damaged (a flip, a truncation, two files swapped, one copied over another),
/// and resumed: the resume either refuses with one error line, or finishes with files
/// byte for byte the in-memory build's. After a refusal, removing the scratch recovers.
#[test]
fn killed_and_damaged_lean_builds_resume_right_or_refuse() {
    let mut rng = Rng::new(2);
    let mut failures = Vec::new();
    for k in 0..KILLS {
        let dir = copy_db(LEAN_FROM - 1);
        let db = dir.path();
        let delay = Duration::from_millis(100 + rng.below(2500));
        let mut child: Child = lean_build(db)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while started.elapsed() < delay && child.try_wait().unwrap().is_none() {
            thread::sleep(Duration::from_millis(5));
        }
        let _ = child.kill();
        child.wait().unwrap();
        let files = scratch_files(db);
        let damage = if files.is_empty() {
            "no scratch to damage".to_string()
        } else {
            let a = rng.pick(&files).clone();
            let b = rng.pick(&files).clone();
            let short = |p: &Path| {
                p.strip_prefix(db.join("awari"))
                    .unwrap()
                    .display()
                    .to_string()
            };
            match rng.below(5) {
                0 => "none".to_string(),
                1 => {
                    let mut bytes = fs::read(&a).unwrap();
                    if bytes.is_empty() {
                        "none (empty file)".to_string()
                    } else {
                        let at = rng.below(bytes.len() as u64) as usize;
                        bytes[at] ^= 1 + rng.below(255) as u8;
                        fs::write(&a, &bytes).unwrap();
                        format!("{}: byte {at} flipped", short(&a))
                    }
                }
                2 => {
                    let len = fs::metadata(&a).unwrap().len();
                    let to = rng.below(len.max(1));
                    fs::OpenOptions::new()
                        .write(true)
                        .open(&a)
                        .unwrap()
                        .set_len(to)
                        .unwrap();
                    format!("{}: truncated from {len} to {to}", short(&a))
                }
                3 if a != b => {
                    swap_files(&a, &b);
                    format!("{} and {} swapped", short(&a), short(&b))
                }
                _ if a != b => {
                    fs::copy(&b, &a).unwrap();
                    format!("{} copied over {}", short(&b), short(&a))
                }
                _ => "none (one file)".to_string(),
            }
        };
        let what = format!(
            "seed {} kill {k} after {delay:?} ({} scratch files), damage: {damage}",
            seed(),
            files.len()
        );
        let resumed = match run_build(db) {
            Err(e) => Err(e),
            Ok(d) => no_panic(&d).and_then(|()| {
                if d.status.success() {
                    same_as_reference(db)
                } else {
                    let errors: Vec<&str> = d
                        .stderr
                        .lines()
                        .filter(|l| l.starts_with("error"))
                        .collect();
                    if errors.len() == 1 {
                        // Refused: removing the scratch must recover the build.
                        remove_scratch(db);
                        match run_build(db) {
                            Ok(d) if d.status.success() => same_as_reference(db),
                            Ok(d) => Err(format!("rebuild after the refusal failed: {}", d.stderr)),
                            Err(e) => Err(format!("rebuild after the refusal: {e}")),
                        }
                    } else {
                        Err(format!(
                            "resume failed without one error line:\n{}",
                            d.stderr
                        ))
                    }
                }
            }),
        };
        if let Err(e) = resumed {
            failures.push(format!("{what}: {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

// ---------------------------------------------------------------------------------------
// Endless input
// ---------------------------------------------------------------------------------------

/// `probe --batch` on a damaged database, fed `/dev/urandom` and `/dev/zero` for two
/// seconds under a 2 GB address-space limit: still running with flat memory, or ended with
/// an error — never killed by the limit, never a panic.
#[test]
fn endless_input_to_a_damaged_database_stays_bounded() {
    let mut rng = Rng::new(3);
    let dir = copy_db(TOP);
    let what = apply(&random_damage(&mut rng, 0), dir.path());
    for source in ["/dev/urandom", "/dev/zero"] {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg("ulimit -v 2000000; exec \"$0\" probe --batch --db \"$1\"")
            .arg(awari_bin())
            .arg(dir.path())
            .stdin(Stdio::from(fs::File::open(source).unwrap()))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Keep only the tail of stderr (it may be long), so the child never blocks on it.
        let mut err = child.stderr.take().unwrap();
        let tail = thread::spawn(move || {
            let mut keep = Vec::new();
            let mut buf = [0u8; 8192];
            let mut panicked = false;
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                keep.extend_from_slice(&buf[..n]);
                panicked |= String::from_utf8_lossy(&keep).contains("panicked");
                if keep.len() > 1 << 16 {
                    keep.drain(..keep.len() - 4096);
                }
            }
            (panicked, String::from_utf8_lossy(&keep).into_owned())
        });
        let mut peak = 0;
        let started = Instant::now();
        let mut ended = None;
        while started.elapsed() < Duration::from_secs(2) {
            if let Some(status) = child.try_wait().unwrap() {
                ended = Some(status);
                break;
            }
            peak = peak.max(common::rss_kib(child.id()).unwrap_or(0));
            thread::sleep(Duration::from_millis(50));
        }
        // Ended or not, it is reaped here (killing one that ended does nothing).
        let _ = child.kill();
        let _ = child.wait();
        let (panicked, stderr) = tail.join().unwrap();
        let ctx = format!("seed {} damage ({what}), probe --batch < {source}", seed());
        assert!(!panicked, "{ctx}: panicked:\n{stderr}");
        if let Some(status) = ended {
            let code = status.code();
            assert!(
                code.is_some_and(|c| c != 0 && c != 101),
                "{ctx}: ended with {status}, not an error exit:\n{stderr}"
            );
        }
        assert!(peak < 200 << 10, "{ctx}: {peak} KiB resident");
    }
}

// ---------------------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------------------

/// One exchange: `request` sent (then our write side closed), the whole answer read.
fn exchange(addr: &str, request: &[u8]) -> Result<String, String> {
    let mut s = TcpStream::connect_timeout(&addr.parse().unwrap(), Duration::from_secs(5))
        .map_err(|e| format!("connect: {e}"))?;
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = s.write_all(request);
    let _ = s.shutdown(std::net::Shutdown::Write);
    let mut answer = Vec::new();
    s.read_to_end(&mut answer)
        .map_err(|e| format!("read: {e}"))?;
    Ok(String::from_utf8_lossy(&answer).into_owned())
}

fn status_of(answer: &str) -> Option<u16> {
    answer.split_whitespace().nth(1)?.parse().ok()
}

/// A running server, killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `awari serve` on `db` and its address, or what it left if it ended before listening.
fn start_serve(db: &Path) -> Result<(Server, String), Done> {
    let mut child = Command::new(awari_bin())
        .args(["serve", "--port", "0", "--think-ms", "200", "--db"])
        .arg(db)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = child.stderr.take().unwrap();
    let stderr = thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        String::from_utf8_lossy(&v).into_owned()
    });
    match common::serve_address(&mut child.stdout.take().unwrap()) {
        Ok(addr) => Ok((Server(child), addr)),
        Err(first) => {
            let _ = child.kill();
            let status = child.wait().unwrap();
            Err(Done {
                status,
                stdout: first,
                stderr: stderr.join().unwrap(),
            })
        }
    }
}

/// `awari serve` on a damaged database: probes of damaged and whole layers, garbage,
/// half requests, a computer move — every request is answered, no answer carries the
/// local database path, and a plain request is served after each one.
#[test]
fn a_server_on_a_damaged_database_answers_everything() {
    let mut rng = Rng::new(4);
    let reference = reference();
    // A damage found when the tables open (a layer's size, its header) may stop the
    // server before it listens, with one error line; the damages are drawn again until one
    // starts, the last try only flipping bytes inside layers the sample probes.
    const TRIES: usize = 4;
    let mut started = None;
    for t in 0..TRIES {
        let dir = copy_db(TOP);
        let mut what = Vec::new();
        if t + 1 < TRIES {
            for _ in 0..3 {
                what.push(apply(&random_damage(&mut rng, 1), dir.path()));
            }
        }
        for n in [9, 10] {
            let size = fs::metadata(table(dir.path(), "awari", n, "awdb"))
                .unwrap()
                .len();
            let flip = Damage::Flip {
                n,
                ext: "awdb",
                at: size / 4 + rng.below(size / 2),
                xor: 0xA5,
            };
            what.push(apply(&flip, dir.path()));
        }
        let what = what.join(" + ");
        match start_serve(dir.path()) {
            Ok((server, addr)) => {
                started = Some((dir, what, server, addr));
                break;
            }
            Err(done) => {
                let ctx = format!("seed {} serve on damage ({what})", seed());
                no_panic(&done).unwrap_or_else(|e| panic!("{ctx}: {e}"));
                one_error_line(&done).unwrap_or_else(|e| panic!("{ctx}: {e}"));
            }
        }
    }
    let Some((dir, what, mut server, addr)) = started else {
        panic!("seed {}: no damaged database served", seed());
    };
    let db = dir.path();
    let get =
        |path: &str| format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    let plain = get("/");
    let db_text = db.display().to_string();
    let mut requests: Vec<(String, Vec<u8>)> = Vec::new();
    for b in &reference.boards {
        let board = b.to_string().replace(' ', "+");
        requests.push((
            format!("position {b}"),
            get(&format!("/api/position?board={board}")).into_bytes(),
        ));
    }
    let b = reference.boards[reference.boards.len() - 3]
        .to_string()
        .replace(' ', "+");
    requests.push((
        "computer move".into(),
        get(&format!("/api/move?board={b}&level=5")).into_bytes(),
    ));
    requests.push((
        "game".into(),
        get(&format!("/api/game?game=start+{b}%0A1.+6")).into_bytes(),
    ));
    for k in 0..4 {
        let len = 1 + rng.below(3000);
        let garbage: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        requests.push((format!("garbage {k} ({len} bytes)"), garbage));
    }
    requests.push(("half a request".into(), b"GET /api/position?bo".to_vec()));
    requests.push((
        "a request line of 100 KB".into(),
        format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(100_000)).into_bytes(),
    ));
    for (name, request) in &requests {
        let ctx = format!("seed {} serve on damage ({what}), request {name}", seed());
        let answer = exchange(&addr, request).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        let status = status_of(&answer);
        // Garbage may be dropped without an answer; anything that looks like HTTP gets one.
        if request.starts_with(b"GET /api") && request.ends_with(b"\r\n\r\n") {
            assert!(status.is_some(), "{ctx}: no answer: {answer:?}");
        }
        assert!(
            !answer.contains(&db_text),
            "{ctx}: the answer ({status:?}) shows the database path:\n{answer}"
        );
        let served =
            exchange(&addr, plain.as_bytes()).unwrap_or_else(|e| panic!("{ctx}: then {e}"));
        assert_eq!(
            status_of(&served),
            Some(200),
            "{ctx}: a plain request is not served after it: {served:?}"
        );
    }
    assert!(
        server.0.try_wait().unwrap().is_none(),
        "seed {}: the server ended",
        seed()
    );
}

// ---------------------------------------------------------------------------------------
// The smaller edges
// ---------------------------------------------------------------------------------------

/// A build started with stdout and stderr closed: a lock file opened on the number of a
/// closed stream would receive the build's lines. Rust's runtime reopens closed standard
/// streams on /dev/null before `main`, so the lock file holds the holder's line alone and
/// the build succeeds; this holds it so.
#[test]
fn a_build_with_its_standard_streams_closed_writes_nothing_into_its_lock_file() {
    use std::os::unix::process::CommandExt;
    let dir = scratch();
    let mut cmd = Command::new(awari_bin());
    cmd.args(["build", "--max-seeds", "6", "--db"])
        .arg(dir.path());
    // SAFETY: only `close`, which is async-signal-safe, between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::close(1);
            libc::close(2);
            Ok(())
        });
    }
    let status = cmd.stdin(Stdio::null()).status().unwrap();
    assert!(status.success(), "{status:?}");
    let lock = fs::read_to_string(dir.path().join("awari").join("build.lock")).unwrap();
    assert!(
        lock.starts_with("process ") && lock["process ".len()..].parse::<u32>().is_ok(),
        "{lock:?}"
    );
}

/// Damages a scratch file of layer `layer` at its first checkpoint: the exits file of
/// threshold 1, which the pass reads last, cut to half its length.
struct DamageAtFirstCheckpoint {
    db: PathBuf,
    layer: u32,
    done: std::sync::atomic::AtomicBool,
}

impl awari::SolveObserver for DamageAtFirstCheckpoint {}
impl awari::LeanObserver for DamageAtFirstCheckpoint {
    fn checkpoint(&self, seeds: u32, _threshold: u32, _rounds: usize, _took: Duration) {
        use std::sync::atomic::Ordering;
        if seeds != self.layer || self.done.swap(true, Ordering::SeqCst) {
            return;
        }
        let path =
            awari::solve::lean::scratch_dir(&self.db, Rules::AWARI, seeds).join("exits-01.run");
        let len = fs::metadata(&path).unwrap().len();
        assert!(len > 1, "{} is empty: nothing to damage", path.display());
        fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(len / 2)
            .unwrap();
    }
}
impl awari::BuildObserver for DamageAtFirstCheckpoint {}

/// Follows the remedy an error line gives, literally: "remove the folder X to …" removes
/// X, "remove the damaged file …" removes the file the line starts with.
fn follow_advice(line: &str) -> Result<String, String> {
    if let Some((_, rest)) = line.split_once("remove the folder ") {
        let folder = rest
            .split(" to ")
            .next()
            .ok_or_else(|| format!("no folder named: {line}"))?;
        fs::remove_dir_all(folder).map_err(|e| format!("removing {folder}: {e} ({line})"))?;
        return Ok(format!("removed the folder {folder}"));
    }
    if line.contains("remove the damaged file") {
        let file = line
            .trim_start_matches("error: ")
            .split(": ")
            .next()
            .unwrap_or_default();
        fs::remove_file(file).map_err(|e| format!("removing {file}: {e} ({line})"))?;
        return Ok(format!("removed the file {file}"));
    }
    Err(format!("no remedy to follow in: {line}"))
}

/// A scratch file damaged while its lean build runs stops the build with one line whose
/// remedy, followed word for word, lets the next build finish with the reference's files.
/// (Its remedy was to remove the damaged file, after which the checkpoint that names it
/// refused the resume with a second error.)
#[test]
fn the_remedy_for_a_damaged_scratch_file_followed_literally_builds() {
    let dir = copy_db(TOP - 1);
    let db = dir.path();
    let opts = awari::build::BuildOptions {
        pass: awari::build::PassChoice::Lean,
        ..awari::build::BuildOptions::new(db, Rules::AWARI, TOP)
    };
    let observer = DamageAtFirstCheckpoint {
        db: db.to_path_buf(),
        layer: TOP,
        done: Default::default(),
    };
    let err = awari::build::build(&opts, &observer).expect_err("built on a damaged scratch file");
    let line = format!("error: {err}");
    assert!(!line.contains('\n'), "one line: {line}");
    assert!(line.contains("exits-01.run"), "names the file: {line}");
    let followed = follow_advice(&line).unwrap();
    let done = run_build(db).unwrap();
    no_panic(&done).unwrap();
    assert!(
        done.status.success(),
        "after '{line}', {followed}; the build failed:\n{}",
        done.stderr
    );
    same_as_reference(db).unwrap();
}

/// A layer file damaged on disk: the build's remedy (remove the damaged file and build
/// again), followed word for word, ends in the reference's files.
#[test]
fn the_remedy_for_a_damaged_layer_file_followed_literally_builds() {
    let dir = copy_db(TOP);
    let db = dir.path();
    let path = table(db, "awari", 5, "awdb");
    let bytes = fs::read(&path).unwrap();
    fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
    let done = run_build(db).unwrap();
    no_panic(&done).unwrap();
    one_error_line(&done).unwrap();
    let line = done
        .stderr
        .lines()
        .find(|l| l.starts_with("error"))
        .unwrap();
    let followed = follow_advice(line).unwrap();
    let done = run_build(db).unwrap();
    assert!(
        done.status.success(),
        "after '{line}', {followed}; the build failed:\n{}",
        done.stderr
    );
    same_as_reference(db).unwrap();
}

/// Runs the `awari …` command an advice line ends with, word for word (the test's folders
/// have no spaces).
fn run_advised_command(line: &str) -> Done {
    let (_, command) = line
        .split_once(": awari ")
        .unwrap_or_else(|| panic!("no command in: {line}"));
    let mut cmd = Command::new(awari_bin());
    cmd.args(command.split_whitespace());
    run(cmd, None).unwrap()
}

/// A bounds layer, and an own-row layer, whose low file is missing: `stats` says the layer
/// is incomplete and names the missing file (text on stdout, a warning beside the JSON),
/// where it listed the layers below without a word; the build it advises, run word for
/// word, makes the layer whole.
#[test]
fn stats_says_a_layer_whose_low_file_is_missing_is_incomplete() {
    let dir = scratch();
    let db = dir.path();
    for (cycles, top) in [("bounds", "6"), ("own-row-first", "4")] {
        let done = run(
            awari(db, &["build", "-q", "--cycles", cycles, "--max-seeds", top]),
            None,
        )
        .unwrap();
        assert!(done.status.success(), "{}", done.stderr);
    }
    let folder = db.join("own-row").join("awari");
    for (cycles, n, low) in [
        ("bounds", 5, "layer-05.awlo"),
        ("own-row-first", 3, "layer-03.r2lo"),
    ] {
        fs::remove_file(folder.join(low)).unwrap();
        let done = run(awari(db, &["stats", "--cycles", cycles]), None).unwrap();
        no_panic(&done).unwrap();
        assert!(done.status.success(), "{}", done.stderr);
        let line = done
            .stdout
            .lines()
            .find(|l| l.contains("incomplete"))
            .unwrap_or_else(|| {
                panic!(
                    "{cycles}: stats says nothing of layer {n}:\n{}",
                    done.stdout
                )
            });
        assert!(
            line.starts_with(&format!("layer {n:>2}: incomplete")) && line.contains(low),
            "{line}"
        );
        let json = run(awari(db, &["stats", "--cycles", cycles, "--json"]), None).unwrap();
        assert!(json.status.success(), "{}", json.stderr);
        assert!(
            json.stderr.starts_with("warning: ") && json.stderr.contains(low),
            "{}",
            json.stderr
        );
        let built = run_advised_command(line);
        assert!(built.status.success(), "{line}: {}", built.stderr);
        assert!(folder.join(low).exists(), "{line}: {low} not built");
        let done = run(awari(db, &["stats", "--cycles", cycles]), None).unwrap();
        assert!(
            !done.stdout.contains("incomplete") && done.stdout.contains(&format!("layer {n:>2}: ")),
            "{}",
            done.stdout
        );
    }
}

/// A lean build given `--scratch X`, killed after a checkpoint, then run again without
/// `--scratch`: it refuses in one line naming the folder that holds the checkpoint (it
/// started afresh beside it without a word, and that folder stayed); the remedy it gives,
/// run word for word, resumes from the checkpoint, writes the reference's files and
/// leaves no scratch behind.
#[test]
fn a_checkpoint_in_another_scratch_folder_is_not_abandoned_without_a_word() {
    let dir = copy_db(TOP - 1);
    let db = dir.path();
    let elsewhere = scratch();
    let folder = elsewhere
        .path()
        .join("awari")
        .join(format!("lean-{TOP:02}"));
    let mut child = lean_build(db)
        .arg("--scratch")
        .arg(elsewhere.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    common::wait_for(
        &mut child,
        BUILD_LIMIT,
        "it could be killed mid-layer",
        || folder.join("checkpoint").is_file(),
    );
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !table(db, "awari", TOP, "awdb").exists(),
        "killed mid-layer, yet the layer is whole"
    );
    let done = run_build(db).unwrap();
    no_panic(&done).unwrap();
    assert!(
        !done.status.success(),
        "built afresh beside the checkpoint in {}",
        folder.display()
    );
    one_error_line(&done).unwrap();
    let line = done.stderr.lines().next().unwrap();
    assert!(line.contains(&folder.display().to_string()), "{line}");
    // The remedy: the same build given --scratch X.
    let (_, with) = line.split_once("build with --scratch ").unwrap();
    let root = with.split(" to resume").next().unwrap();
    let done = common::run_limited(
        {
            let mut cmd = lean_build(db);
            cmd.args(["--scratch", root]);
            cmd
        },
        None,
        Stdio::piped(),
        BUILD_LIMIT,
    )
    .unwrap();
    assert!(done.status.success(), "{line}: {}", done.stderr);
    same_as_reference(db).unwrap();
    assert!(!folder.exists(), "{} left behind", folder.display());
    assert!(
        !db.join("awari")
            .join(format!("lean-{TOP:02}.scratch"))
            .exists(),
        "the note left behind"
    );
}

/// `awari serve` on `db` with a think time of `think_ms`, and its address.
fn serve_thinking(db: &Path, think_ms: u64) -> (Server, String) {
    let mut child = Command::new(awari_bin())
        .args([
            "serve",
            "--port",
            "0",
            "--think-ms",
            &think_ms.to_string(),
            "--db",
        ])
        .arg(db)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let addr = common::serve_address(&mut child.stdout.take().unwrap()).unwrap();
    (Server(child), addr)
}

/// One GET of `path` (the connection left open until the answer is read), its status and
/// body.
fn get_from(addr: &str, path: &str, limit: Duration) -> Result<(u16, String), String> {
    let mut s = TcpStream::connect_timeout(&addr.parse().unwrap(), Duration::from_secs(5))
        .map_err(|e| format!("connect: {e}"))?;
    s.set_read_timeout(Some(limit)).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = Vec::new();
    s.read_to_end(&mut answer)
        .map_err(|e| format!("{path}: no answer within {limit:?}: {e}"))?;
    let text = String::from_utf8_lossy(&answer).into_owned();
    let status = status_of(&text).ok_or_else(|| format!("no status in {text:?}"))?;
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    Ok((status, body))
}

/// Clients that ask `route` (with `board=` a position above the tables appended: a 30 s
/// search each) and leave at once, as many as the server computes at a time: their
/// searches must stop, so the next client is answered at once (they held every compute
/// slot for their whole think time).
fn searches_whose_clients_left_give_back_their_slots(route: &str) {
    let dir = copy_db(TOP);
    let (_server, addr) = serve_thinking(dir.path(), 30_000);
    let above = Board::opening(4).unwrap().to_string().replace(' ', "+");
    let request =
        format!("GET {route}board={above} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    // More than the server's compute slots (4), each closed once its search has started.
    let leaving: Vec<TcpStream> = (0..6)
        .map(|_| {
            let mut s = TcpStream::connect(&addr).unwrap();
            s.write_all(request.as_bytes()).unwrap();
            s
        })
        .collect();
    thread::sleep(Duration::from_millis(500));
    drop(leaving);
    let started = Instant::now();
    let within = Duration::from_secs(8);
    let below = common::spread_sample(5, 1, 1)[0]
        .to_string()
        .replace(' ', "+");
    let (status, body) = get_from(&addr, &format!("/api/position?board={below}"), within)
        .unwrap_or_else(|e| {
            panic!("{route}: the slots are still held by searches for no one: {e}")
        });
    assert_eq!(status, 200, "{body}");
    assert!(started.elapsed() < within, "{:?}", started.elapsed());
}

#[test]
fn a_search_whose_client_left_gives_back_its_slot() {
    searches_whose_clients_left_give_back_their_slots("/api/position?");
}

/// The same for the computer's move: at `perfect` (the tables, then a search above them)
/// and at a level that searches from the root whatever the tables.
#[test]
fn a_computer_move_whose_client_left_gives_back_its_slot() {
    searches_whose_clients_left_give_back_their_slots("/api/move?level=perfect&");
    searches_whose_clients_left_give_back_their_slots("/api/move?level=expert&");
}

/// A layer built after `serve` started is answered from the tables once it is on disk
/// (within the server's re-check of a second): it was answered by a search with `exact:
/// false` until a restart.
#[test]
fn a_layer_built_after_the_server_started_is_served_exact() {
    let dir = copy_db(TOP - 1);
    let db = dir.path();
    let (_server, addr) = serve_thinking(db, 200);
    let tables = awari::Database::open(reference_db(), Rules::AWARI).unwrap();
    let path = |b: &Board| format!("/api/position?board={}", b.to_string().replace(' ', "+"));
    let limit = Duration::from_secs(10);
    // A board of the new layer that a search does not settle exactly.
    let board = common::spread_sample(TOP, 20, 3)
        .into_iter()
        .find(|b| {
            let (status, body) = get_from(&addr, &path(b), limit).unwrap();
            assert_eq!(status, 200, "{body}");
            body.contains("\"exact\":false")
        })
        .expect("a board of the top layer that a search leaves inexact");
    for ext in ["awdz", "awdb"] {
        fs::copy(
            table(reference_db(), "awari", TOP, ext),
            table(db, "awari", TOP, ext),
        )
        .unwrap();
    }
    thread::sleep(Duration::from_millis(1500));
    let (status, body) = get_from(&addr, &path(&board), limit).unwrap();
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        v["exact"],
        serde_json::json!(true),
        "layer {TOP} not seen: {body}"
    );
    assert_eq!(
        v["value"].as_i64().unwrap(),
        i64::from(tables.value(&board).unwrap()),
        "{body}"
    );
}

/// The peak resident memory of a running process in KiB (VmHWM), from /proc.
fn peak_kib(pid: u32) -> Option<u64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// `probe --batch --json` fed 700,000 good boards as fast as it reads them: its peak
/// memory stays under its groups' bound of 512 MiB (a group of JSON answers is counted at
/// 1 KiB a line, where one costs about 830 bytes while it is answered: about 300 MiB here).
/// (Counted at 256 bytes a line, a group of 524,288 lines once peaked near 400 MB here, and
/// levelled off near 630 MB on layers 0..=24.)
#[test]
fn endless_good_input_to_probe_batch_json_stays_bounded() {
    let dir = scratch();
    let input = dir.path().join("boards.txt");
    let mut text = String::new();
    for n in 1..=TOP {
        for b in common::spread_sample(n, 2_000, u64::from(n)) {
            text.push_str(&b.to_string());
            text.push('\n');
        }
    }
    let lines = text.lines().count();
    let mut file = fs::File::create(&input).unwrap();
    for _ in 0..700_000usize.div_ceil(lines) {
        file.write_all(text.as_bytes()).unwrap();
    }
    drop(file);
    let mut child = Command::new(awari_bin())
        .args(["probe", "--batch", "--json", "--db"])
        .arg(reference_db())
        .stdin(Stdio::from(fs::File::open(&input).unwrap()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut peak = 0;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        peak = peak.max(peak_kib(child.id()).unwrap_or(0));
        if started.elapsed() > Duration::from_secs(300) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still answering after 5 minutes");
        }
        thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
    assert!(peak < 512 << 10, "{peak} KiB resident at the peak");
}
