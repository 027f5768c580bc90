//! Does the repetition rule's k change the value from an empty history? An abstract check,
//! written from scratch (nothing of the crate is used); the account is
//! docs/method.md ("Does the repetition rule matter from an empty history?").
//!
//! The abstract game: a finite directed graph, each vertex owned by Max or Min; the owner of
//! the vertex the token is on moves it along an edge, or takes the vertex's *exit* (if it has
//! one), which ends the game with the exit's payoff. The game also ends when the token reaches a
//! vertex v for the k-th time on the path (the start counts as an occurrence), paying f(v).
//! Max maximises, Min minimises. V_k(s) is the value from s with an empty history.
//!
//! The answer is no: the graph below (`four_vertex`) has V_2 = 0 < V_3 = 1 because Max moves
//! twice in a row, and putting a vertex of the other owner with a single move on every edge
//! between two vertices of one owner (`alternate`) changes no value, so alternating graphs
//! have such examples too (`seven_vertex`, found and then explained by hand). These tests check
//! each step: two independent solvers, the examples, the subdivision lemma on random graphs,
//! explicit strategies that certify the example without any solver, and the enumeration of all
//! alternating graphs up to 6 vertices (5 with exits), where no difference exists.

use std::collections::HashMap;

/// A move: the vertex's exit, or an edge to a vertex.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Move {
    Exit,
    To(usize),
}

#[derive(Clone, Debug)]
struct Game {
    /// Owner of each vertex: true for Max.
    max: Vec<bool>,
    succ: Vec<Vec<usize>>,
    /// Paid when the game ends by the k-th occurrence of the vertex.
    f: Vec<i32>,
    /// The payoff of the vertex's exit, if it has one.
    exit: Vec<Option<i32>>,
}

impl Game {
    fn new(max: &[bool], succ: &[&[usize]], f: &[i32]) -> Game {
        let g = Game {
            max: max.to_vec(),
            succ: succ.iter().map(|s| s.to_vec()).collect(),
            f: f.to_vec(),
            exit: vec![None; max.len()],
        };
        g.check();
        g
    }

    fn n(&self) -> usize {
        self.max.len()
    }

    fn check(&self) {
        let n = self.n();
        assert!(self.succ.len() == n && self.f.len() == n && self.exit.len() == n);
        for v in 0..n {
            assert!(
                !self.succ[v].is_empty() || self.exit[v].is_some(),
                "vertex {v} has no move"
            );
            assert!(self.succ[v].iter().all(|&w| w < n));
        }
    }

    /// Every edge joins vertices of different owners: every move passes the turn.
    fn is_alternating(&self) -> bool {
        (0..self.n()).all(|v| self.succ[v].iter().all(|&w| self.max[w] != self.max[v]))
    }

    fn moves(&self, v: usize) -> Vec<Move> {
        let mut m: Vec<Move> = self.exit[v].iter().map(|_| Move::Exit).collect();
        m.extend(self.succ[v].iter().map(|&w| Move::To(w)));
        m
    }
}

fn better(max: bool, a: i32, b: i32) -> i32 {
    if max {
        a.max(b)
    } else {
        a.min(b)
    }
}

// ---------------------------------------------------------------------------------------------
// Solver 1: minimax over (current vertex, occurrence counts), memoised. The future of a game
// depends on its history only through the counts, so this is the history-dependent value.

struct Solver<'a> {
    g: &'a Game,
    k: u8,
    memo: HashMap<(usize, Vec<u8>), i32>,
}

impl Solver<'_> {
    fn new(g: &Game, k: u8) -> Solver<'_> {
        assert!(k >= 2);
        Solver {
            g,
            k,
            memo: HashMap::new(),
        }
    }

    /// The value with the token on `cur` and `counts` occurrences so far (cur's included).
    fn value(&mut self, cur: usize, counts: &mut Vec<u8>) -> i32 {
        if let Some(&v) = self.memo.get(&(cur, counts.clone())) {
            return v;
        }
        let g = self.g;
        let mut best: Option<i32> = None;
        for m in g.moves(cur) {
            let v = match m {
                Move::Exit => g.exit[cur].unwrap(),
                Move::To(w) if counts[w] + 1 == self.k => g.f[w],
                Move::To(w) => {
                    counts[w] += 1;
                    let v = self.value(w, counts);
                    counts[w] -= 1;
                    v
                }
            };
            best = Some(best.map_or(v, |b| better(g.max[cur], b, v)));
        }
        let best = best.unwrap();
        self.memo.insert((cur, counts.clone()), best);
        best
    }

    /// V_k(s): the value from s with an empty history.
    fn fresh(&mut self, s: usize) -> i32 {
        let mut counts = vec![0; self.g.n()];
        counts[s] = 1;
        self.value(s, &mut counts)
    }
}

