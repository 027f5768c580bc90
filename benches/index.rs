//! rank / unrank on fixed pseudo-random samples of layers 24 and 48, and a whole-layer walk
//! (layer 12, 1,352,078 positions) with `next_in_layer`.
//!
//! `cargo bench --bench index`. Each rank/unrank figure is per call; the walk figure is per
//! layer (divide by 1,352,078 for per position, or read the element throughput).

use awari::index::{next_in_layer, rank, size, unrank};
use awari::Board;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use std::time::Duration;

mod common;

/// Samples per layer: a power of two so the cycling index is a mask.
const SAMPLES: usize = 1024;

/// Uniform indices of layer `n`.
fn indices(n: u32) -> Vec<u64> {
    common::indices(n, SAMPLES, 0xA3A1 + u64::from(n))
}

fn bench_rank_unrank(c: &mut Criterion) {
    let mut group = c.benchmark_group("index");
    for n in [24u32, 48] {
        let idx = indices(n);
        let boards: Vec<Board> = idx.iter().map(|&i| unrank(n, i)).collect();

        group.bench_with_input(BenchmarkId::new("rank", n), &boards, |b, boards| {
            let mut k = 0usize;
            b.iter(|| {
                k = (k + 1) & (SAMPLES - 1);
                rank(black_box(&boards[k]))
            })
        });
        group.bench_with_input(BenchmarkId::new("unrank", n), &idx, |b, idx| {
            let mut k = 0usize;
            b.iter(|| {
                k = (k + 1) & (SAMPLES - 1);
                unrank(black_box(n), black_box(idx[k]))
            })
        });
    }
    group.finish();
}

fn bench_walk(c: &mut Criterion) {
    let n = 12u32;
    let mut group = c.benchmark_group("walk");
    group.throughput(Throughput::Elements(size(n)));
    group.bench_function(BenchmarkId::new("next_in_layer", n), |b| {
        b.iter(|| {
            let mut board = unrank(n, 0);
            // Fold the boards into a checksum so the walk cannot be optimised away.
            let mut sum = 0u64;
            loop {
                sum = sum.wrapping_add(u64::from(black_box(&board).pit(0)));
                if !next_in_layer(&mut board) {
                    break;
                }
            }
            sum
        })
    });
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20)
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_rank_unrank, bench_walk
}
criterion_main!(benches);
