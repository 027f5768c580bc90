//! The rows of an (N, 12) numpy array read as boards in place, for the batch lookups of
//! both database classes, and the errors of a refused row.

use crate::errors::{layer_missing, missing_text, store_error};
use awari::probe::ProbeError;
use awari::{Board, BoardError, PITS};
use numpy::{PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Integer types `values` reads without a copy.
pub(crate) trait Count: numpy::Element + Copy + Sync {
    /// The count, if it is one (0..=48).
    fn count(self) -> Option<u8>;
    fn shown(self) -> String;
}

impl Count for u8 {
    #[inline]
    fn count(self) -> Option<u8> {
        (u32::from(self) <= awari::MAX_SEEDS).then_some(self)
    }
    fn shown(self) -> String {
        self.to_string()
    }
}

impl Count for i64 {
    #[inline]
    fn count(self) -> Option<u8> {
        (0..=i64::from(awari::MAX_SEEDS))
            .contains(&self)
            .then_some(self as u8)
    }
    fn shown(self) -> String {
        self.to_string()
    }
}

/// Why a row of `values` was refused.
pub(crate) enum RowError {
    Board(usize, BoardError),
    Missing(usize, ProbeError),
}

/// The boards of the rows of a C-contiguous (N, 12) array, each checked, and that its
/// layer can be read (`missing` gives the error of a layer that cannot).
pub(crate) fn boards_of_rows<T: Count>(
    flat: &[T],
    missing: impl Fn(u32) -> Option<ProbeError>,
) -> Result<Vec<Board>, RowError> {
    let mut boards = Vec::with_capacity(flat.len() / PITS);
    for (row, counts) in flat.chunks_exact(PITS).enumerate() {
        let mut pits = [0u8; PITS];
        for (pit, (&c, p)) in counts.iter().zip(pits.iter_mut()).enumerate() {
            *p = match c.count() {
                Some(x) => x,
                None => {
                    let shown = c.shown();
                    let e = if shown.starts_with('-') {
                        BoardError::Negative {
                            pit: pit + 1,
                            token: shown,
                        }
                    } else {
                        BoardError::PitTooLarge {
                            pit: pit + 1,
                            count: shown,
                        }
                    };
                    return Err(RowError::Board(row, e));
                }
            };
        }
        let board = Board::new(pits).map_err(|e| RowError::Board(row, e))?;
        if let Some(e) = missing(board.seeds()) {
            return Err(RowError::Missing(row, e));
        }
        boards.push(board);
    }
    Ok(boards)
}

/// The flat rows of an (N, 12) array, or the error that says why not.
pub(crate) fn rows_of<'a, 'py, T: Count>(array: &'a PyReadonlyArray2<'py, T>) -> PyResult<&'a [T]> {
    let shape = array.shape();
    if shape[1] != PITS {
        return Err(PyValueError::new_err(format!(
            "values needs an array of shape (N, 12), got (N, {})",
            shape[1]
        )));
    }
    array
        .as_slice()
        .map_err(|_| PyValueError::new_err("values needs a C-contiguous array"))
}

/// The Python error of a refused row (`usize::MAX`: not one row's, a file's).
pub(crate) fn row_error(py: Python<'_>, e: RowError) -> PyErr {
    match e {
        RowError::Board(row, e) => PyValueError::new_err(format!("row {row}: {e}")),
        RowError::Missing(row, e) => match e {
            ProbeError::LayerMissing { seeds, .. } | ProbeError::DistancesMissing { seeds, .. } => {
                layer_missing(py, format!("row {row}: {}", missing_text(&e)), seeds)
            }
            ProbeError::Store(e) => store_error(e),
            ProbeError::History(_) => PyValueError::new_err(e.to_string()),
        },
    }
}
