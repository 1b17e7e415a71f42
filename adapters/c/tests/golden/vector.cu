// Kernels of L1 module `vector` in CUDA C; kernel ABI: docs/gpu.md in the EdgeKernelBench sources.
__device__ __forceinline__ float ekb_fmin(float a, float b) { return a != a || b != b ? a + b : fminf(a, b); }
__device__ __forceinline__ float ekb_fmax(float a, float b) { return a != a || b != b ? a + b : fmaxf(a, b); }

// kernel bias_relu: grid (16, 1, 1), block (256, 1, 1), 0 bytes of shared memory
extern "C" __global__ void __launch_bounds__(256) bias_relu(const float* __restrict__ x, const float* __restrict__ b, float* __restrict__ y) {
  const int bx = (int)blockIdx.x;
  const int tx = (int)threadIdx.x;
  const int t = bx * 256 + tx;
  const int r = t / 64;
  const int c4 = t % 64 * 4;
  { // vectorize v in 0..4: 4-wide loads and stores
    const float4 x_v_ = *(const float4*)(&x[r * 256 + c4 + 0]);
    const float4 b_v_ = *(const float4*)(&b[c4 + 0]);
    const float s_0_ = x_v_.x + b_v_.x;
    const float y_0_ = ekb_fmax(s_0_, 0.0f) * x[r * 256];
    const float s_1_ = x_v_.y + b_v_.y;
    const float y_1_ = ekb_fmax(s_1_, 0.0f) * x[r * 256];
    const float s_2_ = x_v_.z + b_v_.z;
    const float y_2_ = ekb_fmax(s_2_, 0.0f) * x[r * 256];
    const float s_3_ = x_v_.w + b_v_.w;
    const float y_3_ = ekb_fmax(s_3_, 0.0f) * x[r * 256];
    *(float4*)(&y[r * 256 + c4 + 0]) = make_float4(y_0_, y_1_, y_2_, y_3_);
  }
}

// kernel signs: grid (16, 1, 1), block (256, 1, 1), 0 bytes of shared memory
extern "C" __global__ void __launch_bounds__(256) signs(const float* __restrict__ x, int* __restrict__ z) {
  const int bx = (int)blockIdx.x;
  const int tx = (int)threadIdx.x;
  const int t = bx * 256 + tx;
  const int c4 = t % 64 * 4;
  { // vectorize v in 0..4: 4-wide loads and stores
    const float4 x_v_ = *(const float4*)(&x[t / 64 * 256 + c4 + 0]);
    const int z_0_ = (x_v_.x > 0.0f ? 1 : -1);
    const int z_1_ = (x_v_.y > 0.0f ? 1 : -1);
    const int z_2_ = (x_v_.z > 0.0f ? 1 : -1);
    const int z_3_ = (x_v_.w > 0.0f ? 1 : -1);
    *(int4*)(&z[t / 64 * 256 + c4 + 0]) = make_int4(z_0_, z_1_, z_2_, z_3_);
  }
}

// kernel strided: grid (16, 1, 1), block (256, 1, 1), 0 bytes of shared memory
extern "C" __global__ void __launch_bounds__(256) strided(const float* __restrict__ x, float* __restrict__ w) {
  const int bx = (int)blockIdx.x;
  const int tx = (int)threadIdx.x;
  const int t = bx * 256 + tx;
  const int r = t / 64;
  const int c = t % 64;
  #pragma unroll
  for (int v = 0; v < 4; ++v) {
    w[r * 256 + v * 64 + c] = x[r * 256 + c * 4 + v];
  }
}

// kernel fragments: grid (64, 1, 1), block (64, 1, 1), 2080 bytes of shared memory
extern "C" __global__ void __launch_bounds__(64) fragments(const float* __restrict__ x, float* __restrict__ f) {
  const int bx = (int)blockIdx.x;
  const int tx = (int)threadIdx.x;
  __shared__ __align__(16) float tile[520];
  float frag[4];
  float off[2];
  for (int j = 0; j < 4; ++j) {
    tile[1 * 260 + tx * 4 + j] = x[bx * 256 + tx * 4 + j];
  }
  tile[1 * 260 + 256 + tx % 4] = 0.5f;
  __syncthreads();
  const int t4 = (63 - tx) * 4;
  { // vectorize v in 0..4: 4-wide loads and stores
    const float4 tile_v_ = *(const float4*)(&tile[1 * 260 + t4 + 0]);
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
