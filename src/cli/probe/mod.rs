//! `awari probe`: one board, or a batch from stdin, of the kind of tables `--cycles`
//! selects; one module a kind, chosen here once.

mod bounds;
mod own_row;
pub mod values;

use super::args::TableArgs;
use anyhow::Result;
use awari::Tables;

/// What `probe` was asked.
pub struct ProbeRequest {
    pub board: Option<String>,
    pub captured: Option<String>,
    pub json: bool,
    pub batch: bool,
    pub moves: Option<String>,
}

/// Runs `probe`.
pub fn run(tables: &TableArgs, request: ProbeRequest) -> Result<bool> {
    match tables.kind() {
        Tables::Values => values::run(tables, request),
        Tables::Bounds => bounds::run(tables, request),
        Tables::OwnRow(r) => own_row::run(tables, r, request),
    }
}
