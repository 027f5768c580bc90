//! How the capture-free moves of a layer hang together: for each layer, its strongly
//! connected components (positions that can each reach the other without a capture), how
//! many there are, how many hold more than one position, and the largest.
//!
//! Why it matters: a repetition can only happen inside a component, and a search that keys
//! its positions by the path's history (the third occurrence's) meets every position of
//! the root's component. `cargo run --release --example components -- abapa 2 12`.
//!
//! A position here is a board seen from its mover: the game's positions are these with
//! either side to move, and each component of theirs is one of these taken for both sides.

use awari::index::{rank, size, walk};
use awari::{Rules, Turn};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let rules: Rules = args.get(1).map(String::as_str).unwrap_or("abapa").parse()?;
    let from: u32 = args.get(2).map(String::as_str).unwrap_or("2").parse()?;
    let to: u32 = args.get(3).map(String::as_str).unwrap_or("10").parse()?;
    println!("| layer | boards | components | of more than one | largest | its share |");
    println!("|---:|---:|---:|---:|---:|---:|");
    for n in from..=to {
        let sizes = component_sizes(rules, n);
        let largest = sizes.iter().copied().max().unwrap_or(0);
        println!(
            "| {n} | {} | {} | {} | {largest} | {:.1}% |",
            size(n),
            sizes.len(),
            sizes.iter().filter(|&&c| c > 1).count(),
            100.0 * largest as f64 / size(n) as f64
        );
    }
    Ok(())
}

/// The capture-free moves of layer `n`, by index.
fn quiet_moves(rules: Rules, n: u32) -> Vec<Vec<u32>> {
    let mut moves = vec![Vec::new(); size(n) as usize];
    for (i, board) in walk(n, 0, size(n)) {
        if let Turn::Moves(list) = rules.turn(&board) {
            moves[i as usize] = list
                .iter()
                .filter(|m| m.captured == 0)
                .map(|m| rank(&m.child) as u32)
                .collect();
        }
    }
    moves
}

/// The sizes of the strongly connected components (Tarjan's algorithm, with an explicit
/// stack of calls: a layer's paths are far longer than a thread's stack allows).
fn component_sizes(rules: Rules, n: u32) -> Vec<usize> {
    let moves = quiet_moves(rules, n);
    let count = moves.len();
    let mut order = vec![u32::MAX; count];
    let mut low = vec![0u32; count];
    let mut on_stack = vec![false; count];
    let mut stack = Vec::new();
    let mut sizes = Vec::new();
    let mut next = 0u32;
    for root in 0..count {
        if order[root] != u32::MAX {
            continue;
        }
        let mut calls = vec![(root, 0usize)];
        order[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut k)) = calls.last_mut() {
            if let Some(&w) = moves[v].get(*k) {
                *k += 1;
                let w = w as usize;
                if order[w] == u32::MAX {
                    order[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    calls.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(order[w]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == order[v] {
                let mut members = 0;
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    members += 1;
                    if w == v {
                        break;
                    }
                }
                sizes.push(members);
            }
        }
    }
    sizes
}