fn value(g: &Game, k: u8, s: usize) -> i32 {
    Solver::new(g, k).fresh(s)
}

// Solver 2: the plain recursion over whole paths, counting occurrences by scanning the path:
// no memo, no counts. Slow; only for small graphs.
fn value_naive(g: &Game, k: usize, path: &mut Vec<usize>) -> i32 {
    let cur = *path.last().unwrap();
    let mut vals = Vec::new();
    if let Some(e) = g.exit[cur] {
        vals.push(e);
    }
    for &w in &g.succ[cur] {
        if path.iter().filter(|&&p| p == w).count() + 1 >= k {
            vals.push(g.f[w]);
        } else {
            path.push(w);
            vals.push(value_naive(g, k, path));
            path.pop();
        }
    }
    if g.max[cur] {
        *vals.iter().max().unwrap()
    } else {
        *vals.iter().min().unwrap()
    }
}

// ---------------------------------------------------------------------------------------------
// A strategy of one player played against every strategy of the other: all the opponent's
// moves are followed at every history. Returns the worst payoff for the strategy's owner.

fn worst_against_all(
    g: &Game,
    k: usize,
    owner_max: bool,
    strategy: &dyn Fn(&[usize]) -> Move,
    path: &mut Vec<usize>,
) -> i32 {
    let cur = *path.last().unwrap();
    let moves = if g.max[cur] == owner_max {
        let m = strategy(path);
        assert!(
            g.moves(cur).contains(&m),
            "strategy plays an illegal move {m:?} after {path:?}"
        );
        vec![m]
    } else {
        g.moves(cur)
    };
    let mut worst: Option<i32> = None;
    for m in moves {
        let v = match m {
            Move::Exit => g.exit[cur].unwrap(),
            Move::To(w) => {
                if path.iter().filter(|&&p| p == w).count() + 1 >= k {
                    g.f[w]
                } else {
                    path.push(w);
                    let v = worst_against_all(g, k, owner_max, strategy, path);
                    path.pop();
                    v
                }
            }
        };
        // The worst for the owner is the best for the opponent.
        worst = Some(worst.map_or(v, |b| better(!owner_max, b, v)));
    }
    worst.unwrap()
}

// ---------------------------------------------------------------------------------------------
// The subdivision: on every edge v -> w between vertices of one owner (a self-loop included),
// a new vertex x of the other owner, with the single move x -> w and no exit. x has one
// predecessor (v), so each occurrence of x follows an occurrence of v: x's k-th occurrence
// would come after v's k-th, which has ended the game. So x never ends a game, its payoff
// `fx` never counts, and its owner never chooses: every V_k from an old vertex is unchanged.

fn alternate(g: &Game, fx: &mut dyn FnMut() -> i32) -> Game {
    let mut h = g.clone();
    for v in 0..g.n() {
        for i in 0..g.succ[v].len() {
            let w = g.succ[v][i];
            if g.max[w] == g.max[v] {
                let x = h.max.len();
                h.max.push(!g.max[v]);
                h.succ.push(vec![w]);
                h.f.push(fx());
                h.exit.push(None);
                h.succ[v][i] = x;
            }
        }
    }
    h.check();
    assert!(h.is_alternating());
    h
}

// ---------------------------------------------------------------------------------------------
// The examples.

/// s, a, b owned by Max, m by Min; s -> a, b; a -> s, m; b -> s, m; m -> a, b;
/// f = 0, 1, 1, 0. Max moves twice in a row (s -> a -> s).
fn four_vertex() -> Game {
    Game::new(
        &[true, true, true, false],
        &[&[1, 2], &[0, 3], &[0, 3], &[1, 2]],
        &[0, 1, 1, 0],
    )
}

