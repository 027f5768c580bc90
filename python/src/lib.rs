//! `awari._awari`: the compiled half of the Python package. The public API, its types and
//! its documentation live in `awari/__init__.py`, which wraps these functions; this crate
//! only converts between Python objects and the library's types, and maps the library's
//! errors to Python exceptions with the same one-line messages (`errors`). This file holds
//! the module itself and the conversions every part shares (a board, rules, a budget).

mod build;
mod errors;
mod own_row;
mod rows;
mod values;

use awari::{Board, BoardError, Repetition, Rules, Tables, PITS};
use errors::LayerMissing;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};

pub(crate) fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The kind of tables named as the command line's `--cycles` names it ([`Tables::name`]).
pub(crate) fn tables_of(cycles: &str) -> PyResult<Tables> {
    cycles.parse().map_err(value_error)
}

pub(crate) fn repetition_of(name: &str) -> PyResult<Repetition> {
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
pub(crate) fn budget_of(nodes: u64) -> PyResult<u64> {
    if nodes == 0 {
        return Err(PyValueError::new_err(
            "search_budget must be at least 1 node",
        ));
    }
    Ok(nodes)
}

pub(crate) fn rules_of(name: &str) -> PyResult<Rules> {
    name.parse().map_err(value_error)
}

/// A board from a string in the CLI's notation or a sequence of 12 integers (a list, a
/// tuple, a numpy row). The messages are the library's, so Python and the CLI say the same.
pub(crate) fn board_of(obj: &Bound<'_, PyAny>) -> PyResult<Board> {
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

pub(crate) fn board_tuple<'py>(py: Python<'py>, board: &Board) -> PyResult<Bound<'py, PyTuple>> {
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

#[pymodule]
fn _awari(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("LayerMissing", m.py().get_type::<LayerMissing>())?;
    m.add_class::<values::Database>()?;
    m.add_class::<own_row::OwnRowDatabase>()?;
    m.add("DEFAULT_SEARCH_BUDGET", awari::build::DEFAULT_SEARCH_BUDGET)?;
    // The kinds' names, as the library names them, for `awari.CYCLES`.
    m.add("CYCLES", Tables::ALL.map(Tables::name))?;
    m.add_function(wrap_pyfunction!(own_row::own_row_history, m)?)?;
    m.add_function(wrap_pyfunction!(parse_board, m)?)?;
    m.add_function(wrap_pyfunction!(parse_rules, m)?)?;
    m.add_function(wrap_pyfunction!(moves, m)?)?;
    m.add_function(wrap_pyfunction!(game_over, m)?)?;
    m.add_function(wrap_pyfunction!(build::build, m)?)?;
    Ok(())
}
