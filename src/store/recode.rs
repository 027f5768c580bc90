//! Re-writing a values table with other write options (its codec, block size or zstd
//! level): the same values, read block by block twice (once to count the context model,
//! once to code them), written under the temporary name and renamed over the old file, so
//! a run cut short leaves the old file whole and readable.

use super::context_coder::{as_values, Codec, Counts, Model};
use super::writer::TableWriter;
use super::*;

/// Re-writes the values of layer `seeds` of `rules` under `db` with `opts`: the context
/// model ([`Codec::Context`], format version 2) or zstd, in blocks of `opts.block_size`.
/// The layer's distances are left as they are. Re-writing a file with the options it was
/// written with gives the same bytes. Values with don't-cares, on either side, need the
/// layers below: [`crate::Database::recode_layer`] re-writes those.
///
/// # Errors
///
/// The layer's file cannot be opened, or a block of it is damaged (nothing is renamed
/// then), or the new file cannot be written (its temporary file is removed);
/// [`StoreError::Unusable`] for don't-cares, on either side.
pub fn recode_layer(
    db: &Path,
    rules: Rules,
    seeds: u32,
    opts: WriteOptions,
) -> Result<WrittenLayer, StoreError> {
    let old = LayerFile::open(&layer_path(db, rules, seeds), rules, seeds)?;
    let model = match opts.codec {
        Codec::DontCares => {
            return Err(StoreError::Unusable {
                path: old.path().to_path_buf(),
                what: "values with don't-cares are written from the layers below \
                       (Database::recode_layer)"
                    .into(),
            })
        }
        Codec::Zstd => None,
        Codec::Context => {
            let mut counts = Counts::new(seeds);
            in_blocks(&old, opts.block_size, |block| counts.add(&as_values(block)))?;
            Some(Model::from_counts(&counts))
        }
    };
    let mut new = TableWriter::create_coded(db, rules, seeds, TableKind::Values, opts, model)?;
    for b in 0..old.blocks() {
        new.append(&old.read_block_bytes(b)?)?;
    }
    new.finish(old.summary().clone())
}

/// Calls `f` with the layer's bytes cut into blocks of `block_size` positions (the last
/// may be short), whatever the file's own blocks.
fn in_blocks(
    file: &LayerFile,
    block_size: u32,
    mut f: impl FnMut(&[u8]),
) -> Result<(), StoreError> {
    let size = block_size as usize;
    let mut buf = Vec::with_capacity(size);
    for b in 0..file.blocks() {
        let bytes = file.read_block_bytes(b)?;
        let mut rest = &bytes[..];
        while !rest.is_empty() {
            let take = (size - buf.len()).min(rest.len());
            buf.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if buf.len() == size {
                f(&buf);
                buf.clear();
            }
        }
    }
    if !buf.is_empty() {
        f(&buf);
    }
    Ok(())
}
