//! The own-row rule's exact values (`awari::solve::own_row`) against the brute-force search
//! of the real game in `common::real_game`, written from the rule alone: a capture-free game
//! ends at the position (board and side to move) that occurs for the 2nd (first repetition)
//! or 3rd time since the last capture, each side keeping the seeds on its own row; a capture
//! empties the history.

use awari::index;
use awari::solve::bounds::{solve_all_bounds, BoundsLayer};
use awari::solve::own_row::{prove_in_memory, solve_all, Proof, Repetition};
use awari::{Board, Rules};

mod common;
use common::boards_of_layer;
use common::real_game::RealGame;

fn pair(layers: &[BoundsLayer], b: &Board) -> (i32, i32) {
    let l = &layers[b.seeds() as usize];
    let i = index::rank(b) as usize;
    (i32::from(l.low[i]), i32::from(l.high[i]))
}

/// Every position of layers `0..=max_n` solved, exact, equal to the brute force, and within
/// the bounds.
fn check_fresh(rules: Rules, repetition: Repetition, max_n: u32) {
    let solved = solve_all(rules, max_n, repetition, u64::MAX);
    let bounds = solve_all_bounds(rules, max_n);
    let layers: Vec<BoundsLayer> = solved.iter().map(|(l, _)| l.clone()).collect();
    let mut brute = RealGame::new(rules, usize::from(repetition.ends_at()));
    for n in 0..=max_n {
        for pits in boards_of_layer(n) {
            let b = Board::new(pits).unwrap();
            let (low, high) = pair(&layers, &b);
            let (bl, bh) = pair(&bounds, &b);
            let v = brute.value(pits);
            assert_eq!(
                (low, high),
                (v, v),
                "{rules}, {}, {pits:?}: solved [{low}, {high}], the real game {v}",
                repetition.name()
            );
            assert!(
                bl <= v && v <= bh,
                "{rules} {pits:?}: {v} outside the bounds"
            );
        }
        assert_eq!(solved[n as usize].1.exact, index::size(n));
    }
}

#[test]
fn first_repetition_fresh_values_are_exact_and_right_on_layers_0_to_3() {
    for rules in Rules::ALL {
        check_fresh(rules, Repetition::First, 3);
    }
}

#[test]
fn third_occurrence_fresh_values_are_exact_and_right_on_layers_0_to_2() {
    for rules in Rules::ALL {
        check_fresh(rules, Repetition::Third, 2);
    }
}

/// A few capture-free moves from `start`, chosen by a small generator: the history, oldest
/// first, and the position reached (or `None` if a capture or the end came first).
fn walk(rules: Rules, start: Board, plies: usize, seed: &mut u64) -> Option<(Vec<Board>, Board)> {
    let mut history = Vec::new();
    let mut at = start;
    for _ in 0..plies {
        let moves = rules.legal_moves(&at);
        let quiet: Vec<_> = moves.iter().filter(|m| m.captured == 0).collect();
        if quiet.is_empty() {
            return None;
        }
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let m = quiet[(*seed >> 33) as usize % quiet.len()];
        history.push(at);
        at = m.child;
    }
    Some((history, at))
}

