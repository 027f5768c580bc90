//! `awari stats`: per layer, what the tables hold and what they take on disk.

use super::args::{cycles_option, TableArgs};
use super::json::{pairs_stats_json, values_stats_json};
use super::layers::{bounds_span, own_row_span, values_span, LayerRange};
use super::output::{say, tell};
use anyhow::{bail, Result};
use awari::store::{LayerFile, LayerSummary};
use awari::{BoundsDatabase, Database, Tables};
use serde_json::Value;
use std::path::PathBuf;

/// Runs `stats`.
pub fn run(
    tables: &TableArgs,
    layers: Option<LayerRange>,
    histogram: bool,
    json_out: bool,
) -> Result<bool> {
    match tables.kind() {
        Tables::Values => values(tables, layers, histogram, json_out),
        // Refused rather than ignored, as every option of one kind of table is.
        Tables::Bounds if histogram => {
            bail!("--histogram is for the values; the stats of the bounds count exact positions")
        }
        Tables::OwnRow(_) if histogram => {
            bail!("--histogram is for the values; the stats of the own-row values count exact positions")
        }
        Tables::Bounds => {
            let db = BoundsDatabase::open(&tables.db.db, tables.db.rules)?;
            pairs(bounds_span(&db, layers)?, |n| db.layer(n), json_out)?;
            say_half_built(&db, tables, db.missing_low_files(), layers, json_out);
            Ok(true)
        }
        Tables::OwnRow(r) => {
            let db = BoundsDatabase::open(&tables.db.db, tables.db.rules)?;
            let own_row = db.own_row(r);
            pairs(
                own_row_span(&own_row, layers)?,
                |n| own_row.layer(n),
                json_out,
            )?;
            say_half_built(&db, tables, own_row.missing_low_files(), layers, json_out);
            Ok(true)
        }
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
        // A file with don't-cares stores values below the true ones: its counts are the
        // header's, which its writer took from the true values (`verify` restores them).
        let s = if file.dont_cares() {
            file.summary().clone()
        } else {
            file.recount()?
        };
        if &s != file.summary() {
            bail!(
                "{}: the values stored disagree with the counts in the header",
                file.path().display()
            );
        }
        if json_out {
            rows.push(values_stats_json(n, file, &s));
        } else {
            values_row(n, file, &s, histogram);
        }
    }
    if json_out {
        say!("{}", serde_json::to_string_pretty(&Value::Array(rows))?);
    }
    Ok(true)
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

/// The stats of a kind stored as pairs (the bounds, the own-row values), of layers
/// `first..=last` (`files` gives a layer's low and high files): per layer, positions,
/// exact positions (`low == high`) and bytes, block by block.
fn pairs<'a>(
    (first, last): (u32, u32),
    files: impl Fn(u32) -> Option<(&'a LayerFile, &'a LayerFile)>,
    json_out: bool,
) -> Result<()> {
    let mut rows = Vec::new();
    for n in first..=last {
        let Some((low, high)) = files(n) else {
            continue;
        };
        let exact = low.count_equal(high)?;
        let positions = low.positions();
        let bytes = low.bytes() + high.bytes();
        if json_out {
            rows.push(pairs_stats_json(n, positions, exact, bytes));
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
    Ok(())
}

/// Says each layer of `missing_low` (the layers of the tables `tables` asks for whose high
/// file is on disk without its low file, with the missing file) in `layers`: it is not
/// counted above, and the next build of the kind builds it again. On stdout as a row of the
/// text, on stderr as a warning beside the JSON.
fn say_half_built(
    db: &BoundsDatabase,
    tables: &TableArgs,
    missing_low: Vec<(u32, PathBuf)>,
    layers: Option<LayerRange>,
    json_out: bool,
) {
    let option = cycles_option(tables.kind());
    for (n, low) in missing_low {
        if layers.is_some_and(|r| n < r.first || n > r.last) {
            continue;
        }
        let line = format!(
            "layer {n:>2}: incomplete, its low file {} is missing (the layer is not counted); \
             build it again: awari build{option} --rules {} --max-seeds {n} --db {}",
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
