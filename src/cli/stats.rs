//! `awari stats`: per layer, what the tables hold and what they take on disk.

use super::args::{Cycles, TableArgs};
use super::layers::{bounds_span, values_span, LayerRange};
use super::output::{say, tell};
use anyhow::{bail, Result};
use awari::store::{LayerFile, LayerSummary};
use awari::{BoundsDatabase, Database};
use serde_json::{json, Value};

/// Runs `stats`.
pub fn run(
    tables: &TableArgs,
    layers: Option<LayerRange>,
    histogram: bool,
    json_out: bool,
) -> Result<bool> {
    match tables.cycles {
        Cycles::Share => values(tables, layers, histogram, json_out),
        // Refused rather than ignored, as every option of one kind of table is.
        Cycles::Bounds if histogram => {
            bail!("--histogram is for the values; the stats of the bounds count exact positions")
        }
        Cycles::Bounds => pairs(tables, layers, json_out),
        Cycles::OwnRowFirst | Cycles::OwnRowThird if histogram => {
            bail!("--histogram is for the values; the stats of the own-row values count exact positions")
        }
        Cycles::OwnRowFirst | Cycles::OwnRowThird => pairs(tables, layers, json_out),
    }
}

fn values(
    tables: &TableArgs,
    layers: Option<LayerRange>,
    histogram: bool,
    json_out: bool,
) -> Result<bool> {
    let db = Database::open(&tables.db.db, tables.db.rules)?;
    let (first, last) = values_span(&db, layers)?;
    let mut rows = Vec::new();
    if !json_out {
        say!(
            "{:>5} {:>13} {:>12} {:>12} {:>12} {:>12} {:>8}",
            "layer",
            "positions",
            "wins",
            "draws",
            "losses",
            "bytes",
            "B/pos"
        );
    }
    for n in first..=last {
        let Some(file) = db.layer(n) else {
            if json_out {
                tell!("warning: layer {n} is not built; it is left out of the JSON");
                continue;
            }
            say!("{n:>5}   (not built)");
            continue;
        };
        let s = file.recount()?;
        if &s != file.summary() {
            bail!(
                "{}: the values stored disagree with the counts in the header",
                file.path().display()
            );
        }
        if json_out {
            rows.push(values_json(n, file, &s));
        } else {
            values_row(n, file, &s, histogram);
        }
    }
    if json_out {
        say!("{}", serde_json::to_string_pretty(&Value::Array(rows))?);
    }
    Ok(true)
}

fn values_json(n: u32, file: &LayerFile, s: &LayerSummary) -> Value {
    let hist: serde_json::Map<String, Value> = (-(n as i32)..=n as i32)
        .filter(|&v| s.count(v) > 0)
        .map(|v| (v.to_string(), json!(s.count(v))))
        .collect();
    json!({
        "seeds": n,
        "positions": s.positions,
        "wins": s.wins(),
        "draws": s.draws(),
        "losses": s.losses(),
        "bytes": file.bytes(),
        "bytes_per_position": file.bytes() as f64 / s.positions as f64,
        "histogram": hist,
    })
}

fn values_row(n: u32, file: &LayerFile, s: &LayerSummary, histogram: bool) {
    say!(
        "{n:>5} {:>13} {:>12} {:>12} {:>12} {:>12} {:>8.4}",
        s.positions,
        s.wins(),
        s.draws(),
        s.losses(),
        file.bytes(),
        file.bytes() as f64 / s.positions as f64
    );
    if histogram {
        let parts: Vec<String> = (-(n as i32)..=n as i32)
            .filter(|&v| s.count(v) > 0)
            .map(|v| format!("{v:+}:{}", s.count(v)))
            .collect();
        say!("      values {}", parts.join(" "));
    }
}

/// The stats of a kind stored as pairs (the bounds, the own-row values): per layer,
/// positions, exact positions (`low == high`) and bytes, block by block.
fn pairs(tables: &TableArgs, layers: Option<LayerRange>, json_out: bool) -> Result<bool> {
    let db = BoundsDatabase::open(&tables.db.db, tables.db.rules)?;
    let repetition = tables.cycles.repetition();
    let (first, last) = match repetition {
        None => bounds_span(&db, layers)?,
        Some(r) => super::own_row::span(&db, r, layers)?,
    };
    let mut rows = Vec::new();
    for n in first..=last {
        let files = match repetition {
            None => db.layer(n),
            Some(r) => db.own_row(r).layer(n),
        };
        let Some((low, high)) = files else {
            continue;
        };
        let exact = low.count_equal(high)?;
        let positions = low.positions();
        let bytes = low.bytes() + high.bytes();
        if json_out {
            rows.push(json!({"layer": n, "positions": positions, "exact": exact, "bytes": bytes}));
        } else {
            say!(
                "layer {n:>2}: {positions:>11} positions, {exact:>11} exact ({:.2}%), {bytes:>11} bytes",
                100.0 * exact as f64 / positions as f64
            );
        }
    }
    if json_out {
        say!("{}", Value::Array(rows));
    }
    say_half_built(&db, tables, layers, json_out);
    Ok(true)
}

/// Says each layer of the tables `tables` asks for whose high file is on disk without its
/// low file: it is not counted above, and the next build of the kind builds it again. On
/// stdout as a row of the text, on stderr as a warning beside the JSON.
pub(super) fn say_half_built(
    db: &BoundsDatabase,
    tables: &TableArgs,
    layers: Option<LayerRange>,
    json_out: bool,
) {
    use clap::ValueEnum;
    let cycles = tables
        .cycles
        .to_possible_value()
        .map(|v| v.get_name().to_string())
        .unwrap_or_default();
    let missing = match tables.cycles.repetition() {
        None => db.missing_low_files(),
        Some(r) => db.own_row(r).missing_low_files(),
    };
    for (n, low) in missing {
        if layers.is_some_and(|r| n < r.first || n > r.last) {
            continue;
        }
        let line = format!(
            "layer {n:>2}: incomplete, its low file {} is missing (the layer is not counted); \
             build it again: awari build --cycles {cycles} --rules {} --max-seeds {n} --db {}",
            low.display(),
            db.rules(),
            awari::store::shell_word(&tables.db.db)
        );
        if json_out {
            tell!("warning: {line}");
        } else {
            say!("{line}");
        }
    }
}
