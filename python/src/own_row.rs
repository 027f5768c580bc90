//! The own-row rule: the `OwnRowDatabase` class (values and bounds probed with a game's
//! history) and `own_row_history`, the history a line of moves leaves.

use crate::errors::{probe_error, store_error};
use crate::rows::{boards_of_rows, row_error, rows_of, Count, RowError};
use crate::{board_of, board_tuple, budget_of, repetition_of, rules_of};
use awari::probe::ProbeError;
use awari::{Board, Repetition, Tables};
use numpy::{IntoPyArray, PyArray2, PyArrayMethods, PyReadonlyArray2};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use std::path::PathBuf;

/// A move under the own-row rule: (pit, captured, child, ends by repetition, low, high).
type OwnRowMoveTuple<'py> = (u8, u8, Bound<'py, PyTuple>, bool, i8, i8);

/// An answer under the own-row rule: ((low, high, nodes, stuck), the moves, the best moves'
/// pits).
type OwnRowAnswerTuple<'py> = ((i8, i8, u64, bool), Vec<OwnRowMoveTuple<'py>>, Vec<u8>);

/// The own-row values and the bounds of one rules preset, probed with a game's history.
#[pyclass(frozen, module = "awari._awari")]
pub(crate) struct OwnRowDatabase {
    inner: awari::BoundsDatabase,
    repetition: Repetition,
    /// The folder as given, for `repr`.
    path: PathBuf,
}

fn history_of(history: &Bound<'_, PyAny>) -> PyResult<Vec<Board>> {
    if history.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(
            "a history is a sequence of boards, not a string",
        ));
    }
    let items: Vec<Bound<'_, PyAny>> = history
        .extract()
        .map_err(|_| PyTypeError::new_err("a history is a sequence of boards"))?;
    items
        .iter()
        .enumerate()
        .map(|(i, b)| {
            board_of(b).map_err(|e| {
                let py = history.py();
                PyErr::from_type(e.get_type(py), format!("history[{i}]: {}", e.value(py)))
            })
        })
        .collect()
}

/// A board, its history and a search budget, each checked: what every own-row question
/// takes.
fn question_of(
    board: &Bound<'_, PyAny>,
    history: &Bound<'_, PyAny>,
    budget: u64,
) -> PyResult<(Board, Vec<Board>, u64)> {
    Ok((board_of(board)?, history_of(history)?, budget_of(budget)?))
}

#[pymethods]
impl OwnRowDatabase {
    #[new]
    #[pyo3(signature = (path, rules = "abapa", repetition = "first"))]
    fn new(py: Python<'_>, path: PathBuf, rules: &str, repetition: &str) -> PyResult<Self> {
        let rules = rules_of(rules)?;
        let repetition = repetition_of(repetition)?;
        let inner = py
            .detach(|| awari::BoundsDatabase::open(&path, rules))
            .map_err(store_error)?;
        Ok(OwnRowDatabase {
            inner,
            repetition,
            path,
        })
    }

    #[getter]
    fn rules(&self) -> &'static str {
        self.inner.rules().name()
    }

    #[getter]
    fn repetition(&self) -> &'static str {
        self.repetition.name()
    }

    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// The largest n such that own-row layers 0..=n are all present.
    fn complete_up_to(&self) -> Option<u32> {
        self.tables().complete_up_to()
    }

    /// (low, high, nodes, stuck) of the board after the history.
    fn value(
        &self,
        py: Python<'_>,
        board: &Bound<'_, PyAny>,
        history: &Bound<'_, PyAny>,
        budget: u64,
    ) -> PyResult<(i8, i8, u64, bool)> {
        let (board, history, budget) = question_of(board, history, budget)?;
        let p = py
            .detach(|| self.tables().value(&board, &history, budget))
            .map_err(|e| probe_error(py, e))?;
        Ok((p.low, p.high, p.nodes, p.stuck))
    }

    /// ((low, high, nodes, stuck), moves as tuples, the best moves' pits) of the board after the
    /// history.
    fn answer<'py>(
        &self,
        py: Python<'py>,
        board: &Bound<'py, PyAny>,
        history: &Bound<'py, PyAny>,
        budget: u64,
    ) -> PyResult<OwnRowAnswerTuple<'py>> {
        let (board, history, budget) = question_of(board, history, budget)?;
        let a = py
            .detach(|| self.tables().answer(&board, &history, budget))
            .map_err(|e| probe_error(py, e))?;
        let moves = a
            .moves
            .iter()
            .map(|m| {
                Ok((
                    m.pit,
                    m.captured,
                    board_tuple(py, &m.child)?,
                    m.ends_by_repetition,
                    m.low,
                    m.high,
                ))
            })
            .collect::<PyResult<Vec<_>>>()?;
        let best = a.best_moves().iter().map(|m| m.pit).collect();
        Ok((
            (a.value.low, a.value.high, a.value.nodes, a.value.stuck),
            moves,
            best,
        ))
    }

    fn intervals_u8<'py>(
        &self,
        py: Python<'py>,
        array: PyReadonlyArray2<'py, u8>,
    ) -> PyResult<Bound<'py, PyArray2<i8>>> {
        self.intervals_of(py, array)
    }

    fn intervals_i64<'py>(
        &self,
        py: Python<'py>,
        array: PyReadonlyArray2<'py, i64>,
    ) -> PyResult<Bound<'py, PyArray2<i8>>> {
        self.intervals_of(py, array)
    }

    fn __repr__(&self) -> String {
        format!(
            "awari.OwnRowDatabase({:?}, rules={:?}, repetition={:?})",
            self.path.display().to_string(),
            self.inner.rules().name(),
            self.repetition.name()
        )
    }
}

