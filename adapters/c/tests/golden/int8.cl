// Kernels of L1 module `int8` in OpenCL C; kernel ABI: docs/gpu.md in the EdgeKernelBench sources.
float ekb_fmin(float a, float b) { return a != a || b != b ? a + b : fmin(a, b); }
float ekb_fmax(float a, float b) { return a != a || b != b ? a + b : fmax(a, b); }

// kernel quant: grid (2, 1, 1), block (256, 1, 1), 0 bytes of shared memory
__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void quant(__global const float* restrict x, __global signed char* restrict q) {
  const int bx = (int)get_group_id(0);
  const int tx = (int)get_local_id(0);
  const int i = bx * 256 + tx;
  if (i < 300) {
    q[i] = (signed char)(convert_int_sat(ekb_fmin(ekb_fmax(rint(x[i] / 0.25f) + -3.0f, -128.0f), 127.0f)));
  }
}

// kernel dequant: grid (2, 1, 1), block (256, 1, 1), 0 bytes of shared memory
__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void dequant(__global const signed char* restrict q, __global float* restrict d) {
  const int bx = (int)get_group_id(0);
  const int tx = (int)get_local_id(0);
  const int i = bx * 256 + tx;
  if (i < 300) {
    d[i] = (float)(q[i] - -3) * 0.25f;
  }
}
