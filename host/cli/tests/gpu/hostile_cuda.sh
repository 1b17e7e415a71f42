#!/usr/bin/env bash
# Hostile CUDA answers through `ekb eval` on an NVIDIA GPU (run by hand on a GPU machine, as the
# CUDA test binary is; docs/gpu.md, Testing): a write past the end of `y`, a `__device__` memo
# replayed from the fourth launch, hard-coded outputs, outputs rounded to bf16, then the honest
# answer. Each must end as expected, or the script exits 1 naming the sample.
#
# Usage: host/cli/tests/gpu/hostile_cuda.sh EKB   (EKB_RT_GPU and the NVRTC library path set as
# docs/gpu.md says; the work folder is a fresh temporary one)
set -euo pipefail
ekb=$(realpath "${1:?usage: hostile_cuda.sh PATH_TO_EKB}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir -p tasks/level1
cat > tasks/level1/t_relu.ekir <<'TASK'
# task: level=1 family=activation domains=[robotics]
# provenance: model=test layer=relu module=torch.nn.ReLU source=tests
graph t_relu(x: f32[128,128]) -> (y: f32[128,128]) {
  %0: f32[128,128] = relu(x)
  return %0
}
TASK
# answer SAMPLE PRELUDE BODY: a native CUDA answer, one thread per element.
answer() {
    mkdir -p "cands/t_relu/cuda/sample-$1"
    printf '// launch: grid=[128] block=[128]\n%s\nextern "C" __global__ void t_relu(const float *x, float *y) {\n  int i = blockIdx.x * 128 + threadIdx.x;\n  float v = x[i];\n%s}\n' \
        "$2" "$3" >"cands/t_relu/cuda/sample-$1/candidate.cu"
}
answer 0 "" '  y[i] = fmaxf(v, 0.0f);
  if (i == 0) y[128 * 128 + 7] = 1.0f;
'
answer 1 '__device__ int launches;
__device__ float memo[128 * 128];' '  if (launches > 3) { y[i] = memo[i]; return; }
  memo[i] = fmaxf(v, 0.0f);
  y[i] = memo[i];
  __syncthreads();
  if (i == 0) atomicAdd(&launches, 1);
'
answer 2 "" '  y[i] = (float)(i % 7) * 0.25f;
'
answer 3 "" '  y[i] = __uint_as_float((__float_as_uint(fmaxf(v, 0.0f)) + 0x8000u) & 0xffff0000u);
'
answer 4 "" '  y[i] = fmaxf(v, 0.0f);
'
"$ekb" eval t_relu --backend cuda --samples 5 --budget 0.2 --max-ci 1e9 --plain \
    --dir tasks --candidates cands --out run >eval.log 2>&1 || { cat eval.log; exit 1; }
python3 - run/results.jsonl <<'CHECK'
import json, sys
rows = sorted((json.loads(l) for l in open(sys.argv[1])), key=lambda r: r["sample"])
want = [("memory", "device guard"), ("correctness", "inputs drawn again during timing"),
        ("correctness", ""), ("correctness", ""), (None, "")]
bad = 0
for r, (cls, cause) in zip(rows, want):
    f = r.get("failure") or {}
    ok = f.get("class") == cls and cause in (f.get("evidence") or "")
    if cls is None:
        ok = r["correct"] and (r.get("timing") or {}).get("speedup") is not None
    print(f"sample {r['sample']}: {'ok' if ok else 'UNEXPECTED'}: {f.get('class')}: {(f.get('evidence') or '')[:160]}")
    bad += not ok
if len(rows) != len(want):
    print(f"{len(rows)} results, expected {len(want)}")
    bad += 1
sys.exit(1 if bad else 0)
CHECK
