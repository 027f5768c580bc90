//! `--layers` ranges: `a..b` (inclusive), `a..=b`, or a single layer; and the layers a
//! command covers when it is not given.

use anyhow::{anyhow, bail, Result};
use awari::{BoundsDatabase, Database, OwnRowTables};
use std::str::FromStr;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayerRange {
    pub first: u32,
    pub last: u32,
}

impl FromStr for LayerRange {
    type Err = String;
    fn from_str(s: &str) -> Result<LayerRange, String> {
        let bad =
            || format!("'{s}' is not a layer range (expected a..b, a..=b or n, with a <= b <= 48)");
        let parse = |t: &str| t.trim().parse::<u32>().map_err(|_| bad());
        let (first, last) = match s.split_once("..") {
            Some((a, b)) => (parse(a)?, parse(b.strip_prefix('=').unwrap_or(b))?),
            None => {
                let n = parse(s)?;
                (n, n)
            }
        };
        if first > last || last > awari::MAX_SEEDS {
            return Err(bad());
        }
        Ok(LayerRange { first, last })
    }
}

/// The layers a command on the values covers: `layers`, or every layer present.
pub fn values_span(db: &Database, layers: Option<LayerRange>) -> Result<(u32, u32)> {
    match layers {
        Some(r) => Ok((r.first, r.last)),
        None => {
            let present: Vec<u32> = (0..=awari::MAX_SEEDS)
                .filter(|&n| db.layer(n).is_some())
                .collect();
            match (present.first(), present.last()) {
                (Some(&a), Some(&b)) => Ok((a, b)),
                _ => bail!(
                    "no layers of '{}' in {}; run: awari build --rules {} --db {}",
                    db.rules(),
                    db.dir().display(),
                    db.rules(),
                    awari::store::shell_word(db.dir())
                ),
            }
        }
    }
}

/// The layers a command on the bounds covers: `layers`, or `0..=` the last of the layers
/// complete from 0; each of them built.
pub fn bounds_span(db: &BoundsDatabase, layers: Option<LayerRange>) -> Result<(u32, u32)> {
    let top = db
        .complete_up_to()
        .ok_or_else(|| anyhow!("no bounds layer is built for rules '{}'", db.rules()))?;
    Ok(match layers {
        Some(r) => {
            if r.last > top {
                bail!(
                    "bounds layer {} is not built (layers 0..={top} are)",
                    r.last
                );
            }
            (r.first, r.last)
        }
        None => (0, top),
    })
}

/// The layers a command on the own-row values covers: `layers`, or `0..=` the last of the
/// layers complete from 0; each of them built.
pub fn own_row_span(tables: &OwnRowTables, layers: Option<LayerRange>) -> Result<(u32, u32)> {
    let top = tables.complete_up_to().ok_or_else(|| {
        anyhow!(
            "no own-row layer ({} repetition) is built for rules '{}'",
            tables.repetition().name(),
            tables.rules()
        )
    })?;
    Ok(match layers {
        Some(range) if range.last > top => bail!(
            "own-row layer {} is not built (layers 0..={top} are)",
            range.last
        ),
        Some(range) => (range.first, range.last),
        None => (0, top),
    })
}
