// Kernels of L1 module `big_shared` in CUDA C; kernel ABI: docs/gpu.md in the EdgeKernelBench sources.

// kernel stage: grid (1, 1, 1), block (1024, 1, 1), 65536 bytes of shared memory (dynamic, opt-in)
extern "C" __global__ void __launch_bounds__(1024) stage(const float* __restrict__ x, float* __restrict__ y) {
  extern __shared__ __align__(16) unsigned char ekb_smem[];
  const int bx = (int)blockIdx.x;
  const int tx = (int)threadIdx.x;
  float* buf = (float*)(ekb_smem + 0);
  float* tail = (float*)(ekb_smem + 32768);
  for (int r = 0; r < 8; ++r) {
    buf[r * 1024 + tx] = x[r * 1024 + tx];
    tail[r * 1024 + tx] = x[8192 + r * 1024 + tx];
  }
  __syncthreads();
  for (int r1 = 0; r1 < 8; ++r1) {
    y[r1 * 1024 + tx] = tail[8191 - (r1 * 1024 + tx)];
    y[8192 + r1 * 1024 + tx] = buf[8191 - (r1 * 1024 + tx)];
  }
}
