//! `awari recode`: the values of built layers re-written with another codec or block size.

use super::args::{CodecArg, DbArgs};
use super::layers::{values_span, LayerRange};
use super::output::say;
use anyhow::{bail, Context, Result};
use awari::rules::MAX_CAPTURE;
use awari::store::{self, WriteOptions};
use awari::{index, Database};

/// Runs `recode`: layer after layer, each file replaced only when its new one is whole.
pub fn run(
    db: &DbArgs,
    layers: Option<LayerRange>,
    codec: CodecArg,
    block_size: Option<u32>,
    zstd_level: i32,
) -> Result<bool> {
    let opts = WriteOptions {
        block_size: codec.block_size(block_size)?,
        zstd_level,
        codec: codec.into(),
    };
    let database = Database::open(&db.db, db.rules)?;
    let (first, last) = values_span(&database, layers)?;
    // Don't-cares, written or read, need the true values of the layers below: they are
    // held in memory from the lowest a capture reaches, each restored as it is loaded.
    let dont_cares = opts.codec == store::Codec::DontCares
        || (first..=last).any(|n| database.layer(n).is_some_and(|f| f.dont_cares()));
    if dont_cares {
        // Every layer held at once, one byte a position, and two more copies of the top
        // one while it is coded: refused in seconds rather than swapping for hours.
        let lowest = first.saturating_sub(MAX_CAPTURE);
        let need: u64 = (lowest..=last).map(index::size).sum::<u64>() + 2 * index::size(last);
        if let Some(have) = awari::build::physical_memory().filter(|&have| need > have) {
            bail!(
                "recoding layers {first}..={last} with don't-cares holds layers {lowest}..={last} in memory, about {:.1} GiB, over this machine's {:.1} GiB: recode fewer layers at a time, or keep these with --codec context",
                need as f64 / f64::from(1 << 30),
                have as f64 / f64::from(1 << 30)
            );
        }
        database.load(&(lowest..first).collect::<Vec<_>>())?;
    }
    for n in first..=last {
        let path = store::layer_path(&db.db, db.rules, n);
        let before = std::fs::metadata(&path)
            .with_context(|| format!("layer {n} of '{}': {}", db.rules, path.display()))?
            .len();
        if dont_cares {
            database.load(&[n])?;
        }
        let written = database.recode_layer(n, opts)?;
        let positions = index::size(n) as f64;
        say!(
            "layer {n:>2}: {before} bytes ({:.4} a position), now {} ({:.4})",
            before as f64 / positions,
            written.bytes,
            written.bytes as f64 / positions
        );
    }
    Ok(true)
}
