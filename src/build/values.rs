//! The values' layers ([`Tables::Values`](super::Tables::Values)): each built by the
//! in-memory pass or the lean pass (by one process or the ranks of an MPI job), with its
//! distances file written before its values file; and what a lean pass leaves in its scratch
//! folder, cleared and noted.

use super::prepare::check_disk;
use super::{
    existing_layer_error, memory_needed, pass_for, physical_memory, BuildError, BuildObserver,
    BuildOptions, LayerKind, LayerReport, Pass, PassChoice, DISTANCES_ZSTD_LEVEL,
};
use crate::index;
use crate::solve::{self, lean};
use crate::store::{self, LayerFile, LayerSummary, StoreError, TableKind, WriteOptions};
use std::path::{Path, PathBuf};

/// The values' side of the layer loop.
pub(super) struct Values<'a> {
    opts: &'a BuildOptions,
    /// The memory limit the pass of each layer is chosen under.
    limit: Option<u64>,
    /// The lower layers in memory, for the in-memory pass; empty for the others.
    layers: Vec<Vec<i8>>,
    /// The other ranks of an MPI job ([`lean::Alone`] for one process).
    ex: &'a dyn lean::Exchange,
}

impl<'a> Values<'a> {
    pub(super) fn new(opts: &'a BuildOptions, ex: &'a dyn lean::Exchange) -> Values<'a> {
        Values {
            opts,
            limit: opts.memory_limit.or_else(physical_memory),
            layers: Vec::new(),
            ex,
        }
    }
}

impl LayerKind for Values<'_> {
    fn reads_lower(&self, m: u32) -> bool {
        pass_for(self.opts.pass, m, self.limit) == Pass::InMemory
    }

    fn read_back(&mut self, n: u32, needed: bool) -> Result<LayerReport, BuildError> {
        // A build stopped after the layer's files were renamed into place, but before its
        // scratch folder was removed, left that folder behind.
        remove_scratch_of_whole_layer(self.opts, n);
        layer_on_disk(self.opts, n, needed, &mut self.layers)
    }

    fn build(&mut self, n: u32, observer: &dyn BuildObserver) -> Result<LayerReport, BuildError> {
        build_layer(
            self.opts,
            n,
            self.limit,
            &mut self.layers,
            observer,
            self.ex,
        )
    }
}

/// Removes what another kind of build left in the scratch folder of layer `n` before this
/// one builds it, so that neither trips on the other's files: a single process's lean pass
/// (`ranks` 1) keeps its checkpoint as files in the folder, and a partitioned build one
/// subfolder `rank-K` per rank, which it never resumes from. The lean pass about to run
/// removes the other kind's entries (subfolders for a single process, files for a
/// partitioned build); the in-memory pass leaves the folder alone until the layer is
/// written, so that a checkpoint survives a build stopped before then.
fn clear_foreign_scratch(
    opts: &BuildOptions,
    pass: Pass,
    n: u32,
    ranks: usize,
) -> Result<(), BuildError> {
    if pass != Pass::Lean {
        return Ok(());
    }
    let dir = opts.lean.scratch_for(&opts.db, opts.rules, n);
    let io_err = |path: &Path, source| {
        BuildError::Store(StoreError::Io {
            path: path.to_path_buf(),
            source,
        })
    };
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_err(&dir, e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| io_err(&dir, e))?;
        let path = entry.path();
        let is_dir = entry.file_type().map_err(|e| io_err(&path, e))?.is_dir();
        let removed = match (is_dir, ranks) {
            (true, 1) => std::fs::remove_dir_all(&path),
            (false, r) if r > 1 => std::fs::remove_file(&path),
            _ => continue,
        };
        // Every rank of a partitioned build clears the same folder when they share it, so
        // a file another rank removed first is no error.
        if let Err(e) = removed {
            if e.kind() != std::io::ErrorKind::NotFound {
                return Err(io_err(&path, e));
            }
        }
    }
    Ok(())
}

/// Removes the lean scratch folder of layer `n`, whose files are whole: nothing in it is of
/// use any more (a big layer's runs take gigabytes). Leaving it costs only disk, so a
/// failure to remove it does not fail the build.
fn remove_scratch_of_whole_layer(opts: &BuildOptions, n: u32) {
    let _ = std::fs::remove_dir_all(opts.lean.scratch_for(&opts.db, opts.rules, n));
    // And the folder of a build given another --scratch, as its note says.
    let note = scratch_note(opts, n);
    if let Ok(root) = std::fs::read_to_string(&note) {
        let _ = std::fs::remove_dir_all(scratch_under(opts, root.trim_end_matches('\n'), n));
        let _ = std::fs::remove_file(&note);
    }
}

