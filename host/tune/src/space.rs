//! The search space of a graph on a target: the knobs of the default schedule its lowering
//! reads (`ekb_lower::families_of`), each with the values worth trying on this target, and the
//! points of that space (one value per knob).
//!
//! A point is a recipe: [`Point::recipe`] prints it as `set NAME = VALUE` lines, which
//! `ekb lower --recipe` and the tuning database read back ([`Space::point_of`]). The default
//! schedule's own values are always in the space, so the default is always a point.
//!
//! What must stay true: every value of every dimension is within its knob's range (a point
//! never makes `Knobs::set` fail), and [`Space::knobs`] of a point changes only the knobs of
//! the space, over the target's defaults.

use crate::search::Rng;
use ekb_ir::l0::Graph;
use ekb_ir::{Diagnostic, SourceFile, TargetProfile};
use ekb_lower::{families_of, Knob, KnobSpec, Knobs, KNOBS};

/// One knob of the space and the values tried for it (the default among them), ascending.
#[derive(Debug, Clone)]
pub struct Dim {
    pub spec: &'static KnobSpec,
    pub values: Vec<usize>,
}

/// The knobs a graph's lowering reads, and their values.
#[derive(Debug, Clone)]
pub struct Space {
    pub dims: Vec<Dim>,
    /// The target's default knobs: the values of knobs outside the space, and the default point.
    pub base: Knobs,
}

/// A value for each dimension of a [`Space`], in its order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Point(pub Vec<usize>);

/// The values worth trying for `knob` on a target with `lanes` f32 lanes per vector, besides
/// the default. Register tiles stay within a 32-register file; column tiles are whole vectors.
fn candidates(knob: Knob, lanes: usize) -> Vec<usize> {
    match knob {
        Knob::ThreadsMinWork => vec![1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20],
        Knob::ThreadsPerCore => vec![1, 2, 4, 8, 16],
        Knob::MatmulTileCols => [4, 5, 6, 8, 12, 16].iter().map(|v| v * lanes).collect(),
        Knob::MatmulTileVectors => vec![4, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32],
        Knob::MatmulDotRows | Knob::MatmulDotCols => vec![1, 2, 4, 8],
        Knob::MatmulPackLinear => vec![0, 1, 2],
        Knob::ConvOcBlock => vec![1, 2, 3, 4, 6, 8, 12, 16],
        Knob::ConvOwTile => {
            let mut v = vec![4, 7, 8, 14, 28, 56, lanes, 2 * lanes, 4 * lanes];
            v.retain(|&x| x <= 64);
            v
        }
        Knob::ConvOhBlock => vec![1, 2, 4, 8],
        Knob::ConvCopyMinTaps => vec![1, 32, 1 << 20],
        Knob::ConvPlaneCopyBytes => vec![0, 16384, 65536, 262144],
        Knob::ConvWinogradMinChannels => vec![8, 16, 32, 64, 1 << 20],
        Knob::ConvPointwiseMaxOw => vec![0, lanes, 2 * lanes, 4 * lanes],
        Knob::ConvFlatMaxOw => vec![0, lanes / 2, lanes, 2 * lanes],
        Knob::MatmulKBlock => vec![0, 64, 128, 256],
        Knob::ConvPackMaxPixels => vec![0, 16, 32, 64],
        Knob::ConvPackDeepMaxPixels => vec![0, 196, 400, 784],
        Knob::ConvPackTapsMaxPixels => vec![0, 36, 196, 784],
        Knob::ReduceRowTile => (5..=13).map(|p| 1 << p).collect(),
        Knob::TransposeTile => vec![8, 16, 32, 64, 128],
        Knob::ConcatInPlace | Knob::SliceInPlace | Knob::TransposeInPlace => vec![0, 1],
        Knob::GpuMatmulTile => vec![8, 16, 32],
        Knob::GpuMatmulBlockRows | Knob::GpuMatmulBlockCols => vec![32, 64, 128],
        Knob::GpuMatmulThreadRows | Knob::GpuMatmulThreadCols => vec![2, 4, 8],
        Knob::GpuMatmulKTile => vec![8, 16, 32],
        Knob::GpuMatmulMinBlocks => vec![0, 64, 256],
        Knob::GpuMatmulFewRows => vec![0, 64],
        Knob::GpuMatmulSplitK => vec![1, 2, 4, 8],
        Knob::GpuDotMaxRows => vec![0, 1, 2, 4, 8, 16],
        Knob::GpuDotThreads => vec![32, 64, 128, 256, 512, 1024],
        Knob::GpuConvTransposeOc => vec![0, 1, 2, 4, 8],
        Knob::GpuConvTransposeRows => vec![1, 2, 4],
        Knob::GpuConvTransposeMinThreads => vec![0, 64, 256, 1024],
    }
}

