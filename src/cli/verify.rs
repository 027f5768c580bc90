//! `awari verify`: every stored table re-checked against its moves (the own-row values:
//! by what holds of a pair whatever the history).

use super::args::TableArgs;
use super::layers::{bounds_span, own_row_span, values_span, LayerRange};
use super::output::say;
use anyhow::{bail, Result};
use awari::verify::{self, LayerCheck};
use awari::{BoundsDatabase, Database, Repetition, Tables};

/// Runs `verify`; `Ok(false)` when a table disagrees with its moves.
pub fn run(tables: &TableArgs, layers: Option<LayerRange>, sample: Option<u64>) -> Result<bool> {
    match tables.kind() {
        Tables::Values => values(tables, layers, sample),
        Tables::Bounds => bounds(tables, layers, sample),
        Tables::OwnRow(r) => own_row(tables, r, layers, sample),
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

/// The own-row values of `r`: every layer read whole (or sampled) and its local checks;
/// `Ok(false)` on a fault.
fn own_row(
    tables: &TableArgs,
    r: Repetition,
    layers: Option<LayerRange>,
    sample: Option<u64>,
) -> Result<bool> {
    if sample == Some(0) {
        bail!("--sample must be at least 1");
    }
    let db = BoundsDatabase::open(&tables.db.db, tables.db.rules)?;
    let own_row = db.own_row(r);
    let (first, last) = own_row_span(&own_row, layers)?;
    let mut sound = true;
    for n in first..=last {
        let checked = match sample {
            Some(count) => verify::check_own_row_sampled(&own_row, n, count)?,
            None => verify::check_own_row(&own_row, n)?,
        };
        let Some(c) = checked else {
            continue;
        };
        // A sample at least the layer's size is the whole check.
        let sampled = if c.positions < awari::index::size(n) {
            " sampled"
        } else {
            ""
        };
        match &c.first_fault {
            None => say!(
                "layer {n:>2}: {} positions{sampled}, {} exact, every check holds",
                c.positions,
                c.exact
            ),
            Some(first) => {
                sound = false;
                say!(
                    "layer {n:>2}: {} positions, FAULTS: {} (first: {first})",
                    c.positions,
                    c.faults
                );
            }
        }
    }
    Ok(sound)
}