/// The note in the rule set's folder that names the `--scratch` folder of layer `n`'s lean
/// pass, when a build was given one: a build given another (or none) finds the checkpoint
/// there through it, instead of starting afresh beside it without a word.
fn scratch_note(opts: &BuildOptions, n: u32) -> PathBuf {
    store::rules_dir(&opts.db, opts.rules).join(format!("lean-{n:02}.scratch"))
}

/// The scratch folder of layer `n` under the `--scratch` folder `root`.
fn scratch_under(opts: &BuildOptions, root: &str, n: u32) -> PathBuf {
    let with = lean::LeanOptions {
        scratch: Some(PathBuf::from(root)),
        ..lean::LeanOptions::default()
    };
    with.scratch_for(&opts.db, opts.rules, n)
}

/// Before a single process's lean pass of layer `n`: refuses when a checkpoint of the
/// layer lies in the scratch folder of a build given another `--scratch` (it would be
/// abandoned without a word), else notes this build's `--scratch` folder, if it has one,
/// for the next build to find.
fn note_scratch(opts: &BuildOptions, n: u32) -> Result<(), BuildError> {
    let note = scratch_note(opts, n);
    let absolute = |p: PathBuf| std::path::absolute(&p).unwrap_or(p);
    let here = absolute(opts.lean.scratch_for(&opts.db, opts.rules, n));
    if let Ok(text) = std::fs::read_to_string(&note) {
        let root = PathBuf::from(text.trim_end_matches('\n'));
        let dir = scratch_under(opts, text.trim_end_matches('\n'), n);
        if absolute(dir.clone()) != here && lean::has_checkpoint(&dir) {
            return Err(BuildError::ScratchElsewhere {
                seeds: n,
                root,
                dir,
            });
        }
    }
    // Noted only when it is not the default folder, which every build looks in.
    let default = absolute(lean::scratch_dir(&opts.db, opts.rules, n));
    let here = opts
        .lean
        .scratch
        .clone()
        .filter(|_| here != default)
        .map(absolute);
    let io_err = |source| {
        BuildError::Store(StoreError::Io {
            path: note.clone(),
            source,
        })
    };
    match here {
        Some(root) => std::fs::write(&note, format!("{}\n", root.display())).map_err(io_err),
        None => match std::fs::remove_file(&note) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_err(e)),
            _ => Ok(()),
        },
    }
}

/// The true values of layer `n`, whose `file` keeps don't-cares: its captures' children
/// read from `layers` (the layers below, true values) where held, from their files where
/// not (through a [`crate::Database`], which restores them in turn).
fn restored_layer(
    opts: &BuildOptions,
    n: u32,
    file: &LayerFile,
    layers: &[Vec<i8>],
) -> Result<Vec<i8>, BuildError> {
    let db = crate::Database::open(&opts.db, opts.rules).map_err(existing_layer_error)?;
    let mut values = file.read_all_stored().map_err(existing_layer_error)?;
    let held = |m: u32| layers.get(m as usize).filter(|l| !l.is_empty());
    crate::probe::restore_layer(opts.rules, n, &mut values, |boards| {
        if boards.iter().all(|b| held(b.seeds()).is_some()) {
            return Ok(crate::probe::held_values(layers, boards));
        }
        db.values_many(boards)
    })
    .map_err(|e| match e {
        crate::ProbeError::Store(e) => existing_layer_error(e),
        other => BuildError::Store(StoreError::Unusable {
            path: file.path().to_path_buf(),
            what: format!("its don't-cares cannot be restored: {other}"),
        }),
    })?;
    crate::probe::check_restored(file, &values).map_err(BuildError::Damaged)?;
    Ok(values)
}

/// A complete layer on disk: checked, and read into `layers` if `needed` (reading it back
/// checks every block's checksum on the way; a file with don't-cares is restored).
fn layer_on_disk(
    opts: &BuildOptions,
    n: u32,
    needed: bool,
    layers: &mut Vec<Vec<i8>>,
) -> Result<LayerReport, BuildError> {
    let path = store::layer_path(&opts.db, opts.rules, n);
    let file = LayerFile::open(&path, opts.rules, n).map_err(existing_layer_error)?;
    if needed && file.dont_cares() {
        let values = restored_layer(opts, n, &file, layers)?;
        layers.push(values);
    } else if needed {
        layers.push(file.read_all().map_err(existing_layer_error)?);
    } else {
        file.check_blocks().map_err(existing_layer_error)?;
        layers.push(Vec::new());
    }
    Ok(LayerReport {
        seeds: n,
        positions: file.positions(),
        built: false,
        seconds: 0.0,
        bytes: file.bytes(),
        summary: file.summary().clone(),
        exact: None,
        searched: None,
    })
}

