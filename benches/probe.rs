//! Probes through `Database`: hot (the block is in the cache) and cold (the block cache is
//! cleared before each probe, so the block is read, checksummed and decompressed; the
//! file's pages are in the OS page cache after the first pass), with positioned reads (the
//! default) and with the files memory-mapped (`Database::open_mapped`).
//!
//! `cargo bench --bench probe`. Builds layers 0..=16 of `awari` into a temporary folder first
//! (about 10 s). Figures are per probe. `AWARI_BENCH_CODEC=context` builds the values with
//! the context-model codec instead of zstd, `AWARI_BENCH_CODEC=dont-cares` recodes them
//! to don't-cares once built (a cold probe then reads the blocks of the captures it
//! restores too), and `AWARI_BENCH_BLOCK=N` sets blocks of N positions, to compare the
//! probes of each.

use awari::build::{build, BuildOptions};
use awari::{Database, Rules};
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use std::time::Duration;

mod common;

const LAYER: u32 = 16;

fn bench_probe(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut opts = BuildOptions::new(dir.path().to_path_buf(), Rules::AWARI, LAYER);
    let codec = std::env::var("AWARI_BENCH_CODEC").unwrap_or_default();
    if codec == "context" {
        opts.write.codec = awari::store::Codec::Context;
    }
    if let Some(block) = std::env::var("AWARI_BENCH_BLOCK")
        .ok()
        .and_then(|b| b.parse().ok())
    {
        opts.write.block_size = block;
    }
    build(&opts, &awari::solve::Quiet).expect("build");
    if codec == "dont-cares" {
        let db = Database::open(dir.path(), Rules::AWARI).expect("open");
        let recode = awari::store::WriteOptions {
            codec: awari::store::Codec::DontCares,
            ..opts.write
        };
        for n in 0..=LAYER {
            db.load(&[n]).expect("load");
            db.recode_layer(n, recode).expect("recode");
        }
    }
    let sample = common::positions(LAYER, 4096, 0x2545_F491_4F6C_DD1D);
    let mut group = c.benchmark_group("probe");
    group
        .measurement_time(Duration::from_secs(5))
        .sample_size(20);

    let db = Database::open(dir.path(), Rules::AWARI).expect("open");
    let hot = sample[0];
    db.value(&hot).expect("probe");
    group.bench_function("hot value", |b| {
        b.iter(|| db.value(black_box(&hot)).expect("probe"))
    });

    let mut k = 0usize;
    group.bench_function("cold value (block not cached)", |b| {
        b.iter(|| {
            k = (k + 1) % sample.len();
            db.clear_cache();
            db.value(black_box(&sample[k])).expect("probe")
        })
    });

    // The same, with the files memory-mapped (the unsafe opt-in): what positioned reads cost.
    // SAFETY: nothing writes to the temporary database while the bench runs.
    let mapped = unsafe { Database::open_mapped(dir.path(), Rules::AWARI) }.expect("open");
    let mut k = 0usize;
    group.bench_function("cold value, mapped (block not cached)", |b| {
        b.iter(|| {
            k = (k + 1) % sample.len();
            mapped.clear_cache();
            mapped.value(black_box(&sample[k])).expect("probe")
        })
    });

    let fresh_opened = Database::open(dir.path(), Rules::AWARI).expect("open");
    let mut k = 0usize;
    group.bench_function("moves_with_values (hot layers)", |b| {
        b.iter(|| {
            k = (k + 1) % 64;
            fresh_opened
                .moves_with_values(black_box(&sample[k]))
                .expect("probe")
        })
    });
    group.finish();
}

criterion_group!(benches, bench_probe);
criterion_main!(benches);