/// Positions reached after random capture-free walks: the proof search from the tables,
/// with that history, gives an interval that holds the brute force's value, and is exact
/// for most of them (every one counted, and some must be exact).
fn check_histories(rules: Rules, repetition: Repetition, max_n: u32, walks: usize) {
    let layers: Vec<BoundsLayer> = solve_all(rules, max_n, repetition, u64::MAX)
        .into_iter()
        .map(|(l, _)| l)
        .collect();
    // The memoryless bounds of the plain bounds tables: any that hold will do.
    let bounds = solve_all_bounds(rules, max_n);
    let mut brute = RealGame::new(rules, usize::from(repetition.ends_at()));
    let mut seed = 7u64;
    let (mut tried, mut exact) = (0, 0);
    for n in 1..=max_n {
        for pits in boards_of_layer(n) {
            let start = Board::new(pits).unwrap();
            for _ in 0..walks {
                let plies = 1 + (seed >> 40) as usize % 6;
                let Some((history, at)) = walk(rules, start, plies, &mut seed) else {
                    continue;
                };
                let hist: Vec<[u8; 12]> = history.iter().map(|b| *b.pits()).collect();
                // A walk that already repeated a position to its end is a game over, not
                // a game in progress.
                let mut all = hist.clone();
                all.push(*at.pits());
                let len = all.len();
                let keys: Vec<_> = all
                    .iter()
                    .enumerate()
                    .map(|(i, b)| (*b, (len - 1 - i) % 2))
                    .collect();
                let ends = usize::from(repetition.ends_at());
                if keys
                    .iter()
                    .any(|k| keys.iter().filter(|&j| j == k).count() >= ends)
                {
                    continue;
                }
                let v = brute.value_after(*at.pits(), &hist);
                let p = prove_in_memory(
                    rules,
                    repetition,
                    &layers,
                    &bounds[n as usize],
                    &at,
                    &history,
                    u64::MAX,
                );
                assert!(
                    i32::from(p.low) <= v && v <= i32::from(p.high),
                    "{rules}, {}: {:?} after {hist:?}: proved [{}, {}], the real game {v}",
                    repetition.name(),
                    at.pits(),
                    p.low,
                    p.high
                );
                tried += 1;
                exact += usize::from(p.exact());
            }
        }
    }
    assert!(tried > 100, "only {tried} histories");
    assert_eq!(
        exact, tried,
        "{exact} of {tried} exact with an unlimited budget"
    );
}

#[test]
fn values_with_a_history_agree_with_the_brute_force() {
    for rules in [Rules::ABAPA, Rules::AWARI] {
        check_histories(rules, Repetition::First, 3, 8);
        check_histories(rules, Repetition::Third, 2, 8);
    }
}

/// The tables built by `build`, probed by `BoundsDatabase` with a history and by the
/// command line, against the solver in memory and the brute force.
mod tables {
    use super::*;
    use assert_cmd::Command;
    use awari::build::{build, BuildOptions, Tables};
    use awari::store::{self, LayerFile, TableKind, WriteOptions};
    use awari::{
        check_own_row, check_own_row_sampled, own_row_history, BoundsDatabase, ProbeError,
    };

    fn awari() -> Command {
        Command::cargo_bin("awari").unwrap()
    }

    /// The bounds of layers `0..=top`, then the own-row values of `r` at `budget` nodes a
    /// root, into `dir`.
    fn build_own_row(dir: &std::path::Path, rules: Rules, top: u32, r: Repetition, budget: u64) {
        let mut opts = BuildOptions::new(dir, rules, top);
        opts.tables = Tables::Bounds;
        build(&opts, &awari::Quiet).unwrap();
        opts.tables = Tables::OwnRow(r);
        opts.search_budget = budget;
        build(&opts, &awari::Quiet).unwrap();
    }

    /// Layer `n`'s table of `kind` under the bounds folder of `dir`, whole.
    fn read_table(dir: &std::path::Path, rules: Rules, n: u32, kind: TableKind) -> Vec<i8> {
        let path = store::table_path(&store::bounds_dir(dir), rules, n, kind);
        LayerFile::open_kind(&path, rules, n, kind)
            .unwrap()
            .read_all()
            .unwrap()
    }

    /// Replaces layer `n`'s table of `kind` under the bounds folder of `dir` by a sound
    /// file holding `values` (to plant faults that no checksum catches).
    fn replace_table(dir: &std::path::Path, rules: Rules, n: u32, kind: TableKind, values: &[i8]) {
        let root = store::bounds_dir(dir);
        std::fs::remove_file(store::table_path(&root, rules, n, kind)).unwrap();
        let bytes: Vec<u8> = values.iter().map(|&v| v as u8).collect();
        store::write_table(
            &root,
            rules,
            kind,
            &bytes,
            store::LayerSummary::from_values(n, values),
            WriteOptions::default(),
        )
        .unwrap();
    }