/// The write options of the distances files.
fn distances_write(opts: &BuildOptions) -> WriteOptions {
    WriteOptions {
        zstd_level: opts.write.zstd_level.min(DISTANCES_ZSTD_LEVEL),
        ..opts.write
    }
}

/// Builds layer `n` with the pass the options and the memory `limit` choose.
fn build_layer(
    opts: &BuildOptions,
    n: u32,
    limit: Option<u64>,
    layers: &mut Vec<Vec<i8>>,
    observer: &dyn BuildObserver,
    ex: &dyn lean::Exchange,
) -> Result<LayerReport, BuildError> {
    let pass = pass_for(opts.pass, n, limit);
    if pass == Pass::Lean && ex.ranks() == 1 {
        note_scratch(opts, n)?;
    }
    clear_foreign_scratch(opts, pass, n, ex.ranks())?;
    check_disk(opts, pass, n)?;
    if opts.pass == PassChoice::Auto {
        observer.pass_chosen(n, pass, memory_needed(n), limit);
    }
    observer.layer_started(n, index::size(n));
    let written = match pass {
        Pass::InMemory => build_in_memory(opts, n, layers, observer)?,
        Pass::Lean => build_lean(opts, n, layers, observer, ex)?,
    };
    Ok(LayerReport {
        seeds: n,
        positions: index::size(n),
        built: true,
        seconds: 0.0,
        bytes: written.bytes,
        summary: written.summary,
        exact: None,
        searched: None,
    })
}

/// Layer `n` by the in-memory pass, from the lower layers in `layers` (it joins them).
fn build_in_memory(
    opts: &BuildOptions,
    n: u32,
    layers: &mut Vec<Vec<i8>>,
    observer: &dyn BuildObserver,
) -> Result<store::WrittenLayer, BuildError> {
    let solved = solve::solve_layer(opts.rules, n, &*layers, observer);
    // A cancelled pass returns garbage: it must never reach the disk.
    if observer.cancelled() {
        return Err(BuildError::Cancelled { seeds: n });
    }
    // Distances first: a values file on disk marks a finished layer, so the layer is never
    // taken as done without its distances.
    let summary = LayerSummary::from_values(n, &solved.values);
    if opts.keeps_distances(n) {
        store::write_table(
            &opts.db,
            opts.rules,
            TableKind::Distances,
            &solved.distances,
            summary,
            distances_write(opts),
        )?;
    } else {
        store::write_without_entries(
            &opts.db,
            opts.rules,
            TableKind::Distances,
            summary,
            distances_write(opts),
        )?;
    }
    drop(solved.distances);
    let written = store::write_layer(&opts.db, opts.rules, n, &solved.values, opts.write)?;
    layers.push(solved.values);
    // A lean checkpoint of this layer (a build stopped with the other pass).
    remove_scratch_of_whole_layer(opts, n);
    Ok(written)
}

/// Layer `n` by the lean pass, which reads the lower layers from their files.
fn build_lean(
    opts: &BuildOptions,
    n: u32,
    layers: &mut Vec<Vec<i8>>,
    observer: &dyn BuildObserver,
    ex: &dyn lean::Exchange,
) -> Result<store::WrittenLayer, BuildError> {
    // The lean pass reads the lower layers from their files: free them.
    layers.iter_mut().for_each(|l| *l = Vec::new());
    let written = lean::build_layer(
        &opts.db,
        opts.rules,
        n,
        &opts.lean,
        opts.write,
        opts.keeps_distances(n)
            .then_some(distances_write(opts).zstd_level),
        observer,
        ex,
    )
    .map_err(|e| match e {
        StoreError::Stopped { .. } => BuildError::Cancelled { seeds: n },
        e => existing_layer_error(e),
    })?;
    if ex.ranks() == 1 {
        // The pass removed its scratch folder, the one the note names.
        let _ = std::fs::remove_file(scratch_note(opts, n));
    }
    layers.push(Vec::new());
    Ok(match written {
        // The lean pass writes its blocks as they come, before the layer's context model
        // could be counted: the finished file is coded again (the model's codecs, context
        // and ranks), aside, then renamed over it
        // (a build stopped between the two keeps the zstd file, whole). The ranks of an
        // MPI job keep zstd: the other ranks may be reading the file.
        Some(_) if opts.write.codec.has_model() && ex.ranks() == 1 => {
            store::recode_layer(&opts.db, opts.rules, n, opts.write)?
        }
        Some(w) => w,
        // Another rank wrote it; it is there (the pass waits for that).
        None => {
            let path = store::layer_path(&opts.db, opts.rules, n);
            let file = LayerFile::open(&path, opts.rules, n).map_err(existing_layer_error)?;
            store::WrittenLayer {
                path,
                bytes: file.bytes(),
                summary: file.summary().clone(),
            }
        }
    })
}
