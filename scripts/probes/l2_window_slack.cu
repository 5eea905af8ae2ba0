// Probe for issue 6 (not part of tiersim; stop 14, 2026-11-23): does the persisting L2 window pay
// on Hopper once the persisting lines are given slack in the carve-out?
//
// Every earlier measurement (docs/performance.md, "L2 persistence") sized the carve-out to the hot
// set (rounded up to whole L2 ways: 1/16 of the L2) and set hitRatio = carve-out / hot set, so the
// persisting lines filled 82-100% of the set-aside ways. Hypothesis here: with the carve-out that
// full, uneven spread of the hot lines over the L2 sets makes persisting lines evict each other
// (they cannot take normal ways), which costs more than the window saves. Test: carve-out at the
// device maximum and hitRatio = f * carve-out / hot set; plus a carve-out with no window (does
// the set-aside alone slow the streams?). Run 1 (H100, docs/data/stop14/s14c1.log): the set-aside
// alone, at the maximum, made every kernel here 1.6-2.8x slower, so run 2 sweeps the carve-out
// in whole ways (1/16 of the L2 each: the driver's granularity, read back). Run 2 (call2.log):
// a carve-out of 2-4 ways costs nothing, 6 ways 0.77-0.99x, 10 ways 0.33-0.56x, with no window;
// with the window, the best carve-out holds the hot set with some room (heat 176^3: 7 ways,
// 1.26x) and the gain falls once the set-aside ways starve the other field.
// Both runs: NVIDIA H100 80GB HBM3; docs/performance.md, "L2 persistence", has the tables.
//
// Three access patterns, each timed with CUDA events per launch (median after warm-up):
//   heat  : ping-pong 7-point update, window fixed on buffer A (read on even steps, written on odd)
//   wave  : u_tt = c^2 lap u with a read-only per-point c^2 dt^2 array m; window on m
//   guide : the CUDA programming guide's pattern, S[i] = S[i] + P[i % nP]; window on P (read-only)
//
//   nvcc -O3 -std=c++17 --extended-lambda -arch=sm_90 -o l2slack scripts/probes/l2_window_slack.cu
//   ./l2slack                      # the sweep
//   ./l2slack one heat 192 max0.5  # one configuration, 40 launches (for ncu)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <cuda_runtime.h>

#define CK(x)                                        \
  do {                                               \
    cudaError_t e = (x);                             \
    if (e != cudaSuccess) {                          \
      printf("%s: %s\n", #x, cudaGetErrorString(e)); \
      exit(1);                                       \
    }                                                \
  } while (0)

// One thread per (x, y) column, marching a z chunk; R = 1. body(o, v, lap) per interior point.
template <class Body>
__device__ void march(const float* __restrict__ u, int n, Body body) {
  int x = blockIdx.x * 32 + threadIdx.x + 1, y = blockIdx.y * 8 + threadIdx.y + 1;
  if (x >= n - 1 || y >= n - 1) return;
  int zc = (n - 2 + gridDim.z - 1) / gridDim.z;
  int z0 = 1 + blockIdx.z * zc, z1 = min(z0 + zc, n - 1);
  long long sy = n, sz = (long long)n * n;
  for (int z = z0; z < z1; ++z) {
    long long o = x + y * sy + z * sz;
    float v = __ldg(u + o);
    float lap = __ldg(u + o + 1) + __ldg(u + o - 1) + __ldg(u + o + sy) + __ldg(u + o - sy) + __ldg(u + o + sz) +
                __ldg(u + o - sz) - 6.f * v;
    body(o, v, lap);
  }
}

__global__ void heat(const float* __restrict__ in, float* __restrict__ out, int n, float c) {
  march(in, n, [=] __device__(long long o, float v, float lap) { out[o] = v + c * lap; });
}

__global__ void wave(const float* __restrict__ u, float* prev, const float* __restrict__ m, int n) {
  march(u, n, [=] __device__(long long o, float v, float lap) { prev[o] = 2.f * v - prev[o] + __ldg(m + o) * lap; });
}

// Grid-stride over S (float4), P (float4) re-read every nP elements.
__global__ void guide(const float4* __restrict__ P, float4* S, long long nS, long long nP) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < nS; i += (long long)gridDim.x * blockDim.x) {
    float4 p = __ldg(P + i % nP), s = S[i];
    S[i] = make_float4(s.x + p.x, s.y + p.y, s.z + p.z, s.w + p.w);
  }
}

