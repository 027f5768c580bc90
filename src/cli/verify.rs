//! `awari verify`: every stored table re-checked against its moves.

use super::args::{Cycles, TableArgs};
use super::layers::{bounds_span, values_span, LayerRange};
use super::output::say;
use anyhow::{bail, Result};
use awari::verify::{self, LayerCheck};
use awari::{BoundsDatabase, Database};

/// Runs `verify`; `Ok(false)` when a table disagrees with its moves.
pub fn run(tables: &TableArgs, layers: Option<LayerRange>, sample: Option<u64>) -> Result<bool> {
    match tables.cycles {
        Cycles::Share => values(tables, layers, sample),
        Cycles::Bounds => bounds(tables, layers, sample),
        Cycles::OwnRowFirst | Cycles::OwnRowThird => super::own_row::verify(tables, layers, sample),
    }
}

/// One layer's line, and its mismatches.
fn report(c: &LayerCheck, sampled: bool) {
    let distances = match (c.distances_checked, c.distance_faults) {
        (false, _) => "; built without its distances".to_string(),
        (true, 0) => ", every round leads best play out of the layer".to_string(),
        (true, f) => format!("; DISTANCE FAULTS: {f}"),
    };
    // A sample at least the layer's size is the whole check.
    let what = if sampled && c.positions < awari::index::size(c.seeds) {
        " sampled"
    } else {
        ", checksums ok"
    };
    if c.mismatches == 0 {
        say!(
            "layer {:>2}: {} positions{what}, every value equals the best of its moves{distances}",
            c.seeds,
            c.positions
        );
        return;
    }
    say!(
        "layer {:>2}: {} positions, MISMATCHES: {}{distances}",
        c.seeds,
        c.positions,
        c.mismatches
    );
    for m in &c.examples {
        say!(
            "  {}  stored {:+}  best over moves {:+}",
            m.board,
            m.stored,
            m.expected
        );
    }
}

fn values(tables: &TableArgs, layers: Option<LayerRange>, sample: Option<u64>) -> Result<bool> {
    let db = Database::open(&tables.db.db, tables.db.rules)?;
    let (first, last) = values_span(&db, layers)?;
    let started = std::time::Instant::now();
    if sample == Some(0) {
        bail!("--sample must be at least 1");
    }
    let sampled = sample.is_some();
    let checks = match sample {
        Some(count) => verify::verify_sampled(&db, first, last, count, |c| report(c, sampled))?,
        None => verify::verify(&db, first, last, |c| report(c, sampled))?,
    };
    let bad: u64 = checks
        .iter()
        .map(|c| c.mismatches + c.distance_faults)
        .sum();
    say!(
        "verified layers {first}..={last} of '{}' in {:.1} s: {}",
        db.rules(),
        started.elapsed().as_secs_f64(),
        if bad == 0 {
            "all consistent".to_string()
        } else {
            format!("mismatches: {bad}")
        }
    );
    Ok(bad == 0)
}

fn bounds(tables: &TableArgs, layers: Option<LayerRange>, sample: Option<u64>) -> Result<bool> {
    let db = BoundsDatabase::open(&tables.db.db, tables.db.rules)?;
    let (first, last) = bounds_span(&db, layers)?;
    if sample == Some(0) {
        bail!("--sample must be at least 1");
    }
    let report = |c: &verify::BoundsCheck| {
        // A sample at least the layer's size is the whole check.
        let sampled = if c.positions < awari::index::size(c.seeds) {
            " sampled"
        } else {
            ""
        };
        say!(
            "layer {:>2}: {} positions{sampled}, {} exact, {}",
            c.seeds,
            c.positions,
            c.exact,
            if c.mismatches == 0 {
                "consistent".to_string()
            } else {
                format!("{} mismatches", c.mismatches)
            }
        );
        for (b, s, w) in &c.examples {
            say!(
                "  {b}: stored [{}, {}], moves give [{}, {}]",
                s.low,
                s.high,
                w.low,
                w.high
            );
        }
    };
    let checks = match sample {
        Some(count) => verify::verify_bounds_sampled(&db, first, last, count, report)?,
        None => verify::verify_bounds(&db, first, last, report)?,
    };
    let bad: u64 = checks.iter().map(|c| c.mismatches).sum();
    say!(
        "{}",
        if bad == 0 {
            "all consistent".to_string()
        } else {
            format!("mismatches: {bad}")
        }
    );
    Ok(bad == 0)
}
