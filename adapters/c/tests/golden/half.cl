// Kernels of L1 module `half` in OpenCL C; kernel ABI: docs/gpu.md in the EdgeKernelBench sources.

// kernel narrow: grid (2, 1, 1), block (256, 1, 1), 0 bytes of shared memory
__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void narrow(__global const float* restrict x, __global const half* restrict h, __global half* restrict y, __global float* restrict w) {
  const int bx = (int)get_group_id(0);
  const int tx = (int)get_local_id(0);
  const int i = bx * 256 + tx;
  if (i < 300) {
    vstore_half_rte(x[i], i, y);
    w[i] = vload_half(i, h) * 2.0f;
  }
}
