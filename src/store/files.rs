//! Opening a table file for reading, and positioned reads of it: what the reader needs of
//! the operating system, apart for each platform.

use super::StoreError;
use std::fs::File;
use std::path::Path;

fn io_error(path: &Path, source: std::io::Error) -> StoreError {
    StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Opens `path` for reading if it is a regular file. The type is checked before the open,
/// since opening a FIFO blocks until a writer comes, and again on the open file.
pub(crate) fn open_regular(path: &Path) -> Result<File, StoreError> {
    let not_a_file = || StoreError::NotAFile {
        path: path.to_path_buf(),
    };
    let meta = std::fs::metadata(path).map_err(|e| io_error(path, e))?;
    if !meta.is_file() {
        return Err(not_a_file());
    }
    let file = File::open(path).map_err(|e| io_error(path, e))?;
    if !file.metadata().map_err(|e| io_error(path, e))?.is_file() {
        return Err(not_a_file());
    }
    Ok(file)
}

/// Fills `buf` from `offset` without moving a shared cursor, so threads can read blocks of
/// one open file at once.
#[cfg(unix)]
pub(crate) fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

/// Windows has no `read_exact_at`: `seek_read` reads at an offset, perhaps short.
#[cfg(windows)]
pub(crate) fn read_exact_at(
    file: &File,
    mut buf: &mut [u8],
    mut offset: u64,
) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, offset) {
            Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Elsewhere there is no positioned read: such a platform can still open the files with
/// [`super::LayerFile::open_mapped`].
#[cfg(not(any(unix, windows)))]
pub(crate) fn read_exact_at(_file: &File, _buf: &mut [u8], _offset: u64) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}
