// Kernels of L1 module `matmul_tiled` in CUDA C; kernel ABI: docs/gpu.md in the EdgeKernelBench sources.

// kernel mm: grid (3, 3, 1), block (8, 8, 1), 544 bytes of shared memory
extern "C" __global__ void __launch_bounds__(64) mm(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ y) {
  const int bx = (int)blockIdx.x;
  const int by = (int)blockIdx.y;
  const int tx = (int)threadIdx.x;
  const int ty = (int)threadIdx.y;
  __shared__ __align__(16) float ta[64];
  __shared__ __align__(16) float tb[72];
  float acc[1];
  const int row = by * 8 + ty;
  const int col = bx * 8 + tx;
  acc[0] = 0.0f;
  for (int t = 0; t < 3; ++t) {
    if (row < 20) {
      ta[ty * 8 + tx] = a[row * 24 + t * 8 + tx];
    } else {
      ta[ty * 8 + tx] = 0.0f;
    }
    if (col < 18) {
      tb[ty * 9 + tx] = b[(t * 8 + ty) * 18 + col];
    } else {
      tb[ty * 9 + tx] = 0.0f;
    }
    __syncthreads();
    #pragma unroll
    for (int kk = 0; kk < 8; ++kk) {
      acc[0] = acc[0] + ta[ty * 8 + kk] * tb[kk * 9 + tx];
    }
    __syncthreads();
  }
  if (row < 20 && col < 18) {
    y[row * 18 + col] = acc[0];
  }
}
