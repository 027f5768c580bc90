//! The values' `Database` class: a board's value, its moves, best play and the search above
//! the tables, one board at a time or the rows of an array.

use crate::errors::{probe_error, store_error};
use crate::rows::{boards_of_rows, row_error, rows_of, Count, RowError};
use crate::{board_of, board_tuple, rules_of};
use awari::probe::{ProbeError, PvEnd};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray2};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::Duration;

type MoveTuple = (u8, u8, i8);

#[pyclass(frozen, module = "awari._awari")]
pub(crate) struct Database {
    /// The tables, and the layers `load` holds in memory (the library's
    /// `Database::load`, which `values_many` reads in place).
    inner: awari::Database,
    /// The folder as given, for `repr`.
    path: PathBuf,
}

impl Database {
    /// The values of the rows of `array`, the GIL released for the checks and the probes.
    fn values_of<'py, T: Count>(
        &self,
        py: Python<'py>,
        array: PyReadonlyArray2<'py, T>,
    ) -> PyResult<Bound<'py, PyArray1<i8>>> {
        let flat = rows_of(&array)?;
        let db = &self.inner;
        let result = py.detach(|| -> Result<Vec<i8>, RowError> {
            let boards = boards_of_rows(flat, |seeds| {
                (!db.has_layer(seeds)).then(|| ProbeError::LayerMissing {
                    tables: awari::Tables::Values,
                    seeds,
                    rules: db.rules(),
                    dir: db.dir().to_path_buf(),
                })
            })?;
            // Every layer is present, so only a file can fail from here on.
            db.values_many(&boards)
                .map_err(|e| RowError::Missing(usize::MAX, e))
        });
        match result {
            Ok(values) => Ok(values.into_pyarray(py)),
            Err(e) => Err(row_error(py, e)),
        }
    }
}

fn move_tuple(m: &awari::MoveValue) -> MoveTuple {
    (m.pit, m.captured, m.value)
}

#[pymethods]
impl Database {
    #[new]
    #[pyo3(signature = (path, rules = "awari"))]
    fn new(py: Python<'_>, path: PathBuf, rules: &str) -> PyResult<Self> {
        let rules = rules_of(rules)?;
        let inner = py
            .detach(|| awari::Database::open(&path, rules))
            .map_err(store_error)?;
        Ok(Database { inner, path })
    }

    /// Reads `layers` (default: every layer present) into memory, uncompressed; returns
    /// the bytes now held. Blocks are checked as they are read.
    #[pyo3(signature = (layers = None))]
    fn load(&self, py: Python<'_>, layers: Option<Vec<u32>>) -> PyResult<u64> {
        let wanted = layers.unwrap_or_else(|| self.layers());
        py.detach(|| self.inner.load(&wanted))
            .map_err(|e| probe_error(py, e))
    }

    /// Forgets the layers `load` read.
    fn unload(&self) {
        self.inner.unload();
    }

    /// Bytes held by `load`.
    fn loaded_bytes(&self) -> u64 {
        self.inner.loaded_bytes()
    }