const S: usize = 0;
const A: usize = 1;
const B: usize = 2;
const M: usize = 3;
const XA: usize = 4;
const XB: usize = 5;
const Y: usize = 6;

/// `four_vertex` made alternating with three vertices of Min that have one move each:
/// s -> xa -> a and s -> xb -> b (xa and xb have the one predecessor s), a -> y -> s and
/// b -> y -> s (y's one move goes back to the start). f(s, a, b, m) = 0, 1, 1, 0 and the three
/// forced vertices pay `fx` (which never counts).
fn seven_vertex(fx: [i32; 3]) -> Game {
    let mut succ: Vec<&[usize]> = vec![&[]; 7];
    succ[S] = &[XA, XB];
    succ[A] = &[Y, M];
    succ[B] = &[Y, M];
    succ[M] = &[A, B];
    succ[XA] = &[A];
    succ[XB] = &[B];
    succ[Y] = &[S];
    Game::new(
        &[true, true, true, false, false, false, false],
        &succ,
        &[0, 1, 1, 0, fx[0], fx[1], fx[2]],
    )
}

#[test]
fn solvers_agree_on_the_four_vertex_example() {
    // (b): the solver sees the difference where one player moves twice in a row.
    let g = four_vertex();
    assert!(!g.is_alternating());
    assert_eq!(value(&g, 2, S), 0);
    assert_eq!(value(&g, 3, S), 1);
    assert_eq!(value(&g, 4, S), 1);
    for k in 2..=4 {
        assert_eq!(value_naive(&g, k, &mut vec![S]), value(&g, k as u8, S));
    }
}

#[test]
fn an_alternating_game_where_the_third_occurrence_is_worth_more() {
    for bits in 0..8 {
        let g = seven_vertex([bits & 1, (bits >> 1) & 1, (bits >> 2) & 1]);
        assert!(g.is_alternating());
        assert_eq!(value(&g, 2, S), 0, "first repetition");
        assert_eq!(value(&g, 3, S), 1, "third occurrence");
        assert_eq!(value(&g, 4, S), 1, "fourth occurrence");
        for k in 2..=4 {
            assert_eq!(value_naive(&g, k, &mut vec![S]), value(&g, k as u8, S));
        }
    }
}

fn occurrences(path: &[usize], v: usize) -> usize {
    path.iter().filter(|&&p| p == v).count()
}

#[test]
fn explicit_strategies_certify_the_seven_vertex_example() {
    // The hand proof of docs/method.md ("Does the repetition rule matter from an empty history?"), checked without either solver: each strategy
    // is played against every strategy of the opponent (all its moves at every history).
    let g = seven_vertex([0, 0, 0]);

    // Min, first repetition: at m, go to whichever of a and b has not occurred yet (xa, xb
    // and y have one move each).
    let min_k2 = |path: &[usize]| -> Move {
        match *path.last().unwrap() {
            M => Move::To(if occurrences(path, A) == 0 { A } else { B }),
            v => Move::To(g.succ[v][0]),
        }
    };
    assert_eq!(worst_against_all(&g, 2, false, &min_k2, &mut vec![S]), 0);

    // Max, third occurrence: s -> xa; from a or b on its first occurrence go to m; on its
    // second, go round y -> s -> x_z back to it (its third occurrence, worth 1).
    let max_k3 = |path: &[usize]| -> Move {
        let cur = *path.last().unwrap();
        match cur {
            S if path.len() == 1 => Move::To(XA),
            // s again, come from z -> y -> s: back towards z.
            S => Move::To(if path[path.len() - 3] == A { XA } else { XB }),
            A | B if occurrences(path, cur) == 1 => Move::To(M),
            A | B => Move::To(Y),
            _ => unreachable!("Max does not own {cur}"),
        }
    };
    assert_eq!(worst_against_all(&g, 3, true, &max_k3, &mut vec![S]), 1);
    // All payoffs are 0 or 1, so these bounds are the values: V_2(s) = 0 < V_3(s) = 1.
}

