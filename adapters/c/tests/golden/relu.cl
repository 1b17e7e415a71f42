// Kernels of L1 module `relu` in OpenCL C; kernel ABI: docs/gpu.md in the EdgeKernelBench sources.
float ekb_fmin(float a, float b) { return a != a || b != b ? a + b : fmin(a, b); }
float ekb_fmax(float a, float b) { return a != a || b != b ? a + b : fmax(a, b); }

// kernel relu: grid (4, 1, 1), block (256, 1, 1), 0 bytes of shared memory
__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void relu(__global const float* restrict x, __global float* restrict y) {
  const int bx = (int)get_group_id(0);
  const int tx = (int)get_local_id(0);
  const int i = bx * 256 + tx;
  if (i < 1000) {
    y[i] = ekb_fmax(x[i], 0.0f);
  }
}
