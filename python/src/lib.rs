//! `awari._awari`: the compiled half of the Python package. The public API, its types and
//! its documentation live in `awari/__init__.py`, which wraps these functions; this file
//! only converts between Python objects and the library's types, and maps the library's
//! errors to Python exceptions with the same one-line messages (an operating system's
//! error as the `OSError` Python itself raises, see `os_error`).

use awari::build::{BuildError, BuildObserver, BuildOptions, LayerReport};
use awari::probe::{ProbeError, PvEnd};
use awari::solve::lean::LeanObserver;
use awari::solve::{Phase, SolveObserver};
use awari::store::StoreError;
use awari::{Board, BoardError, Repetition, Rules, Tables, PITS};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray2, PyUntypedArrayMethods,
};
use pyo3::create_exception;
use pyo3::exceptions::{
    PyKeyboardInterrupt, PyLookupError, PyMemoryError, PyOSError, PyRuntimeError, PyTypeError,
    PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

create_exception!(
    awari,
    LayerMissing,
    PyLookupError,
    "A board's layer (or a layer its moves lead to) is not built in the database; the \
     message names the layer and the build command that makes it."
);

fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// `LayerMissing` with the layer as an attribute, so code can build it and retry.
fn layer_missing(py: Python<'_>, message: String, seeds: u32) -> PyErr {
    let err = LayerMissing::new_err(message);
    // Setting an attribute on a fresh exception object cannot fail in practice; if it did,
    // the message still says everything.
    let _ = err.value(py).setattr("layer", seeds);
    err
}

/// A missing layer's message with the command that builds it: the library's message says
/// what is missing, and the package's documentation promises the remedy too.
fn missing_text(e: &ProbeError) -> String {
    match e {
        ProbeError::LayerMissing {
            tables,
            seeds,
            rules,
            dir,
        } => format!(
            "{e}; run: awari build{} --rules {rules} --max-seeds {seeds} --db {}",
            cycles_option(*tables),
            awari::store::shell_word(dir)
        ),
        ProbeError::DistancesMissing {
            seeds, rules, dir, ..
        } => format!(
            "{e}; build the layer again: awari build --rules {rules} --max-seeds {seeds} --db {}",
            awari::store::shell_word(dir)
        ),
        ProbeError::Store(_) | ProbeError::History(_) => e.to_string(),
    }
}

/// The `awari build` option that selects tables of kind `tables` (with its leading space),
/// as the command line names them; nothing for the values, the default.
fn cycles_option(tables: Tables) -> String {
    if tables == Tables::default() {
        String::new()
    } else {
        format!(" --cycles {tables}")
    }
}

fn probe_error(py: Python<'_>, e: ProbeError) -> PyErr {
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
fn store_error(e: StoreError) -> PyErr {
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

fn build_error(e: BuildError) -> PyErr {
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

/// The kind of tables named as the command line's `--cycles` names it ([`Tables::name`]).
fn tables_of(cycles: &str) -> PyResult<Tables> {
    cycles.parse().map_err(value_error)
}

fn repetition_of(name: &str) -> PyResult<Repetition> {
    match name {
        "first" => Ok(Repetition::First),
        "third" => Ok(Repetition::Third),
        _ => Err(PyValueError::new_err(format!(
            "repetition must be 'first' or 'third', not {name:?}"
        ))),
    }
}

/// A search budget, checked as the command line checks `--search-budget`: a search of no
/// node proves nothing.
fn budget_of(nodes: u64) -> PyResult<u64> {
    if nodes == 0 {
        return Err(PyValueError::new_err(
            "search_budget must be at least 1 node",
        ));
    }
    Ok(nodes)
}

fn rules_of(name: &str) -> PyResult<Rules> {
    name.parse().map_err(value_error)
}

/// A board from a string in the CLI's notation or a sequence of 12 integers (a list, a
/// tuple, a numpy row). The messages are the library's, so Python and the CLI say the same.
fn board_of(obj: &Bound<'_, PyAny>) -> PyResult<Board> {
    if let Ok(text) = obj.cast::<PyString>() {
        return text.to_str()?.parse().map_err(value_error);
    }
    let items: Vec<Bound<'_, PyAny>> = obj.extract().map_err(|_| {
        PyTypeError::new_err(format!(
            "a board is a string or a sequence of 12 integers, not {}",
            obj.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_else(|_| "this object".to_string())
        ))
    })?;
    if items.len() != PITS {
        return Err(value_error(BoardError::WrongPitCount {
            found: items.len(),
        }));
    }
    let mut pits = [0u8; PITS];
    for (i, item) in items.iter().enumerate() {
        let pit = i + 1;
        // Read through Python's int (`__index__`), so numpy integers work and floats don't.
        let shown = || {
            item.str()
                .map(|s| s.to_string())
                .unwrap_or_else(|_| "?".to_string())
        };
        let count: i128 = match item.extract() {
            Ok(c) => c,
            Err(_) if item.is_instance_of::<pyo3::types::PyInt>() => {
                // Beyond 128 bits: the sign says which message applies.
                if shown().starts_with('-') {
                    -1
                } else {
                    i128::MAX
                }
            }
            Err(_) => {
                return Err(PyTypeError::new_err(format!(
                    "pit {pit}: {} is not an integer seed count",
                    shown()
                )))
            }
        };
        if count < 0 {
            return Err(value_error(BoardError::Negative {
                pit,
                token: shown(),
            }));
        }
        if count > i128::from(awari::MAX_SEEDS) {
            return Err(value_error(BoardError::PitTooLarge {
                pit,
                count: shown(),
            }));
        }
        pits[i] = count as u8;
    }
    Board::new(pits).map_err(value_error)
}

fn board_tuple<'py>(py: Python<'py>, board: &Board) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, board.pits().iter().map(|&p| u32::from(p)))
}

