//! The Oracle's hot paths: `/api/position` over real HTTP for a position in the tables (the
//! page asks this on every move), the same answer from the library, and the search above
//! the tables: nodes per second at a fixed depth, and a think-limited search's wall time.
//!
//! `cargo bench --bench search`. Builds layers 0..=14 of `awari` into a temporary folder
//! first (a few seconds) and starts the `awari serve` binary on a free loopback port.

use awari::build::{build, BuildOptions};
use awari::search::{analyse, Limits};
use awari::{Board, Database, Rules};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

const TOP: u32 = 14;

fn get(addr: &str, path: &str) -> String {
    let mut s = TcpStream::connect(addr).expect("connect");
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut text = String::new();
    s.read_to_string(&mut text).expect("read");
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    text
}

fn bench_search(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    build(
        &BuildOptions::new(dir.path().to_path_buf(), Rules::AWARI, TOP),
        &awari::solve::Quiet,
    )
    .expect("build");
    let sample = common::positions(TOP, 64, 0x5EED);

    // The server, on a free port, killed at the end.
    let mut server = Command::new(env!("CARGO_BIN_EXE_awari"))
        .args(["serve", "--port", "0", "--think-ms", "1000", "--db"])
        .arg(dir.path())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start awari serve");
    let mut line = String::new();
    BufReader::new(server.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("first line");
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .expect("address")
        .to_string();
    let paths: Vec<String> = sample
        .iter()
        .map(|b| {
            format!(
                "/api/position?rules=awari&board={}",
                b.to_string().replace(' ', "+")
            )
        })
        .collect();
    for p in &paths {
        get(&addr, p); // warm: blocks cached
    }

    let mut group = c.benchmark_group("oracle");
    group
        .measurement_time(Duration::from_secs(5))
        .sample_size(20);
    let mut k = 0usize;
    group.bench_function("GET /api/position, exact, hot (HTTP round trip)", |b| {
        b.iter(|| {
            k = (k + 1) % paths.len();
            get(&addr, black_box(&paths[k]))
        })
    });

    let db = Database::open(dir.path(), Rules::AWARI).expect("open");
    let mut k = 0usize;
    group.bench_function("analyse, exact, hot (library)", |b| {
        b.iter(|| {
            k = (k + 1) % sample.len();
            analyse(
                &db,
                black_box(&sample[k]),
                &Limits::think(Duration::from_secs(1)),
            )
            .expect("analyse")
        })
    });

    // Nodes per second: a fixed-depth search of the 48-seed opening (leaves in layers
    // <= 14 looked up), reported by criterion as elements (nodes) per second.
    let opening = Board::opening(4).expect("opening");
    let fixed = Limits {
        think: Duration::from_secs(3600),
        max_depth: 9,
        tables: true,
    };
    let first = analyse(&db, &opening, &fixed).expect("analyse");
    eprintln!(
        "depth {} search of the opening: {} nodes, {:.0} ms, {:.2} M nodes/s",
        first.depth,
        first.nodes,
        first.elapsed.as_secs_f64() * 1e3,
        first.nodes as f64 / first.elapsed.as_secs_f64() / 1e6
    );
    group.throughput(Throughput::Elements(first.nodes));
    group.sample_size(10);
    group.bench_function("search the opening to depth 9 (nodes)", |b| {
        b.iter(|| analyse(&db, black_box(&opening), &fixed).expect("analyse"))
    });

    // Think time respected: the worst of 20 searches limited to 200 ms.
    let think = Duration::from_millis(200);
    let mut worst = Duration::ZERO;
    let mut depths = Vec::new();
    for b in common::positions(TOP + 10, 20, 7) {
        let started = Instant::now();
        let a = analyse(&db, &b, &Limits::think(think)).expect("analyse");
        worst = worst.max(started.elapsed());
        depths.push(a.depth);
    }
    eprintln!(
        "think 200 ms on 20 positions of 24 seeds: worst wall time {:.1} ms, depths {:?}",
        worst.as_secs_f64() * 1e3,
        depths
    );
    group.throughput(Throughput::Elements(1));
    group.bench_function("search with --think-ms 200 (wall time)", |b| {
        b.iter(|| analyse(&db, black_box(&opening), &Limits::think(think)).expect("analyse"))
    });
    group.finish();
    let _ = server.kill();
    let _ = server.wait();
}

criterion_group!(benches, bench_search);
criterion_main!(benches);
