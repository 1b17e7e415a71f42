// Kernels of L1 module `vector` in OpenCL C; kernel ABI: docs/gpu.md in the EdgeKernelBench sources.
float ekb_fmin(float a, float b) { return a != a || b != b ? a + b : fmin(a, b); }
float ekb_fmax(float a, float b) { return a != a || b != b ? a + b : fmax(a, b); }

// kernel bias_relu: grid (16, 1, 1), block (256, 1, 1), 0 bytes of shared memory
__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void bias_relu(__global const float* restrict x, __global const float* restrict b, __global float* restrict y) {
  const int bx = (int)get_group_id(0);
  const int tx = (int)get_local_id(0);
  const int t = bx * 256 + tx;
  const int r = t / 64;
  const int c4 = t % 64 * 4;
  { // vectorize v in 0..4: 4-wide loads and stores
    const float4 x_v_ = vload4(0, &x[r * 256 + c4 + 0]);
    const float4 b_v_ = vload4(0, &b[c4 + 0]);
    const float s_0_ = x_v_.x + b_v_.x;
    const float y_0_ = ekb_fmax(s_0_, 0.0f) * x[r * 256];
    const float s_1_ = x_v_.y + b_v_.y;
    const float y_1_ = ekb_fmax(s_1_, 0.0f) * x[r * 256];
    const float s_2_ = x_v_.z + b_v_.z;
    const float y_2_ = ekb_fmax(s_2_, 0.0f) * x[r * 256];
    const float s_3_ = x_v_.w + b_v_.w;
    const float y_3_ = ekb_fmax(s_3_, 0.0f) * x[r * 256];
    vstore4((float4)(y_0_, y_1_, y_2_, y_3_), 0, &y[r * 256 + c4 + 0]);
  }
}

// kernel signs: grid (16, 1, 1), block (256, 1, 1), 0 bytes of shared memory
__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void signs(__global const float* restrict x, __global int* restrict z) {
  const int bx = (int)get_group_id(0);
  const int tx = (int)get_local_id(0);
  const int t = bx * 256 + tx;
  const int c4 = t % 64 * 4;
  { // vectorize v in 0..4: 4-wide loads and stores
    const float4 x_v_ = vload4(0, &x[t / 64 * 256 + c4 + 0]);
    const int z_0_ = (x_v_.x > 0.0f ? 1 : -1);
    const int z_1_ = (x_v_.y > 0.0f ? 1 : -1);
    const int z_2_ = (x_v_.z > 0.0f ? 1 : -1);
    const int z_3_ = (x_v_.w > 0.0f ? 1 : -1);
    vstore4((int4)(z_0_, z_1_, z_2_, z_3_), 0, &z[t / 64 * 256 + c4 + 0]);
  }
}

// kernel strided: grid (16, 1, 1), block (256, 1, 1), 0 bytes of shared memory
__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void strided(__global const float* restrict x, __global float* restrict w) {
  const int bx = (int)get_group_id(0);
  const int tx = (int)get_local_id(0);
  const int t = bx * 256 + tx;
  const int r = t / 64;
  const int c = t % 64;
  #pragma unroll
  for (int v = 0; v < 4; ++v) {
    w[r * 256 + v * 64 + c] = x[r * 256 + c * 4 + v];
  }
}

// kernel fragments: grid (64, 1, 1), block (64, 1, 1), 2080 bytes of shared memory
__kernel __attribute__((reqd_work_group_size(64, 1, 1))) void fragments(__global const float* restrict x, __global float* restrict f) {
  const int bx = (int)get_group_id(0);
  const int tx = (int)get_local_id(0);
  __local float tile[520] __attribute__((aligned(16)));
  float frag[4];
  float off[2];
  for (int j = 0; j < 4; ++j) {
    tile[1 * 260 + tx * 4 + j] = x[bx * 256 + tx * 4 + j];
  }
  tile[1 * 260 + 256 + tx % 4] = 0.5f;
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  const int t4 = (63 - tx) * 4;
  { // vectorize v in 0..4: 4-wide loads and stores
    const float4 tile_v_ = vload4(0, &tile[1 * 260 + t4 + 0]);
    frag[0] = tile_v_.x * 2.0f;
    frag[1] = tile_v_.y * 2.0f;
    frag[2] = tile_v_.z * 2.0f;
    frag[3] = tile_v_.w * 2.0f;
  }
  #pragma unroll
  for (int v = 0; v < 2; ++v) {
    off[v] = tile[1 * 260 + t4 + 1 + v];
  }
  for (int j = 0; j < 4; ++j) {
    f[bx * 256 + tx * 4 + j] = frag[3 - j] + off[j % 2];
  }
}