/// A board as 12 integers, checked (`awari.board`).
#[pyfunction]
fn parse_board<'py>(py: Python<'py>, board: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
    board_tuple(py, &board_of(board)?)
}

/// The canonical name of a rules preset.
#[pyfunction]
fn parse_rules(rules: &str) -> PyResult<&'static str> {
    Ok(rules_of(rules)?.name())
}

/// Legal moves: (pit, captured, child as 12 ints from the opponent's side).
#[pyfunction]
#[pyo3(signature = (board, rules = "awari"))]
fn moves<'py>(
    py: Python<'py>,
    board: &Bound<'py, PyAny>,
    rules: &str,
) -> PyResult<Vec<(u8, u8, Bound<'py, PyTuple>)>> {
    let rules = rules_of(rules)?;
    let board = board_of(board)?;
    rules
        .legal_moves(&board)
        .iter()
        .map(|m| Ok((m.pit, m.captured, board_tuple(py, &m.child)?)))
        .collect()
}

/// The end value for the side to move if the game is over, else None.
#[pyfunction]
#[pyo3(signature = (board, rules = "awari"))]
fn game_over(board: &Bound<'_, PyAny>, rules: &str) -> PyResult<Option<i8>> {
    Ok(rules_of(rules)?.game_over_value(&board_of(board)?))
}

type MoveTuple = (u8, u8, i8);
/// A layer's report: (seeds, positions, built, seconds, bytes).
type ReportTuple = (u32, u64, bool, f64, u64);

#[pyclass(frozen, module = "awari._awari")]
struct Database {
    /// The tables, and the layers `load` holds in memory (the library's
    /// `Database::load`, which `values_many` reads in place).
    inner: awari::Database,
    /// The folder as given, for `repr`.
    path: PathBuf,
}

