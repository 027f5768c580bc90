//! Legal-move generation (`Rules::turn`: sowing, captures, feeding, the grand slam) on
//! fixed pseudo-random positions of layers 12, 24 and 48, for the awari and abapa presets.
//!
//! `cargo bench --bench moves`. Figures are per call (one position's whole move list).

use awari::index::{size, unrank};
use awari::{Board, Rules, Turn};
use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use std::time::Duration;

const SAMPLES: usize = 1024;

/// SplitMix64: a fixed, dependency-free pseudo-random stream.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Uniform positions of layer `n`.
fn positions(n: u32) -> Vec<Board> {
    let mut rng = SplitMix(0x5EED + u64::from(n));
    (0..SAMPLES)
        .map(|_| unrank(n, rng.next() % size(n)))
        .collect()
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