    #[test]
    fn built_tables_probe_as_the_solver_and_histories_as_the_brute_force() {
        let dir = tempfile::tempdir().unwrap();
        let rules = Rules::ABAPA;
        // Layers 0..=3: every position exact (layer 4 leaves four open at the default budget,
        // and the brute force takes long beyond it).
        let top = 3;
        let mut opts = BuildOptions::new(dir.path(), rules, top);
        opts.tables = Tables::Bounds;
        build(&opts, &awari::Quiet).unwrap();
        opts.tables = Tables::OwnRow(Repetition::First);
        let reports = build(&opts, &awari::Quiet).unwrap();
        assert!(reports.iter().all(|r| r.built && r.searched.is_some()));
        // Built again: found on disk, nothing searched.
        let again = build(&opts, &awari::Quiet).unwrap();
        assert!(again.iter().all(|r| !r.built));

        let solved = solve_all(
            rules,
            top,
            Repetition::First,
            awari::build::DEFAULT_SEARCH_BUDGET,
        );
        let db = BoundsDatabase::open(dir.path(), rules).unwrap();
        assert_eq!(db.own_row(Repetition::First).complete_up_to(), Some(top));
        assert_eq!(db.own_row(Repetition::Third).complete_up_to(), None);
        for n in 0..=top {
            let check = check_own_row(&db.own_row(Repetition::First), n)
                .unwrap()
                .unwrap();
            assert_eq!(check.faults, 0, "{:?}", check.first_fault);
            assert_eq!(check.exact, solved[n as usize].1.exact);
            for pits in boards_of_layer(n) {
                let b = Board::new(pits).unwrap();
                let p = db.own_row(Repetition::First).value(&b, &[], 1000).unwrap();
                let l = &solved[n as usize].0;
                let i = index::rank(&b) as usize;
                assert_eq!((p.low, p.high), (l.low[i], l.high[i]), "{pits:?}");
            }
        }

        // Every line of one to five moves from a 3-seed position, replayed into a position
        // and its history, checked against the brute force.
        let mut brute = RealGame::new(rules, 2);
        let start: Board = "1 1 0 0 0 0 1 0 0 0 0 0".parse().unwrap();
        let mut checked = 0;
        let lines = (1..=5u32).flat_map(|len| (0..6u32.pow(len)).map(move |line| (len, line)));
        for (len, line) in lines {
            let pits: Vec<u8> = (0..len).map(|k| ((line / 6u32.pow(k)) % 6) as u8).collect();
            let Ok((at, history)) = own_row_history(rules, Repetition::First, &start, &pits) else {
                continue;
            };
            let Ok(p) = db
                .own_row(Repetition::First)
                .value(&at, &history, 1_000_000)
            else {
                continue;
            };
            let hist: Vec<[u8; 12]> = history.iter().map(|b| *b.pits()).collect();
            let v = brute.value_after(*at.pits(), &hist);
            assert_eq!((i32::from(p.low), i32::from(p.high)), (v, v), "{pits:?}");
            checked += 1;
        }
        assert!(checked >= 10, "only {checked} lines");

        // A history of another layer, or one already repeated to its end, is refused.
        let other: Board = "1 0 0 0 0 0 0 0 0 0 0 0".parse().unwrap();
        let e = db
            .own_row(Repetition::First)
            .value(&start, &[other], 10)
            .unwrap_err();
        assert!(matches!(e, ProbeError::History(_)), "{e}");
        let e = db
            .own_row(Repetition::First)
            .value(&start, &[start, start.swapped()], 10);
        assert!(matches!(e, Err(ProbeError::History(_))), "{e:?}");
    }

