//! Principal variations of random boards: the time to play each line out to its end.
//!
//! `AWARI_BENCH_DB=DIR cargo bench --bench pv` measures 1,000 random boards of layers
//! 14..=24 of the `awari` tables in DIR (build them first with
//! `awari build --max-seeds 24 --db DIR`). Without it, the bench builds layers 0..=16 into a
//! temporary folder (a minute or so) and samples layers 14..=16. Before the criterion
//! figures it prints the slowest and the median line over the whole sample, since the
//! promise is about every board, not the average.

use awari::build::{build, BuildOptions};
use awari::{Board, Database, Rules};
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use std::time::{Duration, Instant};

mod common;

const BOARDS: usize = 1000;
const MAX_PLIES: usize = 1000;

fn bench_pv(c: &mut Criterion) {
    let temp = tempfile::tempdir().expect("temp dir");
    let (dir, top) = match std::env::var_os("AWARI_BENCH_DB") {
        Some(dir) => (std::path::PathBuf::from(dir), 24),
        None => {
            let opts = BuildOptions::new(temp.path().to_path_buf(), Rules::AWARI, 16);
            build(&opts, &awari::solve::Quiet).expect("build");
            (temp.path().to_path_buf(), 16)
        }
    };
    let db = Database::open(&dir, Rules::AWARI).expect("open");
    let layers: Vec<u32> = (14..=top).collect();
    let per_layer = BOARDS.div_ceil(layers.len());
    let boards: Vec<Board> = layers
        .iter()
        .flat_map(|&n| common::positions(n, per_layer, 0x5EED_0000 + u64::from(n)))
        .take(BOARDS)
        .collect();

    let mut times: Vec<(Duration, Board, usize)> = boards
        .iter()
        .map(|b| {
            let started = Instant::now();
            let pv = db.principal_variation(b, MAX_PLIES).expect("pv");
            (started.elapsed(), *b, pv.steps.len())
        })
        .collect();
    times.sort_by_key(|t| t.0);
    let (slowest, board, plies) = times[times.len() - 1];
    eprintln!(
        "pv over {} random boards of layers 14..={top}: median {:?}, slowest {:?} ({board}, {plies} plies)",
        times.len(),
        times[times.len() / 2].0,
        slowest
    );

    let mut group = c.benchmark_group("pv");
    group.sample_size(20);
    let mut k = 0usize;
    group.bench_function(format!("random board of layers 14..={top}"), |b| {
        b.iter(|| {
            k = (k + 1) % boards.len();
            db.principal_variation(black_box(&boards[k]), MAX_PLIES)
                .expect("pv")
        })
    });
    group.finish();
}

criterion_group!(benches, bench_pv);
criterion_main!(benches);
