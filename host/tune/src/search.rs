//! The evolutionary search: each batch, a pool of new points is bred from the fastest measured
//! ones (mutation of one knob, crossover of two parents) and from uniform draws, scored by the
//! cost model (or by the roofline prior while the model has too little data), and the batch
//! takes the best-scored points plus a share drawn at random from the pool (epsilon-greedy
//! exploration).
//!
//! What must stay true: a batch never holds a point already measured or two points whose
//! programs are the same (points are compared by the loop program they lower to, so knobs the
//! program does not read never make a new candidate); the search is a function of its seed and
//! the measurements, so a resumed tune makes the same choices from the same records.

use crate::space::{Point, Space};
use std::collections::HashSet;

/// A small deterministic generator (SplitMix64).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// How a batch is chosen.
#[derive(Debug, Clone, Copy)]
pub struct SearchParams {
    /// Candidates bred per batch before scoring.
    pub pool: usize,
    /// Fastest measured points used as parents.
    pub parents: usize,
    /// Share of a batch drawn at random from the pool instead of by score.
    pub epsilon: f64,
}

impl Default for SearchParams {
    fn default() -> SearchParams {
        SearchParams { pool: 192, parents: 6, epsilon: 0.25 }
    }
}

/// A bred point with what the search knows of it before measuring: the fingerprint of its
/// program and its score (lower is predicted faster).
#[derive(Debug, Clone)]
pub struct Scored {
    pub point: Point,
    pub program: String,
    pub features: Vec<f64>,
    pub score: f64,
}

/// The search's state across batches.
#[derive(Debug, Clone)]
pub struct Search {
    pub params: SearchParams,
    pub rng: Rng,
    /// The programs measured or picked so far.
    pub seen: HashSet<String>,
    /// Bred points that could not be lowered.
    pub illegal: usize,
}

impl Search {
    pub fn new(params: SearchParams, seed: u64) -> Search {
        Search { params, rng: Rng::new(seed), seen: HashSet::new(), illegal: 0 }
    }

    /// Breeds up to `params.pool` points from `parents` (fastest first), scores each with
    /// `score` (`None`: the point cannot be lowered, counted in `illegal`), and picks `batch` of
    /// them whose programs are not in `seen`, which then holds them too.
    pub fn propose(
        &mut self,
        space: &Space,
        parents: &[Point],
        batch: usize,
        mut score: impl FnMut(&Point) -> Option<Scored>,
    ) -> Vec<Scored> {
        let (params, rng, seen) = (self.params, &mut self.rng, &mut self.seen);
        let parents = &parents[..parents.len().min(params.parents)];
        let mut bred: HashSet<Point> = HashSet::new();
        let mut pool: Vec<Scored> = Vec::new();
        let mut programs: HashSet<String> = HashSet::new();
        let mut attempts = 0;
        while pool.len() < params.pool && attempts < params.pool * 4 {
            attempts += 1;
            let roll = rng.unit();
            let p = if parents.is_empty() || roll < 0.2 {
                space.random(rng)
            } else if roll < 0.5 && parents.len() > 1 {
                let a = &parents[rng.below(parents.len())];
                let b = &parents[rng.below(parents.len())];
                space.mutate(&space.crossover(a, b, rng), rng)
            } else {
                let mut p = parents[rng.below(parents.len())].clone();
                for _ in 0..1 + rng.below(2) {
                    p = space.mutate(&p, rng);
                }
                p
            };
            if !bred.insert(p.clone()) {
                continue;
            }
            match score(&p) {
                None => self.illegal += 1,
                Some(s) if !seen.contains(&s.program) && programs.insert(s.program.clone()) => pool.push(s),
                Some(_) => {}
            }
        }
        pool.sort_by(|a, b| a.score.total_cmp(&b.score));
        let greedy = ((batch as f64) * (1.0 - params.epsilon)).ceil() as usize;
        let mut picked: Vec<Scored> = Vec::new();
        let mut rest: Vec<Scored> = Vec::new();
        for (i, s) in pool.into_iter().enumerate() {
            if i < greedy.min(batch) {
                picked.push(s);
            } else {
                rest.push(s);
            }
        }
        while picked.len() < batch && !rest.is_empty() {
            picked.push(rest.swap_remove(rng.below(rest.len())));
        }
        for s in &picked {
            seen.insert(s.program.clone());
        }
        picked
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ekb_ir::{SourceFile, TargetProfile};

    #[test]
    fn batches_are_new_programs_bred_from_the_parents_and_greedy_by_score() {
        let host = TargetProfile::load("host").unwrap();
        let g = ekb_ir::l0::check::load(&SourceFile::new(
            "g.ekir",
            "graph s(x: f32[64,256]) -> (y: f32[64,256]) {\n  %0 = softmax(x, axis=-1)\n  return %0\n}\n",
        ))
        .unwrap();
        let space = Space::new(&g, &host, false);
        let mut search = Search::new(SearchParams::default(), 1);
        // A made-up program identity (the recipe) and score (the first knob's value); every
        // fifth point refused.
        let mut calls = 0;
        let score = |p: &Point| {
            calls += 1;
            (calls % 5 != 0).then(|| Scored {
                point: p.clone(),
                program: space.recipe(p),
                features: vec![],
                score: p.0[0] as f64,
            })
        };
        let parents = vec![space.default_point()];
        let b = search.propose(&space, &parents, 8, score);
        assert_eq!(b.len(), 8);
        assert!(search.illegal > 0);
        let programs: HashSet<_> = b.iter().map(|s| s.program.clone()).collect();
        assert_eq!(programs.len(), 8);
        assert_eq!(search.seen.len(), 8);
        // The greedy part holds the lowest scores of the pool.
        let min = b.iter().map(|s| s.score).fold(f64::INFINITY, f64::min);
        assert_eq!(b[0].score, min);
        let again = search.propose(&space, &parents, 8, |p| {
            Some(Scored { point: p.clone(), program: space.recipe(p), features: vec![], score: 0.0 })
        });
        assert!(again.iter().all(|s| !programs.contains(&s.program)));
    }
}
