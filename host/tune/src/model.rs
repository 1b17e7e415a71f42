//! The learned cost model: gradient-boosted regression trees over feature vectors
//! (`crate::features`), fitted to the logarithm of measured times, so that it ranks points by
//! predicted time. Small on purpose: a tuning run has tens to a few thousand records and a few
//! tens of features, so exact splits over sorted values are cheap, and the fit is deterministic
//! (no sampling), which keeps a resumed tune's choices reproducible.
//!
//! What must stay true: [`Model::fit`] on no rows gives a model that predicts 0 for everything
//! (the search then uses the roofline prior); a prediction is a finite number for finite input.

/// How the trees are grown.
#[derive(Debug, Clone, Copy)]
pub struct Params {
    pub trees: usize,
    pub depth: usize,
    /// The shrinkage applied to each tree's output.
    pub rate: f64,
    /// Rows a leaf needs at least.
    pub min_leaf: usize,
}

impl Default for Params {
    fn default() -> Params {
        Params { trees: 60, depth: 3, rate: 0.2, min_leaf: 2 }
    }
}

#[derive(Debug, Clone)]
enum Node {
    Leaf(f64),
    Split { feature: usize, threshold: f64, left: Box<Node>, right: Box<Node> },
}

impl Node {
    fn predict(&self, x: &[f64]) -> f64 {
        match self {
            Node::Leaf(v) => *v,
            Node::Split { feature, threshold, left, right } => {
                if x[*feature] <= *threshold {
                    left.predict(x)
                } else {
                    right.predict(x)
                }
            }
        }
    }
}

/// A fitted ensemble: the mean of the targets plus the trees' shrunk outputs.
#[derive(Debug, Clone, Default)]
pub struct Model {
    base: f64,
    rate: f64,
    trees: Vec<Node>,
}

impl Model {
    /// Fits `rows` (features) to `targets`, one per row, with squared loss.
    pub fn fit(rows: &[Vec<f64>], targets: &[f64], p: Params) -> Model {
        assert_eq!(rows.len(), targets.len(), "one target per row");
        if rows.is_empty() {
            return Model::default();
        }
        let base = targets.iter().sum::<f64>() / targets.len() as f64;
        let mut residual: Vec<f64> = targets.iter().map(|t| t - base).collect();
        let mut trees = Vec::new();
        let all: Vec<usize> = (0..rows.len()).collect();
        for _ in 0..p.trees {
            let tree = grow(rows, &residual, &all, p.depth, p.min_leaf);
            for (i, r) in residual.iter_mut().enumerate() {
                *r -= p.rate * tree.predict(&rows[i]);
            }
            trees.push(tree);
        }
        Model { base, rate: p.rate, trees }
    }

    pub fn predict(&self, x: &[f64]) -> f64 {
        self.base + self.rate * self.trees.iter().map(|t| t.predict(x)).sum::<f64>()
    }

    /// Whether the model was fitted on any rows.
    pub fn is_fitted(&self) -> bool {
        !self.trees.is_empty()
    }
}

fn mean(values: &[f64], rows: &[usize]) -> f64 {
    rows.iter().map(|&i| values[i]).sum::<f64>() / rows.len().max(1) as f64
}

/// The regression tree of `depth` over `rows` that most reduces the squared error of `y`.
fn grow(x: &[Vec<f64>], y: &[f64], rows: &[usize], depth: usize, min_leaf: usize) -> Node {
    let leaf = Node::Leaf(mean(y, rows));
    if depth == 0 || rows.len() < 2 * min_leaf {
        return leaf;
    }
    let total: f64 = rows.iter().map(|&i| y[i]).sum();
    let n = rows.len() as f64;
    let features = x[rows[0]].len();
    let best = (0..features)
        .filter_map(|f| best_split(x, y, rows, f, min_leaf).map(|(gain, t)| (gain, f, t)))
        .fold(None, |acc: Option<(f64, usize, f64)>, c| match acc {
            Some(a) if a.0 >= c.0 - 1e-12 => Some(a),
            _ => Some(c),
        });
    let Some((gain, feature, threshold)) = best else { return leaf };
    if gain <= total * total / n + 1e-12 {
        return leaf;
    }
    let (left, right): (Vec<usize>, Vec<usize>) = rows.iter().partition(|&&i| x[i][feature] <= threshold);
    Node::Split {
        feature,
        threshold,
        left: Box::new(grow(x, y, &left, depth - 1, min_leaf)),
        right: Box::new(grow(x, y, &right, depth - 1, min_leaf)),
    }
}

