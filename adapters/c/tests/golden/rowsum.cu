// Kernels of L1 module `rowsum` in CUDA C; kernel ABI: docs/gpu.md in the EdgeKernelBench sources.

// kernel rowsum: grid (8, 1, 1), block (64, 1, 1), 256 bytes of shared memory
extern "C" __global__ void __launch_bounds__(64) rowsum(const float* __restrict__ x, float* __restrict__ y) {
  const int row = (int)blockIdx.x;
  const int tx = (int)threadIdx.x;
  __shared__ __align__(16) float part[64];
  float acc[1];
  acc[0] = 0.0f;
  for (int r = 0; r < 2; ++r) {
    const int k = r * 64 + tx;
    if (k < 100) {
      acc[0] = acc[0] + x[row * 100 + k];
    }
  }
  part[tx] = acc[0];
  __syncthreads();
  if (tx < 32) {
    part[tx] = part[tx] + part[tx + 32];
  }
  __syncthreads();
  if (tx < 16) {
    part[tx] = part[tx] + part[tx + 16];
  }
  __syncthreads();
  if (tx < 8) {
    part[tx] = part[tx] + part[tx + 8];
  }
  __syncthreads();
  if (tx < 4) {
    part[tx] = part[tx] + part[tx + 4];
  }
  __syncthreads();
  if (tx < 2) {
    part[tx] = part[tx] + part[tx + 2];
  }
  __syncthreads();
  if (tx == 0) {
    y[row] = part[0] + part[1];
  }
}
