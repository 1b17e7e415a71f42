// Kernels of L1 module `rowsum` in OpenCL C; kernel ABI: docs/gpu.md in the EdgeKernelBench sources.

// kernel rowsum: grid (8, 1, 1), block (64, 1, 1), 256 bytes of shared memory
__kernel __attribute__((reqd_work_group_size(64, 1, 1))) void rowsum(__global const float* restrict x, __global float* restrict y) {
  const int row = (int)get_group_id(0);
  const int tx = (int)get_local_id(0);
  __local float part[64] __attribute__((aligned(16)));
  float acc[1];
  acc[0] = 0.0f;
  for (int r = 0; r < 2; ++r) {
    const int k = r * 64 + tx;
    if (k < 100) {
      acc[0] = acc[0] + x[row * 100 + k];
    }
  }
  part[tx] = acc[0];
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  if (tx < 32) {
    part[tx] = part[tx] + part[tx + 32];
  }
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  if (tx < 16) {
    part[tx] = part[tx] + part[tx + 16];
  }
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  if (tx < 8) {
    part[tx] = part[tx] + part[tx + 8];
  }
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  if (tx < 4) {
    part[tx] = part[tx] + part[tx + 4];
  }
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  if (tx < 2) {
    part[tx] = part[tx] + part[tx + 2];
  }
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  if (tx == 0) {
    y[row] = part[0] + part[1];
  }
}