#[test]
fn an_alternating_counterexample_without_forced_moves() {
    // Found by random search: every vertex has two moves, no exits, and still V_2 < V_3.
    let g = Game::new(
        &[true, true, true, true, false, false, false, false],
        &[
            &[7, 6],
            &[7, 5],
            &[4, 6],
            &[4, 5],
            &[0, 2],
            &[1, 2],
            &[1, 2],
            &[2, 3],
        ],
        &[0, 0, 0, 0, 0, 0, 1, 1],
    );
    assert!(g.is_alternating());
    assert!(g.succ.iter().all(|s| s.len() >= 2));
    assert_eq!(value(&g, 2, 0), 0);
    assert_eq!(value(&g, 3, 0), 1);
    assert_eq!(value(&g, 4, 0), 1);
}

#[test]
fn the_third_and_the_fourth_occurrence_differ_too() {
    // Found by random search: an alternating graph with V_2 = V_3 = 0 < V_4 = 1 from vertex 4.
    let g = Game::new(
        &[true, true, true, false, false, false, false],
        &[
            &[3, 4, 5, 6],
            &[3, 4],
            &[5, 6],
            &[0, 1, 2],
            &[2],
            &[0],
            &[1],
        ],
        &[0, 0, 1, 1, 0, 0, 1],
    );
    assert!(g.is_alternating());
    assert_eq!(value(&g, 2, 4), 0);
    assert_eq!(value(&g, 3, 4), 0);
    assert_eq!(value(&g, 4, 4), 1);
    assert_eq!(value_naive(&g, 4, &mut vec![4]), 1);
}

// ---------------------------------------------------------------------------------------------
// Random graphs.

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn percent(&mut self, p: u64) -> bool {
        self.below(100) < p
    }
}

/// A random graph on `owners`; edges with probability p % (only between owners that differ
/// if `alternating`), exits with probability pe %, payoffs in 0..vals.
fn random_game(
    r: &mut Rng,
    owners: &[bool],
    alternating: bool,
    p: u64,
    pe: u64,
    vals: u64,
) -> Game {
    let n = owners.len();
    let mut succ = vec![vec![]; n];
    let mut exit = vec![None; n];
    for v in 0..n {
        for w in 0..n {
            if (!alternating || owners[w] != owners[v]) && r.percent(p) {
                succ[v].push(w);
            }
        }
        if r.percent(pe) || succ[v].is_empty() {
            exit[v] = Some(r.below(vals) as i32);
        }
    }
    let f = (0..n).map(|_| r.below(vals) as i32).collect();
    let g = Game {
        max: owners.to_vec(),
        succ,
        f,
        exit,
    };
    g.check();
    g
}

#[test]
fn subdividing_same_owner_edges_changes_no_value() {
    // The lemma that makes alternation no restriction, on random graphs with self-loops, exits
    // and payoffs 0..4, the new vertices given random payoffs (which must never count).
    let mut r = Rng(0x2545_F491_4F6C_DD1D);
    // The four-vertex example subdivided: 8 vertices, alternating, V_2 = 0 < V_3 = 1 whatever
    // the new vertices pay.
    for fx in 0..2 {
        let h = alternate(&four_vertex(), &mut || fx);
        assert_eq!(h.n(), 8);
        assert_eq!(
            (value(&h, 2, S), value(&h, 3, S), value(&h, 4, S)),
            (0, 1, 1)
        );
    }
    for _ in 0..1500 {
        let n = 3 + r.below(2) as usize;
        let owners: Vec<bool> = (0..n).map(|_| r.below(2) == 0).collect();
        let p = 25 + r.below(35);
        let pe = r.below(50);
        let g = random_game(&mut r, &owners, false, p, pe, 4);
        let mut r2 = Rng(r.next() | 1);
        let h = alternate(&g, &mut || r2.below(4) as i32);
        for k in 2..=4u8 {
            let (mut sg, mut sh) = (Solver::new(&g, k), Solver::new(&h, k));
            for s in 0..n {
                assert_eq!(sg.fresh(s), sh.fresh(s), "k = {k}, s = {s}, {g:?}");
            }
        }
    }
}