/// Integer types `values` reads without a copy.
trait Count: numpy::Element + Copy + Sync {
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
enum RowError {
    Board(usize, BoardError),
    Missing(usize, ProbeError),
}

/// The boards of the rows of a C-contiguous (N, 12) array, each checked, and that its
/// layer can be read (`missing` gives the error of a layer that cannot).
fn boards_of_rows<T: Count>(
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
fn rows_of<'a, 'py, T: Count>(array: &'a PyReadonlyArray2<'py, T>) -> PyResult<&'a [T]> {
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
fn row_error(py: Python<'_>, e: RowError) -> PyErr {
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

/// A move under the own-row rule: (pit, captured, child, ends by repetition, low, high).
type OwnRowMoveTuple<'py> = (u8, u8, Bound<'py, PyTuple>, bool, i8, i8);

/// An answer under the own-row rule: ((low, high, nodes, stuck), the moves, the best moves'
/// pits).
type OwnRowAnswerTuple<'py> = ((i8, i8, u64, bool), Vec<OwnRowMoveTuple<'py>>, Vec<u8>);

/// The own-row values and the bounds of one rules preset, probed with a game's history.
#[pyclass(frozen, module = "awari._awari")]
struct OwnRowDatabase {
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
fn own_row_history<'py>(
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

/// The build's observer: a progress bar on stderr (indicatif draws nothing when stderr is
/// not a terminal) and the stop flag a Ctrl-C sets.
struct Progress {
    bar: ProgressBar,
    stop: AtomicBool,
}

impl Progress {
    fn new(show: bool) -> Progress {
        let bar = if show {
            ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr())
        } else {
            ProgressBar::hidden()
        };
        bar.set_style(
            ProgressStyle::with_template(
                "layer {prefix:>2} {msg:<10} [{bar:30}] {human_pos}/{human_len} eta {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        Progress {
            bar,
            stop: AtomicBool::new(false),
        }
    }
}

impl SolveObserver for Progress {
    fn phase(&self, seeds: u32, phase: Phase) {
        match phase {
            Phase::Exits => self.bar.set_message("exits"),
            Phase::Threshold(t) => {
                // The thresholds together settle each position at most once: the bar
                // counts them afresh after the exits pass.
                if t == seeds as i8 {
                    self.bar.set_position(0);
                }
                self.bar.set_message(format!("value ±{t}"));
            }
        }
    }
    fn advance(&self, positions: u64) {
        self.bar.inc(positions);
    }
    fn cancelled(&self) -> bool {
        self.stop.load(Relaxed)
    }
}

impl LeanObserver for Progress {}

impl BuildObserver for Progress {
    fn layer_started(&self, seeds: u32, positions: u64) {
        self.bar.reset();
        self.bar.set_length(positions);
        self.bar.set_prefix(seeds.to_string());
    }
    fn layer_done(&self, report: &LayerReport) {
        if report.built {
            self.bar.set_position(report.positions);
        }
    }
}

/// Builds the missing layers on a thread of its own while this one waits for Ctrl-C:
/// Python runs signal handlers only on the main thread, and only when asked.
#[pyfunction]
#[pyo3(signature = (path, rules, max_seeds, progress = true, threads = None, cycles = "share", search_budget = awari::build::DEFAULT_SEARCH_BUDGET))]
#[allow(clippy::too_many_arguments)]
fn build(
    py: Python<'_>,
    path: PathBuf,
    rules: &str,
    max_seeds: u32,
    progress: bool,
    threads: Option<usize>,
    cycles: &str,
    search_budget: u64,
) -> PyResult<Vec<ReportTuple>> {
    let mut opts = BuildOptions::new(path, rules_of(rules)?, max_seeds);
    opts.threads = threads;
    opts.tables = tables_of(cycles)?;
    opts.search_budget = budget_of(search_budget)?;
    let observer = Arc::new(Progress::new(progress));
    let worker = {
        let observer = Arc::clone(&observer);
        std::thread::Builder::new()
            .name("awari-build".to_string())
            .spawn(move || awari::build::build(&opts, &*observer))
            .map_err(|e| PyRuntimeError::new_err(format!("cannot start the build: {e}")))?
    };
    let mut interrupt: Option<PyErr> = None;
    while !worker.is_finished() {
        py.detach(|| std::thread::sleep(Duration::from_millis(20)));
        if interrupt.is_none() {
            if let Err(e) = py.check_signals() {
                observer.stop.store(true, Relaxed);
                interrupt = Some(e);
            }
        }
    }
    let result = worker
        .join()
        .map_err(|_| PyRuntimeError::new_err("the build thread panicked"))?;
    observer.bar.finish_and_clear();
    match (result, interrupt) {
        (Ok(reports), None) => Ok(reports
            .iter()
            .map(|r| (r.seeds, r.positions, r.built, r.seconds, r.bytes))
            .collect()),
        // A KeyboardInterrupt gets the library's message (which layer, and that the same
        // call resumes); another exception from a signal handler goes out as it is.
        (Err(e @ BuildError::Cancelled { .. }), Some(signal))
            if signal.is_instance_of::<PyKeyboardInterrupt>(py) =>
        {
            Err(build_error(e))
        }
        (_, Some(signal)) => Err(signal),
        (Err(e), None) => Err(build_error(e)),
    }
}

#[pymodule]
fn _awari(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("LayerMissing", m.py().get_type::<LayerMissing>())?;
    m.add_class::<Database>()?;
    m.add_class::<OwnRowDatabase>()?;
    m.add("DEFAULT_SEARCH_BUDGET", awari::build::DEFAULT_SEARCH_BUDGET)?;
    // The kinds' names, as the library names them, for `awari.CYCLES`.
    m.add("CYCLES", Tables::ALL.map(Tables::name))?;
    m.add_function(wrap_pyfunction!(own_row_history, m)?)?;
    m.add_function(wrap_pyfunction!(parse_board, m)?)?;
    m.add_function(wrap_pyfunction!(parse_rules, m)?)?;
    m.add_function(wrap_pyfunction!(moves, m)?)?;
    m.add_function(wrap_pyfunction!(game_over, m)?)?;
    m.add_function(wrap_pyfunction!(build, m)?)?;
    Ok(())
}
