//! What every build checks and takes before any work, so that it is refused in seconds
//! rather than fail (or swap) hours in: the memory and disk it needs, its threads, and the
//! lock of the folder it writes.

use super::{lean, BuildError, BuildOptions, Pass, MAX_THREADS};
use crate::board::MAX_SEEDS;
use crate::index;
use crate::rules::Rules;
use crate::solve::MAX_SOLVABLE_SEEDS;
use crate::store::{self, Tables};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Free bytes on the file system holding `dir`, if the OS says.
#[cfg(unix)]
pub(crate) fn free_disk(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut stat = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `path` is a valid NUL-terminated string and `stat` is large enough; statvfs
    // writes the whole struct when it returns 0, and only then is it read.
    let stat = unsafe {
        if libc::statvfs(path.as_ptr(), stat.as_mut_ptr()) != 0 {
            return None;
        }
        stat.assume_init()
    };
    Some(stat.f_bavail as u64 * stat.f_frsize as u64)
}

/// Without `statvfs` the free space is unknown, and the disk check is skipped: a full disk
/// is then a write error, which still removes the layer's temporary files.
#[cfg(not(unix))]
pub(crate) fn free_disk(_dir: &Path) -> Option<u64> {
    None
}

/// Free disk space a layer needs, by folder: the tables (at most a byte a position for
/// both, by the sizes measured up to layer 24) in the database folder, and the lean pass's
/// scratch files where they go (with the tables when that is the database folder; less
/// for a layer built without its distances).
///
/// The files already in the layer's scratch folder count toward its peak: a resumed build
/// carries them on, and a fresh one removes them first, so either way their bytes are
/// the layer's own. Without that, a build stopped near its peak could not resume.
fn disk_needed(opts: &BuildOptions, pass: Pass, n: u32) -> Vec<(PathBuf, u64)> {
    let tables = index::size(n) + (1 << 20);
    let db = store::rules_dir(&opts.db, opts.rules);
    let lean_disk = lean::plan(n, &opts.lean, opts.keeps_distances(n)).disk_bytes;
    let held = || folder_bytes(&opts.lean.scratch_for(&opts.db, opts.rules, n));
    match (pass, &opts.lean.scratch) {
        (Pass::InMemory, _) => vec![(db, tables)],
        (Pass::Lean, None) => vec![(db, lean_disk.saturating_sub(held()))],
        (Pass::Lean, Some(root)) => {
            let scratch = lean_disk.saturating_sub(tables).saturating_sub(held());
            vec![(db, tables), (root.clone(), scratch)]
        }
    }
}

