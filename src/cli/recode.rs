//! `awari recode`: the values of built layers re-written with another codec or block size.

use super::args::{CodecArg, DbArgs};
use super::layers::{values_span, LayerRange};
use super::output::say;
use anyhow::{Context, Result};
use awari::store::{self, WriteOptions};
use awari::Database;

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
    let (first, last) = values_span(&Database::open(&db.db, db.rules)?, layers)?;
    for n in first..=last {
        let path = store::layer_path(&db.db, db.rules, n);
        let before = std::fs::metadata(&path)
            .with_context(|| format!("layer {n} of '{}': {}", db.rules, path.display()))?
            .len();
        let written = store::recode_layer(&db.db, db.rules, n, opts)?;
        let positions = awari::index::size(n) as f64;
        say!(
            "layer {n:>2}: {before} bytes ({:.4} a position), now {} ({:.4})",
            before as f64 / positions,
            written.bytes,
            written.bytes as f64 / positions
        );
    }
    Ok(true)
}
