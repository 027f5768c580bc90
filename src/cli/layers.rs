//! `--layers` ranges: `a..b` (inclusive), `a..=b`, or a single layer.

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
