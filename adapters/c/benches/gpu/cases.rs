//! What the benchmark runs: the workloads as L0 graphs, the roofline microkernels and the
//! launch-overhead kernel as L1 modules, their inputs, their operation and byte counts, and the
//! host computations every timed result is checked against.
//!
//! What it must keep true: every module verifies for its target; the counts are the minimum
//! work (flops of the definition, each input read once and each output written once); a check
//! returns `Err` naming the first wrong element, so a wrong kernel is never reported as a time.

use ekb_ir::l0::{check, Graph};
use ekb_ir::l1::{parse::parse, Module};
use ekb_ir::SourceFile;

/// Reproducible inputs uniform in [-1, 1) (splitmix64).
pub fn random(n: usize, seed: u64) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x2545_f491_4f6c_dd1d;
    (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            ((z >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// `|got - want| <= 1e-3 * max(|want|, 1)`: a relative tolerance of 1e-3, absolute near 0
/// (inputs are in [-1, 1), so results of order 1 and below are compared absolutely).
fn close(got: f32, want: f64) -> bool {
    (f64::from(got) - want).abs() <= 1e-3 * want.abs().max(1.0)
}

fn graph(name: &str, text: &str) -> Result<Graph, String> {
    check::load(&SourceFile::new(name, text))
        .map_err(|ds| ds.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n"))
}

fn module(name: &str, text: &str) -> Result<Module, String> {
    parse(&SourceFile::new(name, text)).map_err(|d| d.to_string())
}

/// The square matmul's size: `y = a @ b`, all f32[N, N].
pub const MATMUL_N: usize = 1024;

pub fn matmul_graph() -> Result<Graph, String> {
    let n = MATMUL_N;
    graph(
        "matmul.ekir",
        &format!(
            "graph matmul_{n}(a: f32[{n},{n}], b: f32[{n},{n}]) -> (y: f32[{n},{n}]) {{\n  %0 = matmul(a, b)\n  \
             return %0\n}}\n"
        ),
    )
}

/// 2·N³ flops; a and b read, y written once.
pub fn matmul_work() -> (f64, f64) {
    let n = MATMUL_N as f64;
    (2.0 * n * n * n, 3.0 * n * n * 4.0)
}

/// Compares 512 sampled elements of `y` with f64 dot products.
pub fn check_matmul(a: &[f32], b: &[f32], y: &[f32]) -> Result<(), String> {
    let n = MATMUL_N;
    let picks = random(2 * 512, 7);
    for p in picks.chunks_exact(2) {
        let idx = |v: f32| (((v + 1.0) / 2.0 * n as f32) as usize).min(n - 1);
        let (i, j) = (idx(p[0]), idx(p[1]));
        let want: f64 = (0..n).map(|k| f64::from(a[i * n + k]) * f64::from(b[k * n + j])).sum();
        let got = y[i * n + j];
        if !close(got, want) {
            return Err(format!("y[{i}, {j}] = {got}, expected {want:.6} (f64 dot product)"));
        }
    }
    Ok(())
}

/// The depthwise convolution: MobileNetV2's `features.3` (the second bottleneck of the 24-channel
/// stage), whose depthwise 3x3 runs with stride 1 and padding 1 on the 6x expansion of 24
/// channels, 144 channels at 56x56.
pub const DW_C: usize = 144;
pub const DW_HW: usize = 56;

pub fn dwconv_graph() -> Result<Graph, String> {
    let (c, s) = (DW_C, DW_HW);
    graph(
        "dwconv.ekir",
        &format!(
            "graph dwconv(x: f32[1,{c},{s},{s}], w: f32[{c},1,3,3]) -> (y: f32[1,{c},{s},{s}]) {{\n  %0 = \
             conv2d(x, w, stride=[1,1], pad=[1,1,1,1], dilation=[1,1], groups={c})\n  return %0\n}}\n"
        ),
    )
}

/// 2·9 flops per output element; x and w read, y written once.
pub fn dwconv_work() -> (f64, f64) {
    let plane = (DW_C * DW_HW * DW_HW) as f64;
    (18.0 * plane, (2.0 * plane + (DW_C * 9) as f64) * 4.0)
}

/// Compares every element of `y` with the convolution computed in f64.
pub fn check_dwconv(x: &[f32], w: &[f32], y: &[f32]) -> Result<(), String> {
    let s = DW_HW as i64;
    for c in 0..DW_C {
        for h in 0..s {
            for v in 0..s {
                let mut want = 0.0f64;
                for kh in 0..3 {
                    for kw in 0..3 {
                        let (ih, iw) = (h + kh - 1, v + kw - 1);
                        if (0..s).contains(&ih) && (0..s).contains(&iw) {
                            let xi = (c as i64 * s + ih) * s + iw;
                            want += f64::from(x[xi as usize]) * f64::from(w[c * 9 + (kh * 3 + kw) as usize]);
                        }
                    }
                }
                let at = (c as i64 * s + h) * s + v;
                let got = y[at as usize];
                if !close(got, want) {
                    return Err(format!("y[0, {c}, {h}, {v}] = {got}, expected {want:.6}"));
                }
            }
        }
    }
    Ok(())
}

/// Threads per block of the microkernels.
pub const BLOCK: usize = 256;
/// Independent FMA chains per thread.
pub const CHAINS: usize = 8;
/// Steps of every chain, all unrolled: the kernel has no loop left, so that OpenCL on a CPU
/// (PoCL) vectorises across work-items, which it does only for a loop-free body (a `for`
/// here measured 14.7 GFLOP/s instead of 115 on PoCL, 2 cores with AVX-512).
pub const STEPS: usize = 128;
/// The FMA kernel's multiplier and addend (`p`): each chain tends to 1, never to a denormal.
pub const FMA_P: [f32; 2] = [0.999, 0.001];

/// The FMA-throughput microkernel: `blocks` blocks of [`BLOCK`] threads, each thread running
/// [`CHAINS`] independent chains `r = r * m + c` for [`STEPS`] steps (m, c read from `p`, so
/// nothing folds; `a * b + c` is contracted into an FMA by NVRTC and by OpenCL C's default
/// `FP_CONTRACT ON`), then storing the chains' sum (so nothing is dropped).
pub fn fma_module(blocks: usize) -> Result<Module, String> {
    let threads = blocks * BLOCK;
    let last = (0..CHAINS).map(|j| format!("r[{j}]")).collect::<Vec<_>>().join(" + ");
    module(
        "fma_peak.ekl1",
        &format!(
            "module fma_peak {{
  input p: f32[2]
  output y: f32[{threads}]

  kernel fma_peak(p: f32[2] in, y: f32[{threads}] out) {{
    launch grid(bx in 0..{blocks}) block(tx in 0..{BLOCK}) {{
      let m = p[0]
      let c = p[1]
      let t = bx * {BLOCK} + tx
      alloc r: f32[{CHAINS}] local
      unroll j in 0..{CHAINS} {{
        r[j] = f32(t % 64 + j) * 0.001
      }}
      unroll s in 0..{STEPS} {{
        unroll j in 0..{CHAINS} {{
          r[j] = r[j] * m + c
        }}
      }}
      y[t] = {last}
    }}
  }}

  run fma_peak(p, y)
}}
"
        ),
    )
}

/// The FMA kernel's flops (2 per FMA; the set-up and the final sum are not counted).
pub fn fma_flops(blocks: usize) -> f64 {
    (blocks * BLOCK * CHAINS * STEPS * 2) as f64
}

/// Compares 256 sampled threads' sums with the chains computed in f64.
pub fn check_fma(y: &[f32]) -> Result<(), String> {
    let [m, c] = FMA_P.map(f64::from);
    for p in random(256, 11) {
        let t = (((p + 1.0) / 2.0 * y.len() as f32) as usize).min(y.len() - 1);
        let want: f64 = (0..CHAINS)
            .map(|j| {
                let mut r = f64::from(((t % 64 + j) as f32) * 0.001);
                for _ in 0..STEPS {
                    r = r * m + c;
                }
                r
            })
            .sum();
        if !close(y[t], want) {
            return Err(format!("y[{t}] = {}, expected {want:.6}", y[t]));
        }
    }
    Ok(())
}

/// Elements each thread of the copy kernel moves.
const COPY_PER_THREAD: usize = 4;

/// The streaming-copy microkernel: `y = x` over `n` f32 (a multiple of 1024), each thread
/// copying [`COPY_PER_THREAD`] elements a grid apart, so consecutive threads touch consecutive
/// elements.
pub fn copy_module(n: usize) -> Result<Module, String> {
    let blocks = n / (BLOCK * COPY_PER_THREAD);
    module(
        "copy_peak.ekl1",
        &format!(
            "module copy_peak {{
  input x: f32[{n}]
  output y: f32[{n}]

  kernel copy_peak(x: f32[{n}] in, y: f32[{n}] out) {{
    launch grid(bx in 0..{blocks}) block(tx in 0..{BLOCK}) {{
      unroll r in 0..{COPY_PER_THREAD} {{
        let i = (r * {blocks} + bx) * {BLOCK} + tx
        y[i] = x[i]
      }}
    }}
  }}

  run copy_peak(x, y)
}}
"
        ),
    )
}

/// The launch-overhead kernel: one block of one thread writing one element (the element shows
/// that the launch ran).
pub fn launch_module() -> Result<Module, String> {
    module(
        "launch.ekl1",
        "module launch_overhead {
  output y: f32[1]

  kernel one(y: f32[1] out) {
    launch grid(bx in 0..1) block(tx in 0..1) {
      y[0] = 1.0
    }
  }

  run one(y)
}
",
    )
}