    /// `refine`: the open positions of layers on disk searched again with a larger budget,
    /// from the intervals they hold, give the files of a build with that budget where both
    /// are exact; a layer with nothing open is left alone; an interval the bounds rule out
    /// is refused as damage; and only the own-row values are refined.
    #[test]
    fn refine_searches_again_what_was_left_open() {
        use awari::build::BuildError;
        let (rules, top, r) = (Rules::ABAPA, 5, Repetition::First);
        let build_at = |dir: &std::path::Path, budget: u64, refine| {
            let mut opts = BuildOptions::new(dir, rules, top);
            opts.tables = Tables::OwnRow(r);
            opts.search_budget = budget;
            opts.refine = refine;
            build(&opts, &awari::Quiet)
        };
        let small = tempfile::tempdir().unwrap();
        let first = build_at(small.path(), 30, None).unwrap();
        let open: Vec<u32> = first
            .iter()
            .filter(|rep| rep.exact != Some(rep.positions))
            .map(|rep| rep.seeds)
            .collect();
        assert!(
            !open.is_empty(),
            "30 nodes a root should leave positions open"
        );

        let refined = build_at(small.path(), 100_000, Some(0..=top)).unwrap();
        for rep in &refined {
            assert_eq!(rep.exact, Some(rep.positions), "layer {}", rep.seeds);
            // Only the layers left open were searched again, and each was written again.
            let was_open = open.contains(&rep.seeds);
            assert_eq!(rep.built, was_open, "layer {}", rep.seeds);
            assert_eq!(rep.searched.is_some(), was_open, "layer {}", rep.seeds);
            assert!(rep.searched.as_ref().is_none_or(|s| s.refined));
        }
        let direct = tempfile::tempdir().unwrap();
        build_at(direct.path(), 100_000, None).unwrap();
        let folder = |d: &std::path::Path| store::rules_dir(&store::bounds_dir(d), rules);
        for n in 0..=top {
            for kind in [TableKind::OwnRowLow(r), TableKind::OwnRowHigh(r)] {
                let file = |d: &std::path::Path| {
                    std::fs::read(store::table_path(&store::bounds_dir(d), rules, n, kind)).unwrap()
                };
                assert!(
                    file(small.path()) == file(direct.path()),
                    "layer {n} {kind:?}"
                );
            }
        }
        assert!(folder(small.path()).exists());
        // Nothing open: nothing searched, nothing written.
        let again = build_at(small.path(), 100_000, Some(0..=top)).unwrap();
        assert!(again.iter().all(|rep| !rep.built && rep.searched.is_none()));

        // A low above what the bounds allow, at one position of a layer left open: refused
        // as a damaged file, which is left as it is.
        let planted = tempfile::tempdir().unwrap();
        build_at(planted.path(), 30, None).unwrap();
        let n = open[0];
        let (low_kind, high_kind) = (TableKind::OwnRowLow(r), TableKind::OwnRowHigh(r));
        let mut low = read_table(planted.path(), rules, n, low_kind);
        let mut high = read_table(planted.path(), rules, n, high_kind);
        let i = (0..low.len()).find(|&i| low[i] < high[i]).unwrap();
        low[i] = high[i] + 1;
        high[i] = low[i] + 1;
        replace_table(planted.path(), rules, n, low_kind, &low);
        replace_table(planted.path(), rules, n, high_kind, &high);
        let high_path = store::table_path(&store::bounds_dir(planted.path()), rules, n, high_kind);
        let before = std::fs::read(&high_path).unwrap();
        let e = build_at(planted.path(), 1000, Some(n..=n)).unwrap_err();
        assert!(matches!(e, BuildError::Damaged(_)), "{e}");
        assert!(e.to_string().contains(&format!("position {i}")), "{e}");
        assert_eq!(std::fs::read(&high_path).unwrap(), before);

        // The values and the bounds are not refined.
        let mut opts = BuildOptions::new(small.path(), rules, top);
        opts.refine = Some(0..=top);
        for tables in [Tables::Values, Tables::Bounds] {
            opts.tables = tables;
            let e = build(&opts, &awari::Quiet).unwrap_err();
            assert!(matches!(e, BuildError::RefineNotOwnRow), "{e}");
        }
        let out = awari()
            .args(["build", "--refine", "3", "--db"])
            .arg(small.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert_eq!(
            stderr.trim(),
            "error: --refine is for the own-row values (--cycles own-row-first or own-row-third)"
        );
    }

    /// Asserts that `inner`'s interval lies inside `outer`'s.
    fn assert_inside(inner: &Proof, outer: &Proof, what: &str) {
        assert!(
            outer.low <= inner.low && inner.high <= outer.high,
            "{what}: [{}, {}] not inside [{}, {}]",
            inner.low,
            inner.high,
            outer.low,
            outer.high
        );
    }

    /// A probe deepens where the tables leave its search stuck. Over own-row tables built
    /// at 5 nodes a root (layers 0..=4, many positions left open) and the bounds alone
    /// above them, every position of layer 5 probed with an empty history: the interval
    /// holds the exact value (the solver's, with an unlimited budget), and lies inside what
    /// the plain search from the same tables proves (that search in memory); where the
    /// plain search was stuck on captures into open positions, the probe, which searches
    /// those on their own, proves more, and makes some of them exact.
    #[test]
    fn a_probe_searches_open_capture_children_on_their_own() {
        let dir = tempfile::tempdir().unwrap();
        let (rules, r) = (Rules::ABAPA, Repetition::First);
        let (top, n) = (4, 5);
        let mut opts = BuildOptions::new(dir.path(), rules, n);
        opts.tables = Tables::Bounds;
        build(&opts, &awari::Quiet).unwrap();
        let mut opts = BuildOptions::new(dir.path(), rules, top);
        opts.tables = Tables::OwnRow(r);
        opts.search_budget = 5;
        build(&opts, &awari::Quiet).unwrap();
        let layer = |n: u32, low, high| BoundsLayer {
            low: read_table(dir.path(), rules, n, low),
            high: read_table(dir.path(), rules, n, high),
        };
        // What the probe reads: the own-row values below, the bounds at layer 5.
        let mut tables: Vec<BoundsLayer> = (0..=top)
            .map(|k| layer(k, TableKind::OwnRowLow(r), TableKind::OwnRowHigh(r)))
            .collect();
        let open = tables
            .iter()
            .map(|l| l.low.len() as u64 - l.exact())
            .sum::<u64>();
        assert!(open > 50, "only {open} positions left open below");
        let bounds = layer(n, TableKind::BoundsLow, TableKind::BoundsHigh);
        tables.push(bounds.clone());
        let exact = solve_all(rules, n, r, u64::MAX);
        let db = BoundsDatabase::open(dir.path(), rules).unwrap();
        let budget = 20_000;
        let (mut stuck, mut narrower, mut closed) = (0, 0, 0);
        for pits in boards_of_layer(n) {
            let b = Board::new(pits).unwrap();
            let i = index::rank(&b) as usize;
            let (l, h) = (exact[n as usize].0.low[i], exact[n as usize].0.high[i]);
            assert_eq!(l, h, "{pits:?}: the solver left it open");
            let plain = prove_in_memory(rules, r, &tables, &bounds, &b, &[], budget);
            let deep = db.own_row(r).value(&b, &[], budget).unwrap();
            assert!(
                deep.low <= l && l <= deep.high,
                "{pits:?}: probed [{}, {}], exactly {l}",
                deep.low,
                deep.high
            );
            assert_inside(
                &deep,
                &plain,
                &format!("{pits:?}: probed, against the plain search"),
            );
            if plain.stuck {
                stuck += 1;
                narrower += usize::from((deep.low, deep.high) != (plain.low, plain.high));
                closed += usize::from(deep.exact());
            }
        }
        assert!(
            stuck > 0 && closed > 0 && narrower >= closed,
            "{stuck} stuck, {narrower} narrower, {closed} exact"
        );
        eprintln!("{stuck} stuck plain searches, {narrower} narrowed, {closed} made exact");
    }

    /// A probe that ends open ran out of its budget: where its search is stuck on
    /// captures into positions the tables leave open, it searches those on its own, and
    /// only the budget stops it (the tables here: built at 30 nodes a root). Ten times the
    /// budget proves at least as much, and more for some.
    #[test]
    fn a_probe_left_open_ran_out_of_budget_and_more_proves_as_much() {
        let dir = tempfile::tempdir().unwrap();
        let (rules, top, r) = (Rules::ABAPA, 6, Repetition::First);
        build_own_row(dir.path(), rules, top, r, 30);
        let db = BoundsDatabase::open(dir.path(), rules).unwrap();
        let (mut open, mut narrower) = (0, 0);
        for pits in boards_of_layer(top).into_iter().step_by(7) {
            let b = Board::new(pits).unwrap();
            let p = db.own_row(r).value(&b, &[], 2000).unwrap();
            assert!(!p.stuck, "{pits:?}");
            if p.exact() {
                continue;
            }
            open += 1;
            assert_eq!(p.nodes, 2000, "{pits:?}");
            let more = db.own_row(r).value(&b, &[], 20_000).unwrap();
            assert_inside(
                &more,
                &p,
                &format!("{pits:?}: at 20000 nodes, against 2000"),
            );
            narrower += usize::from((more.low, more.high) != (p.low, p.high));
        }
        assert!(open > 0 && narrower > 0, "{open} open, {narrower} narrower");
    }

    /// The sampled check of the own-row values: a sample at least the layer's size is the
    /// whole check; a smaller one checks that many positions; both find lows planted above
    /// the bounds' high (at every 16th position of the top layer).
    #[test]
    fn a_sampled_own_row_check_is_the_whole_one_or_finds_planted_faults() {
        let dir = tempfile::tempdir().unwrap();
        let (rules, top, r) = (Rules::ABAPA, 6, Repetition::First);
        build_own_row(dir.path(), rules, top, r, 1000);
        let db = BoundsDatabase::open(dir.path(), rules).unwrap();
        let size = index::size(top);
        let whole = check_own_row(&db.own_row(r), top).unwrap().unwrap();
        assert_eq!(whole.faults, 0);
        assert_eq!(
            check_own_row_sampled(&db.own_row(r), top, size)
                .unwrap()
                .unwrap(),
            whole
        );
        let half = check_own_row_sampled(&db.own_row(r), top, size / 2)
            .unwrap()
            .unwrap();
        assert_eq!((half.positions, half.faults), (size / 2, 0));
        assert!(half.exact <= whole.exact);

        let mut low = read_table(dir.path(), rules, top, TableKind::OwnRowLow(r));
        let bounds_high = db.layer(top).unwrap().1.read_all().unwrap();
        let mut planted = 0;
        for i in (0..low.len()).step_by(16) {
            if bounds_high[i] < top as i8 {
                low[i] = top as i8;
                planted += 1;
            }
        }
        assert!(planted > 50, "{planted}");
        replace_table(dir.path(), rules, top, TableKind::OwnRowLow(r), &low);
        let db = BoundsDatabase::open(dir.path(), rules).unwrap();
        let whole = check_own_row(&db.own_row(r), top).unwrap().unwrap();
        assert!(whole.faults >= planted, "{} < {planted}", whole.faults);
        let half = check_own_row_sampled(&db.own_row(r), top, size / 2)
            .unwrap()
            .unwrap();
        assert!(
            half.faults > planted / 4 && half.faults < whole.faults,
            "{} of {}",
            half.faults,
            whole.faults
        );
    }

    /// The check meets each pair with its moves' intervals, quiet moves included: values
    /// planted at the bottom of the range on positions whose every move is quiet (so that no
    /// capture check sees them), with the bounds' layer removed (so that no bounds check
    /// does), are found.
    #[test]
    fn the_own_row_check_meets_a_pair_with_its_quiet_moves() {
        let dir = tempfile::tempdir().unwrap();
        let (rules, top, r) = (Rules::ABAPA, 6, Repetition::First);
        build_own_row(dir.path(), rules, top, r, 1000);
        for kind in [TableKind::BoundsLow, TableKind::BoundsHigh] {
            std::fs::remove_file(store::table_path(
                &store::bounds_dir(dir.path()),
                rules,
                top,
                kind,
            ))
            .unwrap();
        }
        let db = BoundsDatabase::open(dir.path(), rules).unwrap();
        assert!(db.layer(top).is_none());
        let whole = check_own_row(&db.own_row(r), top).unwrap().unwrap();
        assert_eq!(whole.faults, 0, "{:?}", whole.first_fault);

        let mut low = read_table(dir.path(), rules, top, TableKind::OwnRowLow(r));
        let mut high = read_table(dir.path(), rules, top, TableKind::OwnRowHigh(r));
        let n = top as i8;
        let mut planted = 0;
        for pits in boards_of_layer(top) {
            let b = Board::new(pits).unwrap();
            let moves = rules.legal_moves(&b);
            let i = index::rank(&b) as usize;
            if moves.is_empty() || moves.iter().any(|m| m.captured > 0) || low[i] == -n {
                continue;
            }
            (low[i], high[i]) = (-n, -n);
            planted += 1;
        }
        assert!(planted > 100, "{planted}");
        replace_table(dir.path(), rules, top, TableKind::OwnRowLow(r), &low);
        replace_table(dir.path(), rules, top, TableKind::OwnRowHigh(r), &high);
        let db = BoundsDatabase::open(dir.path(), rules).unwrap();
        let check = check_own_row(&db.own_row(r), top).unwrap().unwrap();
        assert!(check.faults >= planted / 2, "{} of {planted}", check.faults);
        let why = check.first_fault.unwrap();
        assert!(why.contains("where its moves give"), "{why}");
    }

    /// `awari ARGS SHARED`, checked to succeed (or to fail): its standard output and error.
    fn run(args: &[&str], shared: &[&str], succeeds: bool) -> (String, String) {
        let mut cmd = awari();
        cmd.args(args).args(shared);
        let out = if succeeds {
            cmd.assert().success()
        } else {
            cmd.assert().failure()
        };
        let out = out.get_output();
        (
            String::from_utf8(out.stdout.clone()).unwrap(),
            String::from_utf8(out.stderr.clone()).unwrap(),
        )
    }

    #[test]
    fn command_line_builds_probes_verifies_and_refuses() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().to_str().unwrap().to_string();
        let args = ["--rules", "abapa", "--db", db.as_str()];
        let build = ["build", "--max-seeds", "3", "--cycles"];
        run(&[&build[..], &["bounds", "-q"]].concat(), &args, true);
        let (_, err) = run(&[&build[..], &["own-row-first"]].concat(), &args, true);
        assert!(
            err.contains("layer  3:") && err.contains(" searches, "),
            "{err}"
        );

        // The position after two moves, with its history, as JSON: the library's answer.
        let start = "1 1 0 0 0 0 1 0 0 0 0 0";
        let probe = ["probe", "--cycles", "own-row-first"];
        let (json, _) = run(
            &[&probe[..], &["--json", start, "--moves", "1 1"]].concat(),
            &args,
            true,
        );
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let b = BoundsDatabase::open(dir.path(), Rules::ABAPA).unwrap();
        let (at, history) = own_row_history(
            Rules::ABAPA,
            Repetition::First,
            &start.parse().unwrap(),
            &[0, 0],
        )
        .unwrap();
        let p = b
            .own_row(Repetition::First)
            .value(&at, &history, awari::build::DEFAULT_SEARCH_BUDGET)
            .unwrap();
        assert_eq!(v["board"], at.to_string());
        assert_eq!(v["history"], 2);
        assert_eq!(v["low"], p.low);
        assert_eq!(v["high"], p.high);
        let (text, _) = run(&["verify", "--cycles", "own-row-first"], &args, true);
        assert_eq!(text.matches("every check holds").count(), 4, "{text}");
        run(
            &["stats", "--cycles", "own-row-first", "--json"],
            &args,
            true,
        );

        // Bad input: one line, non-zero, no panic.
        for (bad, says) in [
            (vec![start, "--moves", "7"], "not a pit 1..6"),
            (vec![start, "--moves", "4"], "not a legal move"),
            (vec![start, "--search-budget", "0"], "at least 1 node"),
            (
                vec!["--batch", "--captured", "1,1"],
                "--captured is for the values",
            ),
        ] {
            let (_, err) = run(&[&probe[..], &bad[..]].concat(), &args, false);
            assert!(
                err.contains(says) && err.lines().count() == 1,
                "{bad:?}: {err}"
            );
        }
        // A layer beyond the tables: the bounds' missing layer, with the command.
        let third = [
            "probe",
            "--cycles",
            "own-row-third",
            "1 1 1 0 0 0 1 1 0 0 0 0",
        ];
        let (_, err) = run(&third, &args, false);
        assert!(err.contains("not built"), "{err}");
    }
}

/// How searches end open, as the build reports it: with the layers below exact a search
/// ends open only for its budget; once a lower layer is left open, searches get stuck on
/// captures into its open positions, whose intervals straddle their thresholds.
#[test]
fn searches_that_end_open_say_why() {
    let solved = solve_all(Rules::ABAPA, 6, Repetition::First, 1000);
    let counts: Vec<_> = solved.iter().map(|(_, c)| c.clone()).collect();
    for c in &counts[..4] {
        assert_eq!(c.exact, c.positions, "{c:?}");
        assert_eq!((c.out_of_budget, c.tree_limit, c.stuck), (0, 0, 0), "{c:?}");
    }
    // Layer 4: every layer below is exact, so its open positions ran out of budget.
    let four = &counts[4];
    assert!(four.exact < four.positions, "{four:?}");
    assert!(four.out_of_budget > 0, "{four:?}");
    assert_eq!((four.stuck, four.straddling_captures), (0, 0), "{four:?}");
    // Layer 6 captures into layer 4's open positions.
    let six = &counts[6];
    assert!(six.stuck > 0 && six.straddling_captures > 0, "{six:?}");
    assert!(six.open_next_to_open > 0, "{six:?}");
}
