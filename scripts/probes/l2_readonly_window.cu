// Probe (not part of tiersim; written 2026-11-23, NOT YET RUN: no GPU was lent that session):
// does an L2 persisting window over a READ-ONLY per-point material array pay on Hopper?
// The model is the wave equation in a heterogeneous medium, u_tt = c(x)^2 lap u: per step the
// update reads u, reads and writes u_prev in place, and reads c^2 dt^2 (16 B/point in fp32);
// with c^2 dt^2 persisting in L2 DRAM sees 12 B/point, so a memory-bound update could gain up to
// 1.33x at sizes where c^2 dt^2 fits the carve-out but the three arrays do not fit the L2.
// Unlike tiersim's ping-pong stencil windows (measured slower on an H200, docs/performance.md),
// the persisting set is the same lines every step: no churn in the carve-out.
// Plain column-marching kernels, R = 1 and R = 4; window off vs on over sizes 128^3..384^3.
//   nvcc -O3 -arch=sm_90 -o l2probe scripts/probes/l2_readonly_window.cu && ./l2probe
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)

template <int R, bool MED>
__global__ void wave(const float* __restrict__ u, float* prev, const float* __restrict__ m, int n, float c2) {
  int x = blockIdx.x * 32 + threadIdx.x + R, y = blockIdx.y * 8 + threadIdx.y + R;
  if (x >= n - R || y >= n - R) return;
  int zc = (n - 2 * R + gridDim.z - 1) / gridDim.z;
  int z0 = R + blockIdx.z * zc, z1 = min(z0 + zc, n - R);
  long long sy = n, sz = (long long)n * n;
  for (int z = z0; z < z1; ++z) {
    long long o = x + y * sy + z * sz;
    float lap = -6.f * R * __ldg(u + o);
#pragma unroll
    for (int k = 1; k <= R; ++k)
      lap += __ldg(u + o + k) + __ldg(u + o - k) + __ldg(u + o + k * sy) + __ldg(u + o - k * sy) + __ldg(u + o + k * sz) + __ldg(u + o - k * sz);
    float c = MED ? __ldg(m + o) : c2;
    prev[o] = 2.f * __ldg(u + o) - prev[o] + c * lap;
  }
}

int main() {
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  printf("%s L2 %.1f MB persist max %.1f MB window max %.1f MB\n", p.name, p.l2CacheSize / 1e6, p.persistingL2CacheMaxSize / 1e6, p.accessPolicyMaxWindowSize / 1e6);
  cudaStream_t s; CK(cudaStreamCreate(&s));
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  int sizes[] = {128, 160, 192, 200, 208, 216, 224, 240, 256, 320, 384};
  printf("R med n F_MB | off_us on_us speedup | nomed_us\n");
  for (int R : {1, 4})
  for (int n : sizes) {
    size_t N = size_t(n) * n * n, F = N * 4;
    float *u0, *u1, *m;
    CK(cudaMalloc(&u0, F)); CK(cudaMalloc(&u1, F)); CK(cudaMalloc(&m, F));
    std::vector<float> h(N); for (size_t i = 0; i < N; ++i) h[i] = 0.5f + (i * 2654435761u % 1000) / 2000.f;
    CK(cudaMemcpy(u0, h.data(), F, cudaMemcpyHostToDevice)); CK(cudaMemcpy(u1, h.data(), F, cudaMemcpyHostToDevice));
    for (auto& v : h) v *= 1e-3f;
    CK(cudaMemcpy(m, h.data(), F, cudaMemcpyHostToDevice));
    dim3 grid((n - 2 * R + 31) / 32, (n - 2 * R + 7) / 8, std::max(1, 2 * 132 * 8 / int(((n + 31) / 32) * ((n + 7) / 8))));
    auto run = [&](bool med, int steps) {
      std::vector<float> t;
      float *x = u0, *y = u1;
      for (int i = 0; i < steps; ++i) {
        CK(cudaEventRecord(a, s));
        if (R == 1) { if (med) wave<1, true><<<grid, dim3(32, 8), 0, s>>>(x, y, m, n, 1e-3f); else wave<1, false><<<grid, dim3(32, 8), 0, s>>>(x, y, m, n, 1e-3f); }
        else { if (med) wave<4, true><<<grid, dim3(32, 8), 0, s>>>(x, y, m, n, 1e-3f); else wave<4, false><<<grid, dim3(32, 8), 0, s>>>(x, y, m, n, 1e-3f); }
        CK(cudaEventRecord(b, s)); CK(cudaEventSynchronize(b));
        float ms; CK(cudaEventElapsedTime(&ms, a, b)); t.push_back(ms);
        std::swap(x, y);
      }
      std::sort(t.begin() + 5, t.end()); return t[5 + (t.size() - 5) / 2] * 1000;
    };
    float nomed = run(false, 65);
    float off = run(true, 65);
    size_t carve = std::min(F, size_t(p.persistingL2CacheMaxSize));
    CK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, carve));
    size_t got; CK(cudaDeviceGetLimit(&got, cudaLimitPersistingL2CacheSize));
    cudaStreamAttrValue v{}; v.accessPolicyWindow.base_ptr = m; v.accessPolicyWindow.num_bytes = std::min(F, size_t(p.accessPolicyMaxWindowSize));
    v.accessPolicyWindow.hitRatio = std::min(1.0, double(got) / F); v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting; v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    CK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
    float on = run(true, 65);
    v.accessPolicyWindow.num_bytes = 0; CK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
    CK(cudaCtxResetPersistingL2Cache()); CK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0));
    printf("%d med %d %.1f | %.2f %.2f %.3fx (hit %.2f carve %.1f MB) | %.2f\n", R, n, F / 1e6, off, on, off / on, std::min(1.0, double(got) / F), got / 1e6, nomed);
    CK(cudaFree(u0)); CK(cudaFree(u1)); CK(cudaFree(m));
  }
}
