//! Random well-typed L0 graphs of elementwise, broadcasting and reduction operators, as
//! canonical `.ekir` text, for property tests.
//!
//! Include it with `#[path = ".../tests/support/random_graph.rs"] mod random_graph;`; it needs
//! only `proptest` and std. What it keeps true:
//! - the text is canonical (what `l0::print::print` writes): every node annotated with its type,
//!   every attribute printed, input initialisers only when not the default;
//! - every graph is valid: shapes broadcast, axes are in range and unique;
//! - values stay numerically tame in f32: each value's range is tracked by interval arithmetic,
//!   `log`/`sqrt`/`rsqrt` only see inputs >= 0.25, `div` only divides by values >= 0.5, `exp` only
//!   sees inputs <= 4, `pow` only positive bases with exponents in [-2, 2], and no op is chosen
//!   whose result could exceed 1e4 in magnitude.
#![allow(dead_code)]

use proptest::prelude::*;

/// Graphs with 1 to `max_nodes` nodes; shrinks toward fewer nodes and seed 0.
pub fn graph_text(max_nodes: usize) -> impl Strategy<Value = String> {
    (any::<u64>(), 1..=max_nodes.max(1)).prop_map(|(seed, nodes)| generate(seed, nodes))
}

/// The graph built deterministically from `seed`, with `nodes` nodes.
pub fn generate(seed: u64, nodes: usize) -> String {
    Gen::new(seed).graph(nodes)
}

/// splitmix64: a small deterministic generator, so a seed names one graph everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n >= 1).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// A value in scope: its name, shape and an interval containing every element.
#[derive(Clone)]
struct Val {
    name: String,
    shape: Vec<usize>,
    lo: f64,
    hi: f64,
}

const LIMIT: f64 = 1e4;

struct Gen {
    rng: Rng,
    base: Vec<usize>,
    inputs: Vec<String>,
    params: Vec<String>,
    body: Vec<String>,
    vals: Vec<Val>,
}

impl Gen {
    fn new(seed: u64) -> Gen {
        let mut rng = Rng(seed);
        let rank = 1 + rng.below(4);
        let base = (0..rank).map(|_| 1 + rng.below(5)).collect();
        Gen { rng, base, inputs: Vec::new(), params: Vec::new(), body: Vec::new(), vals: Vec::new() }
    }

    /// A shape that broadcasts against the base shape: a suffix of it with some dims set to 1.
    fn broadcastable_shape(&mut self) -> Vec<usize> {
        let keep = self.rng.below(self.base.len() + 1);
        let base = self.base.clone();
        base[base.len() - keep..].iter().map(|&d| if self.rng.chance(30) { 1 } else { d }).collect()
    }

    fn graph(mut self, nodes: usize) -> String {
        let n_inputs = 1 + self.rng.below(3);
        for i in 0..n_inputs {
            // The first input has the full base shape, so results keep growing toward it.
            let shape = if i == 0 { self.base.clone() } else { self.broadcastable_shape() };
            let name = format!("x{i}");
            let (lo, hi, init) =
                if self.rng.chance(40) { (0.5, 2.0, " = uniform(0.5, 2.0)") } else { (-1.0, 1.0, "") };
            self.inputs.push(format!("{name}: {}{init}", ty(&shape)));
            self.vals.push(Val { name, shape, lo, hi });
        }
        let mut made = 0;
        let mut attempts = 0;
        while made < nodes && attempts < nodes * 20 {
            attempts += 1;
            if self.node(made) {
                made += 1;
            }
        }
        let last = self.vals.last().cloned().expect("at least one value");
        let mut outs = vec![last];
        if self.vals.len() > 1 && self.rng.chance(50) {
            let other = self.rng.pick(&self.vals[..self.vals.len() - 1]).clone();
            outs.push(other);
        }
        let sig: Vec<String> =
            outs.iter().enumerate().map(|(i, v)| format!("o{i}: {}", ty(&v.shape))).collect();
        let ret: Vec<&str> = outs.iter().map(|v| v.name.as_str()).collect();
        let mut s = format!("graph random({}) -> ({}) {{\n", self.inputs.join(", "), sig.join(", "));
        for p in &self.params {
            s.push_str(&format!("  param {p}\n"));
        }
        for b in &self.body {
            s.push_str(&format!("  {b}\n"));
        }
        s.push_str(&format!("  return {}\n}}\n", ret.join(", ")));
        s
    }

