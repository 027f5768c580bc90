//! awari: exact endgame databases for Awari / Oware by retrograde analysis.
//!
//! The pipeline, one module each: [`rules`] (moves) → [`index`] (perfect hash of a layer)
//! → [`solve`] (the retrograde pass) → [`store`] (compressed layer files) → [`probe`]
//! (values, best moves, principal variations).

pub mod board;
pub mod index;
pub mod rules;
pub mod solve;

pub use board::{Board, BoardError, MAX_SEEDS, PITS, ROW};
pub use rules::{GrandSlam, Move, MoveList, Rules, RulesError, Turn};
