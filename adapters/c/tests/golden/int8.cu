// Kernels of L1 module `int8` in CUDA C; kernel ABI: docs/gpu.md in the EdgeKernelBench sources.
__device__ __forceinline__ float ekb_fmin(float a, float b) { return a != a || b != b ? a + b : fminf(a, b); }
__device__ __forceinline__ float ekb_fmax(float a, float b) { return a != a || b != b ? a + b : fmaxf(a, b); }

// kernel quant: grid (2, 1, 1), block (256, 1, 1), 0 bytes of shared memory
extern "C" __global__ void __launch_bounds__(256) quant(const float* __restrict__ x, signed char* __restrict__ q) {
  const int bx = (int)blockIdx.x;
  const int tx = (int)threadIdx.x;
  const int i = bx * 256 + tx;
  if (i < 300) {
    q[i] = (signed char)(__float2int_rz(ekb_fmin(ekb_fmax(rintf(x[i] / 0.25f) + -3.0f, -128.0f), 127.0f)));
  }
}

// kernel dequant: grid (2, 1, 1), block (256, 1, 1), 0 bytes of shared memory
extern "C" __global__ void __launch_bounds__(256) dequant(const signed char* __restrict__ q, float* __restrict__ d) {
  const int bx = (int)blockIdx.x;
  const int tx = (int)threadIdx.x;
  const int i = bx * 256 + tx;
  if (i < 300) {
    d[i] = (float)(q[i] - -3) * 0.25f;
  }
}
