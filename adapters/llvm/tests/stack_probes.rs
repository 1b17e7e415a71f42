//! Kernels whose parallel bodies have frames over a page (so their prologue probes the stack)
//! run within their loop bounds: LLVM 19's shrink-wrapping once moved such a prologue past a
//! block that kept the loop's end in r11, which the inline stack probes use as scratch, and
//! the strided convolution below (a ConvNeXt downsample, as the default schedule lowers it
//! for AVX2) ran its rows past its output.

mod common;
use common::*;
use ekb_llvm::HostModule;

const STRIDED_CONV: &str = "module m {
  input t_to_nchw: f32[1,96,56,56]
  input conv_weight: f32[192,96,2,2]
  input conv_bias: f32[192]
  output y: f32[1,192,28,28]

kernel k3_conv2d(t_to_nchw: f32[1,96,56,56] in, conv_weight: f32[192,96,2,2] in, conv_bias: f32[192] in, y: f32[1,192,28,28] out) {
  parallel i2 in 0..28 {
    alloc rows: f32[96,2,2,28] local
    for ci in 0..96 {
      for r in 0..2 {
        let ih = i2 * 2 + r
        if ih >= 0 && ih < 56 {
          vectorize q in 0..28 {
            rows[ci, r, 0, q] = t_to_nchw[0, ci, ih, q * 2]
          }
          vectorize q2 in 0..28 {
            rows[ci, r, 1, q2] = t_to_nchw[0, ci, ih, q2 * 2 + 1]
          }
        } else {
          vectorize q1 in 0..28 {
            rows[ci, r, 0, q1] = 0.0
          }
          vectorize q3 in 0..28 {
            rows[ci, r, 1, q3] = 0.0
          }
        }
      }
    }
    for b in 0..32 {
      let oc0 = b * 6
      alloc acc: f32[6,16] local
      unroll o in 0..6 {
        vectorize j in 0..16 {
          acc[o, j] = conv_bias[oc0 + o]
        }
      }
      for ci1 in 0..96 {
        for kh in 0..2 {
          for kw in 0..2 {
            vectorize j2 in 0..16 {
              let xv = rows[ci1, kh, kw % 2, j2 + kw / 2]
              unroll o2 in 0..6 {
                acc[o2, j2] = acc[o2, j2] + conv_weight[oc0 + o2, ci1, kh, kw] * xv
              }
            }
          }
        }
      }
      unroll o1 in 0..6 {
        vectorize j1 in 0..16 {
          y[0, oc0 + o1, i2, j1] = acc[o1, j1]
        }
      }
      alloc acc1: f32[6,16] local
      unroll o3 in 0..6 {
        vectorize j3 in 0..16 {
          acc1[o3, j3] = conv_bias[oc0 + o3]
        }
      }
      for ci2 in 0..96 {
        for kh1 in 0..2 {
          for kw1 in 0..2 {
            vectorize j5 in 0..16 {
              let xv1 = rows[ci2, kh1, kw1 % 2, 12 + j5 + kw1 / 2]
              unroll o5 in 0..6 {
                acc1[o5, j5] = acc1[o5, j5] + conv_weight[oc0 + o5, ci2, kh1, kw1] * xv1
              }
            }
          }
        }
      }
      unroll o4 in 0..6 {
        vectorize j4 in 0..16 {
          y[0, oc0 + o4, i2, 12 + j4] = acc1[o4, j4]
        }
      }
    }
  }
}

  run k3_conv2d(t_to_nchw, conv_weight, conv_bias, y)
}
";

/// Deterministic values in [-1, 1).
fn values(n: usize, seed: u32) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (s >> 8) as f32 / (1u32 << 23) as f32 - 1.0
        })
        .collect()
}

#[test]
fn a_parallel_body_with_a_large_frame_keeps_its_loop_bounds_on_avx2() {
    clang();
    assert!(
        std::arch::is_x86_feature_detected!("avx2"),
        "this test runs AVX2 code: it needs an x86-64-v3 CPU"
    );
    let mut target = host();
    target.name = "x86-64-v3".into();
    target.cpu.cpu = "x86-64-v3".into();
    target.cpu.vector_bits = 256;
    let m = module(STRIDED_CONV);
    let ins = inputs(vec![
        ("t_to_nchw", f32s(&[1, 96, 56, 56], values(96 * 56 * 56, 1))),
        ("conv_weight", f32s(&[192, 96, 2, 2], values(192 * 96 * 4, 2))),
        ("conv_bias", f32s(&[192], values(192, 3))),
    ]);
    let want = ekb_ir::l1::interp::run(&m, &ins).unwrap_or_else(|d| panic!("{d}"));
    for threads in [2, 1] {
        let hm = HostModule::build(&m, &target, threads).unwrap_or_else(|d| panic!("{d}"));
        let got = hm.run(&m, &ins).unwrap_or_else(|d| panic!("{d}"));
        let (g, w) = (as_f32(&got["y"]), as_f32(&want["y"]));
        let worst = g.iter().zip(w).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
        assert!(worst < 1e-3, "{threads} thread(s): largest difference {worst}");
    }
}
