// Kernels of L1 module `relu` in CUDA C; kernel ABI: docs/gpu.md in the EdgeKernelBench sources.
__device__ __forceinline__ float ekb_fmin(float a, float b) { return a != a || b != b ? a + b : fminf(a, b); }
__device__ __forceinline__ float ekb_fmax(float a, float b) { return a != a || b != b ? a + b : fmaxf(a, b); }

// kernel relu: grid (4, 1, 1), block (256, 1, 1), 0 bytes of shared memory
extern "C" __global__ void __launch_bounds__(256) relu(const float* __restrict__ x, float* __restrict__ y) {
  const int bx = (int)blockIdx.x;
  const int tx = (int)threadIdx.x;
  const int i = bx * 256 + tx;
  if (i < 1000) {
    y[i] = ekb_fmax(x[i], 0.0f);
  }
}
