//! One mid-size layer's retrograde pass from its lower layers: layer 14 (4,457,400
//! positions), with the lower layers solved once in memory beforehand. The exact values
//! under `awari` and under `abapa`, and the bounds under `abapa`, so that the
//! two passes compare on the same layer and rules.
//!
//! `cargo bench --bench solve`. The figure is per layer; criterion also prints the element
//! throughput (positions per second).

use awari::solve::bounds::{solve_all_bounds, solve_layer_bounds};
use awari::solve::{solve_all, solve_layer, Quiet};
use awari::{index, Rules};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::time::Duration;

const LAYER: u32 = 14;

fn bench_layer(c: &mut Criterion) {
    let mut group = c.benchmark_group("solve");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .throughput(Throughput::Elements(index::size(LAYER)));
    for rules in [Rules::AWARI, Rules::ABAPA] {
        let lower = solve_all(rules, LAYER - 1);
        group.bench_function(format!("layer {LAYER} ({rules})"), |b| {
            b.iter(|| solve_layer(rules, LAYER, &lower, &Quiet))
        });
    }
    let lower = solve_all_bounds(Rules::ABAPA, LAYER - 1);
    group.bench_function(format!("layer {LAYER} bounds (abapa)"), |b| {
        b.iter(|| solve_layer_bounds(Rules::ABAPA, LAYER, &lower))
    });
    group.finish();
}

criterion_group!(benches, bench_layer);
criterion_main!(benches);