#[test]
fn random_alternating_games_two_solvers_agree() {
    // The memoised solver against the plain recursion, on alternating graphs with exits and
    // payoffs 0..5; k = 4 only on the smaller ones (the recursion is exponential).
    let mut r = Rng(0x9E37_79B9_7F4A_7C15);
    for i in 0..2000 {
        let (a, b) = (1 + r.below(3) as usize, 1 + r.below(3) as usize);
        let owners: Vec<bool> = (0..a + b).map(|v| v < a).collect();
        let p = 30 + r.below(50);
        let pe = r.below(60);
        let g = random_game(&mut r, &owners, true, p, pe, 5);
        assert!(g.is_alternating());
        let kmax = if a + b <= 5 { 4 } else { 3 };
        for k in 2..=kmax {
            let mut sv = Solver::new(&g, k as u8);
            for s in 0..g.n() {
                assert_eq!(
                    sv.fresh(s),
                    value_naive(&g, k, &mut vec![s]),
                    "graph {i}, k = {k}, s = {s}"
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Every alternating graph up to 6 vertices. With payoffs 0/1 a value is a win or a loss for Max,
// so one pass computes all 2^n payoff vectors at once: a u64 whose bit p says "Max wins when
// vertex v pays bit v of p". (Any counterexample with other payoffs gives one with 0/1 payoffs:
// compare the payoffs with the threshold V_2(s) or V_3(s).)

struct BitSolver {
    n: usize,
    max: [bool; 8],
    succ: [u8; 8],           // bitmask of successors
    exit: [Option<bool>; 8], // exit won by Max?
    k: u32,
    pay: [u64; 8], // payoff vectors in which vertex v pays 1
    memo: Vec<u64>,
    known: Vec<bool>,
}

impl BitSolver {
    fn new(n: usize, k: u32) -> BitSolver {
        let states = (k as usize).pow(n as u32) * n;
        let mut pay = [0u64; 8];
        for (v, pv) in pay.iter_mut().enumerate().take(n) {
            for p in 0..1u64 << n {
                if p >> v & 1 == 1 {
                    *pv |= 1 << p;
                }
            }
        }
        BitSolver {
            n,
            max: [false; 8],
            succ: [0; 8],
            exit: [None; 8],
            k,
            pay,
            memo: vec![0; states],
            known: vec![false; states],
        }
    }

    fn reset(&mut self) {
        self.known.iter_mut().for_each(|x| *x = false);
    }

    fn all(&self) -> u64 {
        if self.n == 6 {
            u64::MAX
        } else {
            (1u64 << (1 << self.n)) - 1
        }
    }

    /// counts in base k, the current vertex's included.
    fn value(&mut self, cur: usize, code: usize, pow: &[usize]) -> u64 {
        let key = code * self.n + cur;
        if self.known[key] {
            return self.memo[key];
        }
        let mx = self.max[cur];
        let mut acc = if mx { 0 } else { self.all() };
        let join = |acc: &mut u64, v: u64| {
            if mx {
                *acc |= v
            } else {
                *acc &= v
            }
        };
        if let Some(e) = self.exit[cur] {
            join(&mut acc, if e { self.all() } else { 0 });
        }
        for w in 0..self.n {
            if self.succ[cur] >> w & 1 == 0 {
                continue;
            }
            let c = code / pow[w] % self.k as usize;
            let v = if c as u32 + 1 == self.k {
                self.pay[w]
            } else {
                self.value(w, code + pow[w], pow)
            };
            join(&mut acc, v);
        }
        self.known[key] = true;
        self.memo[key] = acc;
        acc
    }

    fn fresh(&mut self, s: usize) -> u64 {
        let pow: Vec<usize> = (0..self.n)
            .map(|i| (self.k as usize).pow(i as u32))
            .collect();
        self.value(s, pow[s], &pow)
    }
}

/// Calls `visit` with every alternating graph of `a` Max and `b` Min vertices in which every
/// vertex has a successor (and, if `exits`, also with every choice of exits: none, lost or won
/// by Max, a vertex then needing a successor or an exit). Returns how many it visited.
fn for_each_alternating(
    a: usize,
    b: usize,
    exits: bool,
    mut visit: impl FnMut(&[u8], &[Option<bool>]),
) -> u64 {
    let n = a + b;
    let other = |v: usize| {
        if v < a {
            ((1u8 << b) - 1) << a
        } else {
            (1u8 << a) - 1
        }
    };
    // the choices of one vertex: (successor mask, exit)
    let choices: Vec<Vec<(u8, Option<bool>)>> = (0..n)
        .map(|v| {
            let mut c = Vec::new();
            let full = other(v);
            let exit_options: &[Option<bool>] = if exits {
                &[None, Some(false), Some(true)]
            } else {
                &[None]
            };
            let mut sub = full;
            loop {
                for &e in exit_options {
                    if sub != 0 || e.is_some() {
                        c.push((sub, e));
                    }
                }
                if sub == 0 {
                    break;
                }
                sub = (sub - 1) & full;
            }
            c
        })
        .collect();
    let mut idx = vec![0usize; n];
    let mut count = 0;
    loop {
        let succ: Vec<u8> = (0..n).map(|v| choices[v][idx[v]].0).collect();
        let exit: Vec<Option<bool>> = (0..n).map(|v| choices[v][idx[v]].1).collect();
        visit(&succ, &exit);
        count += 1;
        let mut v = 0;
        while v < n {
            idx[v] += 1;
            if idx[v] < choices[v].len() {
                break;
            }
            idx[v] = 0;
            v += 1;
        }
        if v == n {
            return count;
        }
    }
}

/// The starts and payoff vectors (as masks) where V_2 != V_3 (and V_3 != V_4 if `four`), over
/// every graph that `for_each_alternating` visits.
fn enumerate(a: usize, b: usize, exits: bool, four: bool) -> (u64, u64) {
    let n = a + b;
    let mut solvers: Vec<BitSolver> = (2..=if four { 4 } else { 3 })
        .map(|k| BitSolver::new(n, k))
        .collect();
    let mut differences = 0u64;
    let graphs = for_each_alternating(a, b, exits, |succ, exit| {
        for sv in solvers.iter_mut() {
            sv.reset();
            for v in 0..n {
                sv.max[v] = v < a;
                sv.succ[v] = succ[v];
                sv.exit[v] = exit[v];
            }
        }
        for s in 0..n {
            let vals: Vec<u64> = solvers.iter_mut().map(|sv| sv.fresh(s)).collect();
            for w in vals.windows(2) {
                differences += (w[0] ^ w[1]).count_ones() as u64;
            }
        }
    });
    (graphs, differences)
}

#[test]
fn bit_solver_matches_the_solver() {
    // The enumeration's solver against Solver 1 on random alternating graphs, all payoff vectors.
    let mut r = Rng(0xD1B5_4A32_D192_ED03);
    for _ in 0..60 {
        let (a, b) = (1 + r.below(3) as usize, 1 + r.below(3) as usize);
        let n = a + b;
        let owners: Vec<bool> = (0..n).map(|v| v < a).collect();
        let p = 30 + r.below(60);
        let mut g = random_game(&mut r, &owners, true, p, 30, 2);
        for k in 2..=4u32 {
            let mut bs = BitSolver::new(n, k);
            for v in 0..n {
                bs.max[v] = g.max[v];
                bs.succ[v] = g.succ[v].iter().fold(0, |m, &w| m | 1 << w);
                bs.exit[v] = g.exit[v].map(|e| e == 1);
            }
            for s in 0..n {
                let mask = bs.fresh(s);
                for pvec in 0..1u64 << n {
                    g.f = (0..n).map(|v| (pvec >> v & 1) as i32).collect();
                    assert_eq!(
                        mask >> pvec & 1,
                        value(&g, k as u8, s) as u64,
                        "k = {k}, s = {s}"
                    );
                }
            }
        }
    }
}

#[test]
fn alternating_games_up_to_six_vertices_agree() {
    // Below 7 vertices there is no exit-free counterexample: every alternating graph of up to
    // 6 vertices (payoffs 0/1, no exits), every start: V_2 = V_3 (and V_3 = V_4 up to 5
    // vertices). With every choice of exits: V_2 = V_3 up to 5 vertices (V_3 = V_4 up to 4).
    // The 7-vertex examples above show the bound is reached.
    let mut graphs = 0;
    for n in 2..=6 {
        for a in 1..n {
            let (g, d) = enumerate(a, n - a, false, n <= 5);
            assert_eq!(d, 0, "{a} Max + {} Min vertices", n - a);
            graphs += g;
        }
    }
    for n in 2..=5 {
        for a in 1..n {
            let (g, d) = enumerate(a, n - a, true, n <= 4);
            assert_eq!(d, 0, "{a} Max + {} Min vertices, with exits", n - a);
            graphs += g;
        }
    }
    println!("{graphs} graphs enumerated, each with every 0/1 payoff vector and every start");
}
