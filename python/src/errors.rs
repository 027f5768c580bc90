//! The library's errors as Python exceptions: `LayerMissing` for a layer not built (with the
//! command that builds it), `OSError` for a file, as Python's own, and the build's errors.

use awari::build::BuildError;
use awari::probe::ProbeError;
use awari::store::StoreError;
use pyo3::create_exception;
use pyo3::exceptions::{
    PyKeyboardInterrupt, PyLookupError, PyMemoryError, PyOSError, PyRuntimeError, PyValueError,
};
use pyo3::prelude::*;

create_exception!(
    awari,
    LayerMissing,
    PyLookupError,
    "A board's layer (or a layer its moves lead to) is not built in the database; the \
     message names the layer and the build command that makes it."
);

/// `LayerMissing` with the layer as an attribute, so code can build it and retry.
pub(crate) fn layer_missing(py: Python<'_>, message: String, seeds: u32) -> PyErr {
    let err = LayerMissing::new_err(message);
    // Setting an attribute on a fresh exception object cannot fail in practice; if it did,
    // the message still says everything.
    let _ = err.value(py).setattr("layer", seeds);
    err
}

/// A missing layer's message with the command that builds it, the library's
/// ([`ProbeError::with_build_command`], which the command line says too): the package's
/// documentation promises the remedy as well as what is missing.
pub(crate) fn missing_text(e: &ProbeError) -> String {
    e.with_build_command().unwrap_or_else(|| e.to_string())
}

pub(crate) fn probe_error(py: Python<'_>, e: ProbeError) -> PyErr {
    match e {
        // A layer without its distances is not fully built: the same remedy, a build.
        ProbeError::LayerMissing { seeds, .. } | ProbeError::DistancesMissing { seeds, .. } => {
            layer_missing(py, missing_text(&e), seeds)
        }
        ProbeError::Store(e) => store_error(e),
        ProbeError::History(_) => PyValueError::new_err(e.to_string()),
    }
}

/// Every store error is about a file: unreadable, damaged, of other rules or layer.
pub(crate) fn store_error(e: StoreError) -> PyErr {
    let os = match &e {
        StoreError::Io { path, source } => Some((path.as_path(), source)),
        _ => None,
    };
    os_error(&e, os)
}

/// The one line the command line prints for an error: its message, then each cause's not
/// already said, joined by ": " (a Python message has no other place for the causes).
fn chain_line(e: &(dyn std::error::Error + 'static)) -> String {
    let mut line = String::new();
    let mut cause = Some(e);
    while let Some(c) = cause {
        let text = match c.downcast_ref::<std::io::Error>() {
            Some(io) => strerror(io),
            None => c.to_string(),
        };
        if !text.is_empty() && !line.contains(&text) {
            if !line.is_empty() {
                line.push_str(": ");
            }
            line.push_str(&text);
        }
        cause = c.source();
    }
    line
}

/// What the system said, as Python's `strerror` says it: Rust's "Not a directory (os error
/// 20)" without the number, which `errno` holds.
fn strerror(io: &std::io::Error) -> String {
    let said = io.to_string();
    match io.raw_os_error() {
        Some(errno) => said
            .strip_suffix(&format!(" (os error {errno})"))
            .unwrap_or(&said)
            .to_string(),
        None => said,
    }
}

/// The one conversion of a library error about a file to `OSError`. With the operating
/// system's error in hand (`os`: the file and what the system said) it is the `OSError`
/// Python's own `open` raises, `errno`, `strerror` and `filename` set (and so a subclass
/// such as `NotADirectoryError` or `PermissionError`), so code can test the reason; the
/// library's line is added as a note where it says more than the file and the reason.
/// Otherwise the message is the whole cause chain in one line, as the command line's.
fn os_error(
    e: &(dyn std::error::Error + 'static),
    os: Option<(&std::path::Path, &std::io::Error)>,
) -> PyErr {
    let line = chain_line(e);
    let Some((path, errno, io)) =
        os.and_then(|(path, io)| io.raw_os_error().map(|errno| (path, errno, io)))
    else {
        return PyOSError::new_err(line);
    };
    let strerror = strerror(io);
    // A `str` filename, as `open` gives (a path that is not UTF-8 keeps its bytes as
    // surrogates, as `os.fsdecode` does).
    let err = PyOSError::new_err((errno, strerror.clone(), path.as_os_str().to_os_string()));
    if line != format!("{}: {strerror}", path.display()) {
        Python::attach(|py| {
            // `add_note` is Python 3.11's; before it the standard message stands alone.
            if let Ok(add) = err.value(py).getattr("add_note") {
                let _ = add.call1((line,));
            }
        });
    }
    err
}

pub(crate) fn build_error(e: BuildError) -> PyErr {
    let message = e.to_string();
    match &e {
        // Options out of range, or a pass the tables asked for do not have.
        BuildError::TooManySeeds(_)
        | BuildError::TooLarge { .. }
        | BuildError::ThreadCount(_)
        | BuildError::LeanBounds
        | BuildError::RefineNotOwnRow => PyValueError::new_err(message),
        BuildError::OverMemory { .. } | BuildError::RefineOverMemory { .. } => {
            PyMemoryError::new_err(message)
        }
        BuildError::Cancelled { .. } => PyKeyboardInterrupt::new_err(message),
        BuildError::Threads(..) => PyRuntimeError::new_err(message),
        BuildError::Store(StoreError::Io { path, source }) | BuildError::Lock { path, source } => {
            os_error(&e, Some((path.as_path(), source)))
        }
        BuildError::Damaged(_)
        | BuildError::Store(_)
        | BuildError::DiskFull { .. }
        | BuildError::Locked { .. }
        | BuildError::ScratchElsewhere { .. } => os_error(&e, None),
    }
}