    #[getter]
    fn rules(&self) -> &'static str {
        self.inner.rules().name()
    }

    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// The layers present, in order.
    fn layers(&self) -> Vec<u32> {
        (0..=awari::MAX_SEEDS)
            .filter(|&n| self.inner.has_layer(n))
            .collect()
    }

    fn complete_up_to(&self) -> Option<u32> {
        self.inner.complete_up_to()
    }

    fn value(&self, py: Python<'_>, board: &Bound<'_, PyAny>) -> PyResult<i8> {
        let board = board_of(board)?;
        self.inner.value(&board).map_err(|e| probe_error(py, e))
    }

    fn moves(&self, py: Python<'_>, board: &Bound<'_, PyAny>) -> PyResult<Vec<MoveTuple>> {
        let board = board_of(board)?;
        let moves = self
            .inner
            .moves_with_values(&board)
            .map_err(|e| probe_error(py, e))?;
        Ok(moves.iter().map(move_tuple).collect())
    }

    fn best_moves(&self, py: Python<'_>, board: &Bound<'_, PyAny>) -> PyResult<Vec<MoveTuple>> {
        let board = board_of(board)?;
        let moves = self
            .inner
            .best_moves(&board)
            .map_err(|e| probe_error(py, e))?;
        Ok(moves.iter().map(move_tuple).collect())
    }

    fn perfect_move(
        &self,
        py: Python<'_>,
        board: &Bound<'_, PyAny>,
    ) -> PyResult<Option<MoveTuple>> {
        let board = board_of(board)?;
        let m = py
            .detach(|| self.inner.perfect_move(&board))
            .map_err(|e| probe_error(py, e))?;
        Ok(m.as_ref().map(move_tuple))
    }

    /// (steps as (board, value, pit, captured), last board, end, end value or None).
    #[allow(clippy::type_complexity)]
    fn principal_variation<'py>(
        &self,
        py: Python<'py>,
        board: &Bound<'py, PyAny>,
        max_plies: usize,
    ) -> PyResult<(
        Vec<(Bound<'py, PyTuple>, i8, u8, u8)>,
        Bound<'py, PyTuple>,
        &'static str,
        Option<i8>,
    )> {
        let board = board_of(board)?;
        let pv = py
            .detach(|| self.inner.principal_variation(&board, max_plies))
            .map_err(|e| probe_error(py, e))?;
        let steps = pv
            .steps
            .iter()
            .map(|s| Ok((board_tuple(py, &s.board)?, s.value, s.pit, s.captured)))
            .collect::<PyResult<Vec<_>>>()?;
        let (end, value) = match pv.end {
            PvEnd::GameOver { value } => ("game over", Some(value)),
            PvEnd::Repetition => ("repetition", None),
            PvEnd::Limit => ("limit", None),
        };
        Ok((steps, board_tuple(py, &pv.last)?, end, value))
    }

    fn outcome(
        &self,
        py: Python<'_>,
        board: &Bound<'_, PyAny>,
        captured_mover: u32,
        captured_opponent: u32,
    ) -> PyResult<(&'static str, f64, f64)> {
        let board = board_of(board)?;
        if u64::from(captured_mover) + u64::from(captured_opponent) + u64::from(board.seeds())
            > u64::from(awari::MAX_SEEDS)
        {
            return Err(PyValueError::new_err(format!(
                "captured seeds {captured_mover} and {captured_opponent} and the {} on the board make more than the {} of the game",
                board.seeds(),
                awari::MAX_SEEDS
            )));
        }
        let o = self
            .inner
            .outcome(&board, captured_mover, captured_opponent)
            .map_err(|e| probe_error(py, e))?;
        Ok((o.verdict.as_str(), o.mover_score, o.opponent_score))
    }

    fn values_u8<'py>(
        &self,
        py: Python<'py>,
        array: PyReadonlyArray2<'py, u8>,
    ) -> PyResult<Bound<'py, PyArray1<i8>>> {
        self.values_of(py, array)
    }

    fn values_i64<'py>(
        &self,
        py: Python<'py>,
        array: PyReadonlyArray2<'py, i64>,
    ) -> PyResult<Bound<'py, PyArray1<i8>>> {
        self.values_of(py, array)
    }

    /// The library's search (tables at the leaves) for boards above the tables:
    /// (value, exact, depth, best pits, moves as (pit, captured, value)).
    #[allow(clippy::type_complexity)]
    fn analyse(
        &self,
        py: Python<'_>,
        board: &Bound<'_, PyAny>,
        think_seconds: f64,
    ) -> PyResult<(i8, bool, u32, Vec<u32>, Vec<MoveTuple>)> {
        let board = board_of(board)?;
        let most = awari::search::MAX_THINK.as_secs_f64();
        if !(think_seconds.is_finite() && (0.0..=most).contains(&think_seconds)) {
            return Err(PyValueError::new_err(format!(
                "think_seconds must be a number of seconds from 0 to {most:.0} (an hour)"
            )));
        }
        let limits = awari::search::Limits::think(Duration::from_secs_f64(think_seconds));
        // The search runs on its own thread while this one, holding the interpreter
        // between waits, looks for signals: a Ctrl-C stops the search within moments
        // instead of at the end of its think time.
        let stop = AtomicBool::new(false);
        let mut interrupt: Option<PyErr> = None;
        let found = std::thread::scope(|scope| {
            let (tx, rx) = std::sync::mpsc::channel();
            let (db, stop) = (&self.inner, &stop);
            std::thread::Builder::new()
                .name("awari-analyse".to_string())
                .spawn_scoped(scope, move || {
                    let _ = tx.send(awari::search::analyse_until(db, &board, &limits, stop));
                })
                .map_err(|e| PyRuntimeError::new_err(format!("cannot start the search: {e}")))?;
            let mut rx = rx;
            loop {
                // The receiver goes into the wait and comes back (it is not `Sync`).
                let (back, got) = py.detach(move || {
                    let got = rx.recv_timeout(Duration::from_millis(20));
                    (rx, got)
                });
                rx = back;
                match got {
                    Ok(found) => return Ok(found),
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                        return Err(PyRuntimeError::new_err("the search thread panicked"))
                    }
                }
                if interrupt.is_none() {
                    if let Err(e) = py.check_signals() {
                        stop.store(true, Relaxed);
                        interrupt = Some(e);
                    }
                }
            }
        })?;
        if let Some(signal) = interrupt {
            return Err(signal);
        }
        let a = match found.map_err(|e| probe_error(py, e))? {
            Some(a) => a,
            // Only a signal stops the search, and it has returned above.
            None => return Err(PyRuntimeError::new_err("the search was stopped")),
        };
        Ok((
            a.value,
            a.exact,
            a.depth,
            // As ints: a Vec<u8> would arrive in Python as bytes.
            a.best.iter().map(|&p| u32::from(p)).collect(),
            a.moves.iter().map(move_tuple).collect(),
        ))
    }

    fn __repr__(&self) -> String {
        format!(
            "awari.Database({:?}, rules={:?})",
            self.path.display().to_string(),
            self.inner.rules().name()
        )
    }
}
