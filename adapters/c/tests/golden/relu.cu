// Kernels of L1 module `relu` in CUDA C; kernel ABI: docs/gpu.md in the EdgeKernelBench sources.

// kernel relu: grid (4, 1, 1), block (256, 1, 1), 0 bytes of shared memory
extern "C" __global__ void __launch_bounds__(256) relu(const float* __restrict__ x, float* __restrict__ y) {
  const int bx = (int)blockIdx.x;
  const int tx = (int)threadIdx.x;
  const int i = bx * 256 + tx;
  if (i < 1000) {
    y[i] = fmaxf(x[i], 0.0f);
  }
}