impl OwnRowDatabase {
    /// The library's view of the own-row tables of this repetition.
    fn tables(&self) -> awari::OwnRowTables<'_> {
        self.inner.own_row(self.repetition)
    }

    /// The intervals with an empty history of the rows of `array` (an (N, 2) array: low,
    /// high), the GIL released for the checks and the lookups.
    fn intervals_of<'py, T: Count>(
        &self,
        py: Python<'py>,
        array: PyReadonlyArray2<'py, T>,
    ) -> PyResult<Bound<'py, PyArray2<i8>>> {
        let flat = rows_of(&array)?;
        let tables = self.tables();
        let result = py.detach(|| -> Result<Vec<(i8, i8)>, RowError> {
            let boards = boards_of_rows(flat, |seeds| {
                // The error the one-at-a-time probe gives: the bounds' layer.
                (!tables.has_intervals(seeds)).then(|| ProbeError::LayerMissing {
                    tables: Tables::Bounds,
                    seeds,
                    rules: tables.rules(),
                    dir: tables.dir().to_path_buf(),
                })
            })?;
            tables
                .intervals(&boards)
                .map_err(|e| RowError::Missing(usize::MAX, e))
        });
        match result {
            Ok(pairs) => {
                let flat: Vec<i8> = pairs.into_iter().flat_map(|(l, h)| [l, h]).collect();
                let n = flat.len() / 2;
                Ok(flat.into_pyarray(py).reshape([n, 2])?)
            }
            Err(e) => Err(row_error(py, e)),
        }
    }
}

/// The board after playing `pits` from `start`, and its history under the own-row rule
/// (the library's `own_row_history`).
#[pyfunction]
#[pyo3(signature = (start, pits, rules = "abapa", repetition = "first"))]
pub(crate) fn own_row_history<'py>(
    py: Python<'py>,
    start: &Bound<'py, PyAny>,
    pits: Vec<i64>,
    rules: &str,
    repetition: &str,
) -> PyResult<(Bound<'py, PyTuple>, Vec<Bound<'py, PyTuple>>)> {
    let rules = rules_of(rules)?;
    let repetition = repetition_of(repetition)?;
    let start = board_of(start)?;
    let pits = pits
        .iter()
        .enumerate()
        .map(|(i, &p)| match u8::try_from(p) {
            Ok(p @ 0..=5) => Ok(p),
            _ => Err(PyValueError::new_err(format!(
                "move {}: {p} is not a pit 0..5",
                i + 1
            ))),
        })
        .collect::<PyResult<Vec<u8>>>()?;
    // The library's messages number pits 1..6, as the command line does; the package
    // numbers them 0..5, so an illegal pit is refused here first, in the package's terms.
    let mut at = start;
    for (i, &pit) in pits.iter().enumerate() {
        let moves = rules.legal_moves(&at);
        if moves.is_empty() {
            break;
        }
        match moves.iter().find(|m| m.pit == pit) {
            Some(m) => at = m.child,
            None => {
                return Err(PyValueError::new_err(format!(
                    "move {}: pit {pit} is not a legal move",
                    i + 1
                )))
            }
        }
    }
    let (board, history) =
        awari::own_row_history(rules, repetition, &start, &pits).map_err(|e| probe_error(py, e))?;
    Ok((
        board_tuple(py, &board)?,
        history
            .iter()
            .map(|b| board_tuple(py, b))
            .collect::<PyResult<Vec<_>>>()?,
    ))
}
