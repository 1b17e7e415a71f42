// Kernels of L1 module `expressions` in OpenCL C; kernel ABI: docs/gpu.md in the EdgeKernelBench sources.
float ekb_fmin(float a, float b) { return a != a || b != b ? a + b : fmin(a, b); }
float ekb_fmax(float a, float b) { return a != a || b != b ? a + b : fmax(a, b); }

// kernel exprs: grid (1, 1, 1), block (64, 1, 1), 0 bytes of shared memory
__kernel __attribute__((reqd_work_group_size(64, 1, 1))) void exprs(__global const float* restrict x, __global const int* restrict n, __global float* restrict y, __global int* restrict z) {
  const int bx = (int)get_group_id(0);
  const int tx = (int)get_local_id(0);
  const float int_ = x[tx];
  const float m = -INFINITY;
  const bool c = (int_ > 0.0f && !(int_ != int_)) || tx % 2 == 0;
  y[tx] = (c ? exp(int_) + log(fabs(int_)) * sqrt(2.0f) : rsqrt(1.5f) / tanh(int_) - erf(int_));
  y[tx] = y[tx] + pow(int_, 2.0f) - floor(int_) * ceil(int_) + ekb_fmin(int_, m) - ekb_fmax(int_, 0.5f) + (float)tx - (float)c;
  y[tx] = y[tx] + sin(int_) * cos(int_);
  z[tx] = (-2147483647 - 1) + convert_int_sat(int_) * (int)c - (int)abs(n[tx]) / 3 % 7 - min(n[tx], 2) + max(-(-3), tx - (1 - 2));
  const int k_end_ = n[0];
  for (int k = 0; k < k_end_; ++k) {
    z[tx] = z[tx] + k;
  }
}