    /// Tries to add node `%k`; returns false when the random choice does not apply.
    fn node(&mut self, k: usize) -> bool {
        // Mostly extend the newest value, so outputs depend on long chains.
        let x = if self.rng.chance(60) {
            self.vals.last().cloned().expect("inputs exist")
        } else {
            self.rng.pick(&self.vals).clone()
        };
        let choice = self.rng.below(10);
        let made = match choice {
            0..=4 => self.unary(&x),
            5..=7 => self.binary(&x),
            _ => self.reduce(&x),
        };
        let Some((call, shape, lo, hi)) = made else { return false };
        if !(lo.abs() <= LIMIT && hi.abs() <= LIMIT && lo <= hi) {
            return false;
        }
        let name = format!("%{k}");
        self.body.push(format!("{name}: {} = {call}", ty(&shape)));
        self.vals.push(Val { name, shape, lo, hi });
        true
    }

    fn unary(&mut self, x: &Val) -> Option<(String, Vec<usize>, f64, f64)> {
        let (lo, hi, n) = (x.lo, x.hi, &x.name);
        let (call, lo2, hi2) = match self.rng.below(18) {
            0 => (format!("relu({n})"), lo.max(0.0), hi.max(0.0)),
            1 => (format!("relu6({n})"), lo.clamp(0.0, 6.0), hi.clamp(0.0, 6.0)),
            2 => {
                let (a, txt) = *self.rng.pick(&[(0.01, "0.01"), (0.2, "0.2")]);
                let f = |v: f64| if v >= 0.0 { v } else { a * v };
                (format!("leaky_relu({n}, alpha={txt})"), f(lo), f(hi))
            }
            3 => {
                let approx = *self.rng.pick(&["none", "tanh"]);
                (format!("gelu({n}, approximate={approx})"), -0.18, hi.max(0.0))
            }
            4 => (format!("silu({n})"), -0.28, hi.max(0.0)),
            5 => (format!("sigmoid({n})"), 0.0, 1.0),
            6 => (format!("tanh({n})"), -1.0, 1.0),
            7 => (format!("hardswish({n})"), -0.375, hi.max(0.0)),
            8 => (format!("hardsigmoid({n})"), 0.0, 1.0),
            9 => (format!("softplus({n}, beta=1.0, threshold=20.0)"), 0.0, hi.max(0.0) + 0.7),
            10 => (format!("elu({n}, alpha=1.0)"), lo.max(-1.0), hi),
            11 if hi <= 4.0 => (format!("exp({n})"), lo.exp(), hi.exp()),
            12 if lo >= 0.25 => (format!("log({n})"), lo.ln(), hi.ln()),
            13 if lo >= 0.25 => (format!("sqrt({n})"), lo.sqrt(), hi.sqrt()),
            14 if lo >= 0.25 => (format!("rsqrt({n})"), 1.0 / hi.sqrt(), 1.0 / lo.sqrt()),
            15 => {
                let a = if lo >= 0.0 {
                    lo
                } else if hi <= 0.0 {
                    -hi
                } else {
                    0.0
                };
                (format!("abs({n})"), a, lo.abs().max(hi.abs()))
            }
            16 => (format!("neg({n})"), -hi, -lo),
            17 => (format!("clip({n}, min=-0.5, max=0.75)"), lo.clamp(-0.5, 0.75), hi.clamp(-0.5, 0.75)),
            _ => return None,
        };
        Some((call, x.shape.clone(), lo2, hi2))
    }