impl Space {
    /// The space of `g` lowered for `target`'s CPU (`gpu: false`) or GPU.
    pub fn new(g: &Graph, target: &TargetProfile, gpu: bool) -> Space {
        let base = Knobs::for_target(target);
        let lanes = target.cpu_f32_lanes() as usize;
        let families = families_of(g, gpu);
        let dims = KNOBS
            .iter()
            .filter(|s| families.contains(&s.family))
            .map(|spec| {
                let mut values = candidates(spec.knob, lanes);
                values.push(base.get(spec.knob));
                values.retain(|v| (spec.min..=spec.max).contains(v));
                values.sort_unstable();
                values.dedup();
                Dim { spec, values }
            })
            .collect();
        Space { dims, base }
    }

    /// The default schedule's point.
    pub fn default_point(&self) -> Point {
        Point(self.dims.iter().map(|d| self.base.get(d.spec.knob)).collect())
    }

    /// The knobs of `p`: the target's defaults with the space's knobs set to `p`'s values.
    pub fn knobs(&self, p: &Point) -> Knobs {
        let mut k = self.base;
        for (d, &v) in self.dims.iter().zip(&p.0) {
            k.set(d.spec.name, v).expect("a point's values are within their knobs' ranges");
        }
        k
    }

    /// The point a recipe text sets (knobs it does not set keep the default's value): how the
    /// tuning database's records are read back. Knobs outside the space are refused.
    pub fn point_of(&self, recipe: &str) -> Result<Point, Diagnostic> {
        let mut k = self.base;
        k.parse(&SourceFile::new("recipe", recipe))?;
        let point = Point(self.dims.iter().map(|d| k.get(d.spec.knob)).collect());
        if self.knobs(&point) != k {
            return Err(Diagnostic::error("the recipe sets knobs this graph's lowering does not read"));
        }
        Ok(point)
    }

    /// The recipe text of `p`: one `set NAME = VALUE` line per dimension.
    pub fn recipe(&self, p: &Point) -> String {
        self.dims.iter().zip(&p.0).map(|(d, v)| format!("set {} = {v}\n", d.spec.name)).collect()
    }

    /// A point drawn uniformly.
    pub fn random(&self, rng: &mut Rng) -> Point {
        Point(self.dims.iter().map(|d| d.values[rng.below(d.values.len())]).collect())
    }

    /// `p` with one dimension changed: to a neighbouring value (half the time) or to any other.
    pub fn mutate(&self, p: &Point, rng: &mut Rng) -> Point {
        let mut q = p.clone();
        if self.dims.is_empty() {
            return q;
        }
        let i = rng.below(self.dims.len());
        let values = &self.dims[i].values;
        let at = values.iter().position(|&v| v == p.0[i]);
        q.0[i] = match at {
            Some(at) if rng.below(2) == 0 && values.len() > 1 => {
                let step =
                    if at == 0 || (at + 1 < values.len() && rng.below(2) == 0) { at + 1 } else { at - 1 };
                values[step]
            }
            _ => values[rng.below(values.len())],
        };
        q
    }

    /// Each dimension's value from `a` or `b`, at random.
    pub fn crossover(&self, a: &Point, b: &Point, rng: &mut Rng) -> Point {
        Point(a.0.iter().zip(&b.0).map(|(&x, &y)| if rng.below(2) == 0 { x } else { y }).collect())
    }

    /// How many points the space has.
    pub fn size(&self) -> u128 {
        self.dims.iter().map(|d| d.values.len() as u128).product()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(text: &str) -> Graph {
        ekb_ir::l0::check::load(&SourceFile::new("g.ekir", text)).unwrap()
    }

    #[test]
    fn a_matmul_space_holds_the_default_and_its_points_read_back() {
        let host = TargetProfile::load("host").unwrap();
        let g = graph("graph m(a: f32[64,64], b: f32[64,64]) -> (c: f32[64,64]) {\n  %0 = matmul(a, b)\n  return %0\n}\n");
        let s = Space::new(&g, &host, false);
        let names: Vec<_> = s.dims.iter().map(|d| d.spec.name).collect();
        assert!(names.contains(&"matmul.tile_cols") && names.contains(&"threads.per_core"), "{names:?}");
        assert!(!names.iter().any(|n| n.starts_with("conv.") || n.starts_with("gpu.")), "{names:?}");
        let d = s.default_point();
        assert_eq!(s.knobs(&d), s.base);
        let mut rng = Rng::new(7);
        for _ in 0..50 {
            let p = s.mutate(&s.crossover(&s.random(&mut rng), &d, &mut rng), &mut rng);
            assert_eq!(s.point_of(&s.recipe(&p)).unwrap(), p);
        }
        // A knob the matmul's lowering does not read, set to a value other than the machine's
        // default (which follows its vector width), is refused.
        let oc = s.base.get(Knob::ConvOcBlock) % 16 + 1;
        assert!(s.point_of(&format!("set conv.oc_block = {oc}\n")).is_err());
        assert!(s.size() > 100);
    }
}
