//! One mid-size layer's retrograde pass from its lower layers: layer 14 (4,457,400
//! positions) under `awari`, with the lower layers solved once in memory beforehand.
//!
//! `cargo bench --bench solve`. The figure is per layer; criterion also prints the element
//! throughput (positions per second).

use awari::solve::{solve_all, solve_layer, Quiet};
use awari::{index, Rules};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::time::Duration;

const LAYER: u32 = 14;

fn bench_layer(c: &mut Criterion) {
    let lower = solve_all(Rules::AWARI, LAYER - 1);
    let mut group = c.benchmark_group("solve");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .throughput(Throughput::Elements(index::size(LAYER)));
    group.bench_function(format!("layer {LAYER} (awari)"), |b| {
        b.iter(|| solve_layer(Rules::AWARI, LAYER, &lower, &Quiet))
    });
    group.finish();
}

criterion_group!(benches, bench_layer);
criterion_main!(benches);