    /// `op(x, y)` with `y` another value whose shape broadcasts with `x`'s, or a new parameter.
    fn binary(&mut self, x: &Val) -> Option<(String, Vec<usize>, f64, f64)> {
        let partners: Vec<Val> =
            self.vals.iter().filter(|v| broadcast(&x.shape, &v.shape).is_some()).cloned().collect();
        let y = if partners.is_empty() || self.rng.chance(25) {
            let shape = self.broadcastable_shape();
            broadcast(&x.shape, &shape)?;
            let name = format!("p{}", self.params.len());
            let (lo, hi, init) = *self.rng.pick(&[
                (-1.0, 1.0, "uniform(-1.0, 1.0)"),
                (0.5, 2.0, "uniform(0.5, 2.0)"),
                (1.0, 1.0, "ones"),
            ]);
            self.params.push(format!("{name}: {} = {init}", ty(&shape)));
            let v = Val { name, shape, lo, hi };
            self.vals.push(v.clone());
            v
        } else {
            self.rng.pick(&partners).clone()
        };
        let (a, b) = if self.rng.chance(50) { (x.clone(), y) } else { (y, x.clone()) };
        let shape = broadcast(&a.shape, &b.shape)?;
        let corners = |f: &dyn Fn(f64, f64) -> f64| {
            let c = [f(a.lo, b.lo), f(a.lo, b.hi), f(a.hi, b.lo), f(a.hi, b.hi)];
            (
                c.iter().copied().fold(f64::INFINITY, f64::min),
                c.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            )
        };
        let (op, lo, hi) = match self.rng.below(7) {
            0 => ("add", a.lo + b.lo, a.hi + b.hi),
            1 => ("sub", a.lo - b.hi, a.hi - b.lo),
            2 => {
                let (lo, hi) = corners(&|p, q| p * q);
                ("mul", lo, hi)
            }
            3 if b.lo >= 0.5 => {
                let (lo, hi) = corners(&|p, q| p / q);
                ("div", lo, hi)
            }
            4 => ("max", a.lo.max(b.lo), a.hi.max(b.hi)),
            5 => ("min", a.lo.min(b.lo), a.hi.min(b.hi)),
            6 if a.lo >= 0.5 && a.hi <= 4.0 && b.lo >= -2.0 && b.hi <= 2.0 => {
                let (lo, hi) = corners(&|p, q| p.powf(q));
                ("pow", lo, hi)
            }
            _ => return None,
        };
        Some((format!("{op}({}, {})", a.name, b.name), shape, lo, hi))
    }

    /// `sum|mean|max|min(x, axes=[..], keepdims=..)` over random distinct axes, some negative.
    fn reduce(&mut self, x: &Val) -> Option<(String, Vec<usize>, f64, f64)> {
        let rank = x.shape.len();
        if rank == 0 {
            return None;
        }
        let mut axes: Vec<usize> = (0..rank).filter(|_| self.rng.chance(50)).collect();
        if axes.is_empty() {
            axes.push(self.rng.below(rank));
        }
        // Shuffle, then write some axes counted from the end.
        for i in (1..axes.len()).rev() {
            let j = self.rng.below(i + 1);
            axes.swap(i, j);
        }
        let written: Vec<String> = axes
            .iter()
            .map(|&a| if self.rng.chance(40) { (a as i64 - rank as i64).to_string() } else { a.to_string() })
            .collect();
        let keepdims = self.rng.chance(50);
        let shape: Vec<usize> = (0..rank)
            .filter_map(|i| match (axes.contains(&i), keepdims) {
                (false, _) => Some(x.shape[i]),
                (true, true) => Some(1),
                (true, false) => None,
            })
            .collect();
        let count: usize = axes.iter().map(|&a| x.shape[a]).product();
        let (op, lo, hi) = match self.rng.below(4) {
            0 => ("sum", x.lo * count as f64, x.hi * count as f64),
            1 => ("mean", x.lo, x.hi),
            2 => ("max", x.lo, x.hi),
            _ => ("min", x.lo, x.hi),
        };
        let call = format!("{op}({}, axes=[{}], keepdims={keepdims})", x.name, written.join(","));
        Some((call, shape, lo, hi))
    }
}

/// Numpy broadcasting, `None` when the shapes are incompatible.
fn broadcast(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            let da = if i + a.len() >= n { a[i + a.len() - n] } else { 1 };
            let db = if i + b.len() >= n { b[i + b.len() - n] } else { 1 };
            match (da, db) {
                _ if da == db => Some(da),
                (1, _) => Some(db),
                (_, 1) => Some(da),
                _ => None,
            }
        })
        .collect()
}

fn ty(shape: &[usize]) -> String {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    format!("f32[{}]", dims.join(","))
}