/// The best threshold on feature `f` for `rows`: the split's score (the sum over both sides
/// of sum^2 / count, which the squared error falls with) and the threshold.
fn best_split(x: &[Vec<f64>], y: &[f64], rows: &[usize], f: usize, min_leaf: usize) -> Option<(f64, f64)> {
    let total: f64 = rows.iter().map(|&i| y[i]).sum();
    let n = rows.len() as f64;
    let mut order = rows.to_vec();
    order.sort_by(|&a, &b| x[a][f].total_cmp(&x[b][f]));
    let mut best: Option<(f64, f64)> = None;
    let mut left_sum = 0.0;
    for (k, pair) in order.windows(2).enumerate() {
        left_sum += y[pair[0]];
        let (lo, hi) = (x[pair[0]][f], x[pair[1]][f]);
        let left_n = (k + 1) as f64;
        if lo == hi || k + 1 < min_leaf || order.len() - k - 1 < min_leaf {
            continue;
        }
        let gain = left_sum * left_sum / left_n + (total - left_sum).powi(2) / (n - left_n);
        if best.is_none_or(|(g, _)| gain > g + 1e-12) {
            best = Some((gain, (lo + hi) / 2.0));
        }
    }
    best
}

/// The share of pairs `(i, j)` with different `truth` that `predicted` orders the same way.
pub fn pairwise_accuracy(predicted: &[f64], truth: &[f64]) -> f64 {
    let (mut agree, mut total) = (0usize, 0usize);
    for i in 0..truth.len() {
        for j in i + 1..truth.len() {
            if truth[i] != truth[j] {
                total += 1;
                if (predicted[i] < predicted[j]) == (truth[i] < truth[j]) {
                    agree += 1;
                }
            }
        }
    }
    if total == 0 {
        1.0
    } else {
        agree as f64 / total as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::Rng;

    /// A synthetic "time" with interactions, a threshold and an irrelevant feature.
    fn truth(x: &[f64]) -> f64 {
        let tile = if x[1] > 0.6 { 2.0 } else { 0.5 };
        (x[0] - 0.3).powi(2) * 4.0 + tile * x[2] + 0.1 * (x[0] * 10.0).sin()
    }

    #[test]
    fn learns_a_synthetic_ranking_it_has_not_seen() {
        let mut rng = Rng::new(3);
        let mut draw = |n: usize| -> (Vec<Vec<f64>>, Vec<f64>) {
            let rows: Vec<Vec<f64>> = (0..n).map(|_| (0..4).map(|_| rng.unit()).collect()).collect();
            let y = rows.iter().map(|r| truth(r)).collect();
            (rows, y)
        };
        let (train_x, train_y) = draw(200);
        let (test_x, test_y) = draw(100);
        let m = Model::fit(&train_x, &train_y, Params::default());
        let predicted: Vec<f64> = test_x.iter().map(|r| m.predict(r)).collect();
        let acc = pairwise_accuracy(&predicted, &test_y);
        assert!(acc > 0.85, "pairwise ranking accuracy {acc:.3} on held-out points");
        // Against a model that knows nothing: half the pairs.
        let none = Model::fit(&[], &[], Params::default());
        assert!(!none.is_fitted());
        assert_eq!(none.predict(&test_x[0]), 0.0);
    }
}
