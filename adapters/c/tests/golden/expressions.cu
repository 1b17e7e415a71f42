// Kernels of L1 module `expressions` in CUDA C; kernel ABI: docs/gpu.md in the EdgeKernelBench sources.
#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fc00000)
__device__ __forceinline__ float ekb_fmin(float a, float b) { return a != a || b != b ? a + b : fminf(a, b); }
__device__ __forceinline__ float ekb_fmax(float a, float b) { return a != a || b != b ? a + b : fmaxf(a, b); }

// kernel exprs: grid (1, 1, 1), block (64, 1, 1), 0 bytes of shared memory
extern "C" __global__ void __launch_bounds__(64) exprs(const float* __restrict__ x, const int* __restrict__ n, float* __restrict__ y, int* __restrict__ z) {
  const int bx = (int)blockIdx.x;
  const int tx = (int)threadIdx.x;
  const float int_ = x[tx];
  const float m = -INFINITY;
  const bool c = (int_ > 0.0f && !(int_ != int_)) || tx % 2 == 0;
  y[tx] = (c ? expf(int_) + logf(fabsf(int_)) * sqrtf(2.0f) : rsqrtf(1.5f) / tanhf(int_) - erff(int_));
  y[tx] = y[tx] + powf(int_, 2.0f) - floorf(int_) * ceilf(int_) + ekb_fmin(int_, m) - ekb_fmax(int_, 0.5f) + (float)tx - (float)c;
  y[tx] = y[tx] + sinf(int_) * cosf(int_);
  z[tx] = (-2147483647 - 1) + __float2int_rz(int_) * (int)c - abs(n[tx]) / 3 % 7 - min(n[tx], 2) + max(-(-3), tx - (1 - 2));
  const int k_end_ = n[0];
  for (int k = 0; k < k_end_; ++k) {
    z[tx] = z[tx] + k;
  }
}
