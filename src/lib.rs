//! awari: exact endgame databases for Awari / Oware by retrograde analysis.
//!
//! The pipeline, one module each: [`rules`] (moves) → [`index`] (perfect hash of a layer)
//! → [`solve`] (the retrograde pass) → [`store`] (compressed layer files) → [`build`] (the
//! layer-by-layer driver) → [`probe`] (values, best moves, principal variations) and
//! [`verify`] (the stored tables re-checked against the rules). Beside the values, each
//! stage also handles the bounds tables: the pair of guaranteed bounds of every position
//! when endless play ends with each side keeping its own row ([`probe::BoundsDatabase`]).

#![warn(missing_docs, missing_debug_implementations)]

pub mod board;
pub mod build;
pub mod game;
pub mod index;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod probe;
pub mod rules;
pub mod search;
pub mod solve;
pub mod store;
pub mod verify;

pub use board::{Board, BoardError, MAX_SEEDS, PITS, ROW};
pub use probe::{
    Bounds, BoundsDatabase, Database, MoveBounds, MoveValue, Outcome, PrincipalVariation,
    ProbeError, PvEnd, PvStep, Verdict,
};
pub use rules::{GrandSlam, Move, MoveList, Rules, RulesError, Turn};
