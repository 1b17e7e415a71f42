# The vendor reference of the GPU benchmark (benches/gpu.rs), run as `python3 - N C HW REPS`
# with this text on stdin: PyTorch on CUDA device 0, each operation timed with CUDA events
# around it, median of REPS runs after a warm-up.
#   matmul: torch.matmul of two f32[N, N] (cuBLAS), TF32 disabled;
#   dwconv: F.conv2d of f32[1, C, HW, HW] with f32[C, 1, 3, 3], stride 1, padding 1, groups C
#           (cuDNN, TF32 disabled, cudnn.benchmark on so cuDNN picks its fastest algorithm).
# Prints `key value` lines: `version`, `device`, `matmul_ms`, `matmul_rel_err` (against f64 on
# the GPU: about 1e-7 in f32, about 1e-4 had TF32 been used), `dwconv_ms`, `dwconv_rel_err`.
import sys

import torch
import torch.nn.functional as F

n, c, hw, reps = (int(v) for v in sys.argv[1:5])
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.set_float32_matmul_precision("highest")
torch.backends.cudnn.benchmark = True
dev = torch.device("cuda", 0)
gen = torch.Generator(device=dev)
gen.manual_seed(0)


def uniform(*shape):
    return torch.rand(*shape, device=dev, generator=gen) * 2 - 1


def median_ms(fn):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    mid = len(times) // 2
    return times[mid] if len(times) % 2 else (times[mid - 1] + times[mid]) / 2


def rel_err(got, want):
    return ((got.double() - want).abs().max() / want.abs().max()).item()


print("version", f"torch {torch.__version__}, CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}")
print("device", torch.cuda.get_device_name(dev))

a, b = uniform(n, n), uniform(n, n)
y = torch.empty(n, n, device=dev)
print("matmul_ms", median_ms(lambda: torch.matmul(a, b, out=y)))
print("matmul_rel_err", rel_err(y, a.double() @ b.double()))

x, w = uniform(1, c, hw, hw), uniform(c, 1, 3, 3)
out = {}


def conv():
    out["y"] = F.conv2d(x, w, stride=1, padding=1, groups=c)


print("dwconv_ms", median_ms(conv))
print("dwconv_rel_err", rel_err(out["y"], F.conv2d(x.double(), w.double(), stride=1, padding=1, groups=c)))