struct Variant {
  std::string name;
  bool carve_max;  // carve-out at the device maximum (else: min(hot, max), rounded by the driver)
  double fill;     // hitRatio = fill * carve / hot (capped at 1); 0: carve-out only, no window
  bool window;
  int ways = 0;  // > 0: carve-out of exactly this many sixteenths of the L2 (one way each)
};

static cudaDeviceProp prop;
static cudaStream_t stream;
static cudaEvent_t ev0, ev1;

// Sets the variant up on `stream`; returns {carve granted, hitRatio}.
static std::pair<size_t, double> apply(const Variant& v, void* hot, size_t hot_bytes) {
  size_t want = v.ways        ? size_t(prop.l2CacheSize) / 16 * v.ways
                : v.carve_max ? size_t(prop.persistingL2CacheMaxSize)
                              : std::min(hot_bytes, size_t(prop.persistingL2CacheMaxSize));
  want = std::min(want, size_t(prop.persistingL2CacheMaxSize));
  CK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, want));
  size_t got = 0;
  CK(cudaDeviceGetLimit(&got, cudaLimitPersistingL2CacheSize));
  double hit = 0;
  if (v.window) {
    size_t win = std::min(hot_bytes, size_t(prop.accessPolicyMaxWindowSize));
    hit = std::min(1.0, v.fill * double(got) / double(win));
    cudaStreamAttrValue a{};
    a.accessPolicyWindow.base_ptr = hot;
    a.accessPolicyWindow.num_bytes = win;
    a.accessPolicyWindow.hitRatio = float(hit);
    a.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    a.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    CK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &a));
  }
  return {got, hit};
}

static void reset() {
  cudaStreamAttrValue a{};
  a.accessPolicyWindow.num_bytes = 0;
  CK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &a));
  CK(cudaStreamSynchronize(stream));
  CK(cudaCtxResetPersistingL2Cache());
  CK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0));
}

struct Case {
  std::string kind;
  int n = 0;      // grid edge (heat, wave)
  size_t mb = 0;  // hot MB (guide)
  size_t hot_bytes = 0, total_bytes = 0;
  float *a = nullptr, *b = nullptr, *m = nullptr;
  void* hot = nullptr;
  long long nS = 0, nP = 0;
  int step = 0;

