// Kernels of L1 module `matmul_tiled` in OpenCL C; kernel ABI: docs/gpu.md in the EdgeKernelBench sources.

// kernel mm: grid (3, 3, 1), block (8, 8, 1), 544 bytes of shared memory
__kernel __attribute__((reqd_work_group_size(8, 8, 1))) void mm(__global const float* restrict a, __global const float* restrict b, __global float* restrict y) {
  const int bx = (int)get_group_id(0);
  const int by = (int)get_group_id(1);
  const int tx = (int)get_local_id(0);
  const int ty = (int)get_local_id(1);
  __local float ta[64] __attribute__((aligned(16)));
  __local float tb[72] __attribute__((aligned(16)));
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
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    #pragma unroll
    for (int kk = 0; kk < 8; ++kk) {
      acc[0] = acc[0] + ta[ty * 8 + kk] * tb[kk * 9 + tx];
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  }
  if (row < 20 && col < 18) {
    y[row * 18 + col] = acc[0];
  }
}
