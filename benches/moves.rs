//! Legal-move generation (`Rules::turn`: sowing, captures, feeding, the grand slam) on
//! fixed pseudo-random positions of layers 12, 24 and 48, for the awari and abapa presets.
//!
//! `cargo bench --bench moves`. Figures are per call (one position's whole move list).

use awari::{Board, Rules, Turn};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::hint::black_box;
use std::time::Duration;

mod common;

const SAMPLES: usize = 1024;

/// Uniform positions of layer `n`.
fn positions(n: u32) -> Vec<Board> {
    common::positions(n, SAMPLES, 0x5EED + u64::from(n))
}

fn bench_turn(c: &mut Criterion) {
    let mut group = c.benchmark_group("turn");
    for rules in [Rules::AWARI, Rules::ABAPA] {
        for n in [12u32, 24, 48] {
            let boards = positions(n);
            let id = BenchmarkId::new(rules.name(), n);
            group.bench_with_input(id, &boards, |b, boards| {
                let mut k = 0usize;
                b.iter(|| {
                    k = (k + 1) & (SAMPLES - 1);
                    match black_box(rules).turn(black_box(&boards[k])) {
                        Turn::Moves(list) => list.len(),
                        Turn::GameOver { .. } => 0,
                    }
                })
            });
        }
    }
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
    targets = bench_turn
}
criterion_main!(benches);
