// Kernels of L1 module `half` in CUDA C; kernel ABI: docs/gpu.md in the EdgeKernelBench sources.
__device__ __forceinline__ float ekb_h2f(unsigned short h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ unsigned short ekb_f2h(float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }

// kernel narrow: grid (2, 1, 1), block (256, 1, 1), 0 bytes of shared memory
extern "C" __global__ void __launch_bounds__(256) narrow(const float* __restrict__ x, const unsigned short* __restrict__ h, unsigned short* __restrict__ y, float* __restrict__ w) {
  const int bx = (int)blockIdx.x;
  const int tx = (int)threadIdx.x;
  const int i = bx * 256 + tx;
  if (i < 300) {
    y[i] = ekb_f2h(x[i]);
    w[i] = ekb_h2f(h[i]) * 2.0f;
  }
}
