mod common;
use common::*;

const SPEC: &str = "module relu_add {
  input x: f32[4,8]
  input w: f32[8]
  output y: f32[4,8]
  buffer t0: f32[4,8]

  kernel k0(x: f32[4,8] in, t0: f32[4,8] out) {
    parallel i in 0..4 {
      vectorize j in 0..8 {
        t0[i, j] = max(x[i, j], 0.0)
      }
    }
  }

  kernel k1(t0: f32[4,8] in, w: f32[8] in, y: f32[4,8] out) {
    for i in 0..4 {
      alloc acc: f32[1] local
      acc[0] = 0.0
      for j in 0..8 {
        let v = t0[i, j] + w[j]
        if v > 0.0 && j % 2 == 0 {
          acc[0] = acc[0] + v
        } else if j < 4 {
          acc[0] = acc[0] - 1.0
        } else {
          acc[0] = acc[0] * 0.5
        }
        y[i, j] = select(v > 1.0, acc[0], f32(j))
      }
    }
  }

  run k0(x, t0)
  run k1(t0, w, y)
}
";

#[test]
fn scratch() {
    let m = module(SPEC);
    let ir = ekb_llvm::emit(&m, &host()).unwrap();
    println!("{ir}");
    std::fs::write("/tmp/exp/spec.ll", &ir).unwrap();
}