/// The bytes of the files in `dir` (not its subfolders; none if it does not exist).
pub(super) fn folder_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(|e| e.ok()?.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

pub(super) fn check_disk(opts: &BuildOptions, pass: Pass, n: u32) -> Result<(), BuildError> {
    for (dir, need) in disk_needed(opts, pass, n) {
        let _ = std::fs::create_dir_all(&dir);
        if let Some(free) = free_disk(&dir) {
            if free < need {
                const GIB: f64 = (1u64 << 30) as f64;
                return Err(BuildError::DiskFull {
                    seeds: n,
                    dir,
                    need_gib: need as f64 / GIB,
                    free_gib: free as f64 / GIB,
                });
            }
        }
    }
    Ok(())
}

/// A "Key: N kB" line of a /proc file, in bytes.
fn proc_kib(file: &str, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(file).ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The peak resident memory of this process so far (bytes), if the OS says.
pub fn peak_rss() -> Option<u64> {
    proc_kib("/proc/self/status", "VmHWM:")
}

/// The physical memory of this machine (bytes), if the OS says.
pub fn physical_memory() -> Option<u64> {
    proc_kib("/proc/meminfo", "MemTotal:")
}

/// What every kind of build checks before any work, so that it is refused in seconds rather
/// than fail (or swap) hours in: the layer range, the memory its largest layer needs
/// (`need`, bytes for a layer), the thread count. Then it locks `folder` and starts the
/// thread pool; the lock is held as long as the returned file.
pub(crate) fn prepare(
    opts: &BuildOptions,
    need: impl Fn(u32) -> u64,
    folder: &Path,
) -> Result<(rayon::ThreadPool, File), BuildError> {
    let pool = prepare_pool(opts, need)?;
    let lock = lock_folder(folder)?;
    Ok((pool, lock))
}

/// The checks of [`prepare`] and the thread pool, without the lock.
pub(super) fn prepare_pool(
    opts: &BuildOptions,
    need: impl Fn(u32) -> u64,
) -> Result<rayon::ThreadPool, BuildError> {
    if opts.max_seeds > MAX_SEEDS {
        return Err(BuildError::TooManySeeds(opts.max_seeds));
    }
    if opts.max_seeds > MAX_SOLVABLE_SEEDS {
        return Err(BuildError::TooLarge {
            seeds: opts.max_seeds,
            limit: MAX_SOLVABLE_SEEDS,
        });
    }
    if let Some(limit) = opts.memory_limit.or_else(physical_memory) {
        let need = need(opts.max_seeds);
        if need > limit {
            const GIB: f64 = (1u64 << 30) as f64;
            return Err(BuildError::OverMemory {
                seeds: opts.max_seeds,
                need_gib: need as f64 / GIB,
                limit_gib: limit as f64 / GIB,
            });
        }
    }
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(t) = opts.threads {
        if t == 0 || t > MAX_THREADS {
            return Err(BuildError::ThreadCount(t));
        }
        pool = pool.num_threads(t);
    }
    pool.build()
        .map_err(|e| BuildError::Threads(opts.threads.unwrap_or(0), e.to_string()))
}

/// Takes the lock of the rule set's folder under the scratch root of a build that keeps its
/// lean scratch outside the database folder ([`lean::LeanOptions::scratch`]), as the
/// database's folder is locked: two builds of different databases given one scratch folder
/// would otherwise write into each other's runs and checkpoints. A scratch under the
/// database folder (the default, or the scratch root given as the database folder) is
/// covered by the database's lock.
pub(crate) fn lock_scratch(opts: &BuildOptions) -> Result<Option<File>, BuildError> {
    let Some(root) = &opts.lean.scratch else {
        return Ok(None);
    };
    let dir = store::rules_dir(root, opts.rules);
    store::check_folder(&dir)?;
    std::fs::create_dir_all(&dir).map_err(|source| BuildError::Lock {
        path: lock_path(&dir),
        source,
    })?;
    // The database's own lock file: this process holds it already, and a second lock on
    // it would find it held.
    let db_dir = store::rules_dir(&opts.db, opts.rules);
    if let (Ok(a), Ok(b)) = (dir.canonicalize(), db_dir.canonicalize()) {
        if a == b {
            return Ok(None);
        }
    }
    lock_folder(&dir).map(Some)
}

/// Takes the lock a build holds on the folder of `tables` of `rules` under `db`, for a
/// command that re-writes finished layers there (`awari recode`): while it is held, no
/// build and no other such command writes into the folder, so no two writers share a
/// temporary file. Held as long as the returned file; the operating system drops it when
/// the process ends, however it ends.
///
/// # Errors
///
/// [`BuildError::Locked`] when another process holds it (naming that process), or the
/// folder or its lock file cannot be created or opened.
pub fn lock_tables(db: &Path, rules: Rules, tables: Tables) -> Result<File, BuildError> {
    lock_folder(&store::rules_dir(&tables.root(db), rules))
}

/// The file whose lock a build holds: `DIR/<rules>/build.lock`.
pub(crate) fn lock_path(rules_dir: &Path) -> PathBuf {
    rules_dir.join("build.lock")
}

/// Takes the build lock of a rule set's folder (creating the folder), writing this process's
/// id into the lock file for the error a second build prints. The operating system drops
/// the lock when the process ends, however it ends, so a killed build never leaves the
/// folder locked.
fn lock_folder(dir: &Path) -> Result<File, BuildError> {
    let path = lock_path(dir);
    let lock_err = |source| BuildError::Lock {
        path: path.clone(),
        source,
    };
    // A folder that cannot be reached says why, rather than a failure to create the lock.
    store::check_folder(dir)?;
    std::fs::create_dir_all(dir).map_err(lock_err)?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)
        .map_err(lock_err)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let holder = std::fs::read_to_string(&path)
                .ok()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "a process that did not say who it is".to_string());
            return Err(BuildError::Locked {
                dir: dir.to_path_buf(),
                holder,
            });
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(lock_err(e)),
    }
    file.set_len(0).map_err(lock_err)?;
    write!(file, "process {}", std::process::id()).map_err(lock_err)?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Rules;

    /// A scratch folder's files are taken off what the layer still needs, in whichever
    /// folder the scratch goes.
    #[test]
    fn a_scratch_folder_s_files_count_toward_the_layer_s_need() {
        let dir = tempfile::tempdir().unwrap();
        for scratch in [None, Some(dir.path().join("elsewhere"))] {
            let mut opts = BuildOptions::new(dir.path().join("db"), Rules::AWARI, 20);
            opts.lean.scratch = scratch;
            let need = |opts: &BuildOptions| disk_needed(opts, Pass::Lean, 20).last().unwrap().1;
            let before = need(&opts);
            let folder = opts.lean.scratch_for(&opts.db, opts.rules, 20);
            std::fs::create_dir_all(folder.join("sub")).unwrap();
            std::fs::write(folder.join("a.run"), vec![1u8; 3000]).unwrap();
            std::fs::write(folder.join("checkpoint"), vec![2u8; 1000]).unwrap();
            std::fs::write(folder.join("sub").join("not-counted"), vec![3u8; 500]).unwrap();
            assert_eq!(need(&opts), before - 4000);
            assert_eq!(
                disk_needed(&opts, Pass::InMemory, 20)[0].1,
                index::size(20) + (1 << 20)
            );
            std::fs::remove_dir_all(&folder).unwrap();
        }
    }
}