  void make(const std::string& k, int size) {
    kind = k;
    if (k == "guide") {
      mb = size;
      nP = (long long)size * 1000000 / 16;
      nS = nP * 6;  // S is 6x P: P's reuse distance (P + 2 S bytes per sweep) far above the L2
      CK(cudaMalloc(&a, nP * 16));
      CK(cudaMalloc(&b, nS * 16));
      CK(cudaMemset(a, 0, nP * 16));
      CK(cudaMemset(b, 0, nS * 16));
      hot = a;
      hot_bytes = nP * 16;
      total_bytes = nP * 16 + nS * 32;
      return;
    }
    n = size;
    size_t N = size_t(n) * n * n, F = N * 4;
    std::vector<float> h(N);
    for (size_t i = 0; i < N; ++i) h[i] = 0.5f + float(i * 2654435761u % 1000) / 2000.f;
    CK(cudaMalloc(&a, F));
    CK(cudaMalloc(&b, F));
    CK(cudaMemcpy(a, h.data(), F, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b, h.data(), F, cudaMemcpyHostToDevice));
    if (k == "wave") {
      for (auto& v : h) v *= 1e-3f;
      CK(cudaMalloc(&m, F));
      CK(cudaMemcpy(m, h.data(), F, cudaMemcpyHostToDevice));
      hot = m;
      total_bytes = 4 * F;  // u read, prev read + written, m read
    } else {
      hot = a;
      total_bytes = 2 * F;
    }
    hot_bytes = F;
  }
  void launch() {
    if (kind == "guide") {
      guide<<<prop.multiProcessorCount * 8, 256, 0, stream>>>(reinterpret_cast<float4*>(a),
                                                              reinterpret_cast<float4*>(b), nS, nP);
      return;
    }
    dim3 grid((n - 2 + 31) / 32, (n - 2 + 7) / 8,
              std::max(1, 2 * prop.multiProcessorCount * 8 / int(((n + 31) / 32) * ((n + 7) / 8))));
    bool even = (step++ % 2) == 0;
    if (kind == "heat")
      heat<<<grid, dim3(32, 8), 0, stream>>>(even ? a : b, even ? b : a, n, 0.1f);
    else
      wave<<<grid, dim3(32, 8), 0, stream>>>(even ? a : b, even ? b : a, m, n);
  }
  // Median of `steps` launches after 6 warm-up (even count: both ping-pong directions alike).
  float time(int steps) {
    std::vector<float> t;
    for (int i = 0; i < 6 + steps; ++i) {
      CK(cudaEventRecord(ev0, stream));
      launch();
      CK(cudaEventRecord(ev1, stream));
      CK(cudaEventSynchronize(ev1));
      float ms;
      CK(cudaEventElapsedTime(&ms, ev0, ev1));
      if (i >= 6) t.push_back(ms * 1000.f);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }
  void free_all() {
    CK(cudaFree(a));
    CK(cudaFree(b));
    if (m) CK(cudaFree(m));
  }
};

// exact: the carve-out tiersim asks for (the hot set, rounded up by the driver), hitRatio 1 where
// it fits; wN: N ways, hitRatio = 0.95 N ways / hot; cN: N ways set aside, no window at all.
static std::vector<Variant> variants() {
  std::vector<Variant> v = {{"exact", false, 1.0, true}};
  for (int w = 4; w <= 10; ++w) v.push_back({"w" + std::to_string(w), false, 0.95, true, w});
  for (int w = 2; w <= 10; w += 2) v.push_back({"c" + std::to_string(w), false, 0, false, w});
  return v;
}

int main(int argc, char** argv) {
  CK(cudaGetDeviceProperties(&prop, 0));
  CK(cudaStreamCreate(&stream));
  CK(cudaEventCreate(&ev0));
  CK(cudaEventCreate(&ev1));
  printf("%s: L2 %.2f MB, persisting max %.2f MB, window max %.2f MB\n", prop.name, prop.l2CacheSize / 1e6,
         prop.persistingL2CacheMaxSize / 1e6, prop.accessPolicyMaxWindowSize / 1e6);
  if (argc >= 5 && !strcmp(argv[1], "one")) {
    Case c;
    c.make(argv[2], atoi(argv[3]));
    for (auto& v : variants())
      if (v.name == argv[4]) apply(v, c.hot, c.hot_bytes);
    float us = c.time(40);
    printf("one %s %s %s: %.2f us\n", argv[2], argv[3], argv[4], us);
    reset();
    c.free_all();
    return 0;
  }
  printf("kind size hot_MB total_MB off_us | variant: carve_MB hit us speedup ...\n");
  struct Sweep {
    const char* kind;
    std::vector<int> sizes;
  };
  std::vector<Sweep> sweeps = {
      {"heat", {160, 168, 176, 184, 192, 200, 208, 256}}, {"wave", {160, 176, 192}}, {"guide", {8, 16, 24, 32}}};
  for (auto& s : sweeps)
    for (int size : s.sizes) {
      Case c;
      c.make(s.kind, size);
      float off = c.time(40);
      printf("%s %d %.1f %.1f %.2f |", s.kind, size, c.hot_bytes / 1e6, c.total_bytes / 1e6, off);
      for (auto& v : variants()) {
        auto [got, hit] = apply(v, c.hot, c.hot_bytes);
        float on = c.time(40);
        reset();
        printf(" %s: %.1f %.2f %.2f %.3fx |", v.name.c_str(), got / 1e6, hit, on, off / on);
      }
      float off2 = c.time(40);  // drift check: off again after every variant
      printf(" off2 %.2f\n", off2);
      fflush(stdout);
      c.free_all();
    }
  return 0;
}
