// L2Window (see l2_window.cuh) and the probes of kernels/l2_window.hpp.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/l2_window.cuh"
#include "kernels/device_info.hpp"
#include "kernels/l2_window.hpp"

namespace tiersim {

L2Support l2_persistence_support() {
  const DeviceInfo d = query_device();
  L2Support s;
  s.l2_bytes = d.l2_bytes;
  s.persisting_max = d.persisting_l2_max;
  s.window_max = d.access_policy_window_max;
  if (!d.usable) {
    s.why_not = d.why_not;
  } else if (d.cc_major < 8) {
    s.why_not = d.name + " has compute capability " + std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor) +
                "; L2 persistence needs 8.0 or newer";
  } else if (d.persisting_l2_max == 0) {
    s.why_not = d.name + " reports a persisting L2 maximum of 0 bytes (a MIG instance, or no L2 set-aside)";
  } else if (d.access_policy_window_max == 0) {
    s.why_not = d.name + " reports an access-policy window maximum of 0 bytes";
  } else {
    s.supported = true;
  }
  return s;
}

namespace {

std::mutex g_mu;
std::vector<const cuda::L2Window*> g_live;
L2ProbeState g_released;  // only the released_* fields are used
std::atomic<bool> g_warned{false};

void warn_once(const std::string& what, const std::string& why) {
  if (g_warned.exchange(true)) return;
  std::fprintf(stderr,
               "tiersim: warning: --l2-persist on cannot be honoured for %s: %s; running without an L2 window\n",
               what.c_str(), why.c_str());
}

cudaStreamAttrValue window_value(const void* base, std::size_t bytes, float hit, bool miss_streaming = true) {
  cudaStreamAttrValue v{};
  v.accessPolicyWindow.base_ptr = const_cast<void*>(base);
  v.accessPolicyWindow.num_bytes = bytes;
  v.accessPolicyWindow.hitRatio = hit;
  v.accessPolicyWindow.hitProp = bytes ? cudaAccessPropertyPersisting : cudaAccessPropertyNormal;
  v.accessPolicyWindow.missProp = bytes && miss_streaming ? cudaAccessPropertyStreaming : cudaAccessPropertyNormal;
  return v;
}

}  // namespace

namespace cuda {

L2Window::L2Window(cudaStream_t stream, L2Persist mode, std::size_t requested, std::size_t hot_max,
                   const std::string& what, const Tuning& tuning)
    : stream_(stream), requested_(requested), fill_(tuning.l2_fill), miss_streaming_(tuning.l2_miss_streaming) {
  if (!(fill_ > 0 && fill_ <= 1)) throw Error("L2 window fill " + std::to_string(fill_) + " is not in (0, 1]");
  const L2Support sup = l2_persistence_support();
  if (mode == L2Persist::Off) {
    // A stream tiersim creates carries no window; a reused one might: clear it (cheap).
    if (sup.supported) {
      const cudaStreamAttrValue v = window_value(nullptr, 0, 0.f);
      TIERSIM_CUDA_CHECK(cudaStreamSetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &v), what);
    }
    return;
  }
  if (!sup.supported) {
    warn_once(what, sup.why_not);
    return;
  }
  window_max_ = sup.window_max;
  TIERSIM_CUDA_CHECK(cudaDeviceGetLimit(&previous_limit_, cudaLimitPersistingL2CacheSize), what);
  const std::size_t want =
      std::min(requested ? requested : std::size_t(double(hot_max) / fill_ + 0.5), sup.persisting_max);
  if (want == 0) {
    warn_once(what, "the hot data set is empty");
    return;
  }
  const cudaError_t err = cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, want);
  if (err == cudaErrorNotSupported || err == cudaErrorUnsupportedLimit) {
    (void)cudaGetLastError();
    warn_once(what, std::string("cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize): ") + cudaGetErrorString(err));
    return;
  }
  TIERSIM_CUDA_CHECK(err, "persisting L2 carve-out of " + format_bytes(double(want)) + " for " + what);
  // The driver may round the carve-out: the hit ratio uses what it granted.
  TIERSIM_CUDA_CHECK(cudaDeviceGetLimit(&carveout_, cudaLimitPersistingL2CacheSize), what);
  if (carveout_ == 0) {
    TIERSIM_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, previous_limit_), what);
    warn_once(what, "the driver granted a persisting carve-out of 0 bytes");
    return;
  }
  enabled_ = true;
  std::lock_guard<std::mutex> lock(g_mu);
  g_live.push_back(this);
}

L2Window::~L2Window() { off(); }

void L2Window::target(const void* base, std::size_t bytes, std::size_t touched) {
  if (!enabled_) return;
  std::size_t nb = requested_ ? std::min(bytes, requested_) : bytes;
  nb = std::min(nb, window_max_);
  if (base == base_ && nb == window_bytes_) return;
  // Persisting demand of the (possibly clamped) window, in proportion.
  const double used = touched && bytes ? double(nb) * double(touched) / double(bytes) : double(nb);
  const float hit = nb ? float(std::min(1.0, fill_ * double(carveout_) / used)) : 0.f;
  const cudaStreamAttrValue v = window_value(base, nb, hit, miss_streaming_);
  TIERSIM_CUDA_CHECK(cudaStreamSetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &v));
  base_ = base, window_bytes_ = nb, hit_ratio_ = hit;
}

void L2Window::off() noexcept {
  if (!enabled_) return;
  enabled_ = false;
  const cudaStreamAttrValue v = window_value(nullptr, 0, 0.f);
  const cudaError_t e1 = cudaStreamSetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &v);
  const cudaError_t e2 = cudaStreamSynchronize(stream_);  // no launch with the window still in flight
  const cudaError_t e3 = cudaCtxResetPersistingL2Cache();
  const cudaError_t e4 = cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, previous_limit_);
  cudaStreamAttrValue back{};
  const cudaError_t e5 = cudaStreamGetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &back);
  std::size_t limit_after = 0;
  const cudaError_t e6 = cudaDeviceGetLimit(&limit_after, cudaLimitPersistingL2CacheSize);
  for (cudaError_t e : {e1, e2, e3, e4, e5, e6})
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      std::fprintf(stderr, "tiersim: warning: releasing the L2 window: %s: %s\n", cudaGetErrorName(e),
                   cudaGetErrorString(e));
      break;
    }
  base_ = nullptr, window_bytes_ = 0, hit_ratio_ = 0;
  std::lock_guard<std::mutex> lock(g_mu);
  g_live.erase(std::remove(g_live.begin(), g_live.end(), this), g_live.end());
  g_released.released_any = true;
  g_released.released_stream_bytes = e5 == cudaSuccess ? back.accessPolicyWindow.num_bytes : std::size_t(-1);
  g_released.released_limit_before = previous_limit_;
  g_released.released_limit_after = e6 == cudaSuccess ? limit_after : std::size_t(-1);
  g_released.released_reset = e3 == cudaSuccess;
}

}  // namespace cuda

L2ProbeState l2_probe() {
  L2ProbeState st;
  if (!l2_persistence_support().supported) return st;
  TIERSIM_CUDA_CHECK(cudaDeviceGetLimit(&st.limit_now, cudaLimitPersistingL2CacheSize));
  std::lock_guard<std::mutex> lock(g_mu);
  for (const cuda::L2Window* w : g_live) {
    cudaStreamAttrValue v{};
    TIERSIM_CUDA_CHECK(cudaStreamGetAttribute(w->stream(), cudaStreamAttributeAccessPolicyWindow, &v));
    L2StreamWindow s;
    s.base = v.accessPolicyWindow.base_ptr;
    s.bytes = v.accessPolicyWindow.num_bytes;
    s.hit_ratio = v.accessPolicyWindow.hitRatio;
    s.hit_persisting = v.accessPolicyWindow.hitProp == cudaAccessPropertyPersisting;
    s.miss_streaming = v.accessPolicyWindow.missProp == cudaAccessPropertyStreaming;
    s.carveout = w->carveout();
    st.live.push_back(s);
  }
  st.released_any = g_released.released_any;
  st.released_stream_bytes = g_released.released_stream_bytes;
  st.released_limit_before = g_released.released_limit_before;
  st.released_limit_after = g_released.released_limit_after;
  st.released_reset = g_released.released_reset;
  return st;
}

namespace {

constexpr int kProbePasses = 20;

// Reads the buffer `passes` times (16-byte loads, grid-stride); the sum is written only in an
// impossible case so that the loads are not optimised away and nothing is stored.
__global__ void read_probe_kernel(const float4* __restrict__ p, std::size_t n, int passes, float* sink) {
  float acc = 0.f;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (int pass = 0; pass < passes; ++pass)
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
      const float4 q = p[i];
      acc += q.x + q.y + q.z + q.w;
    }
  if (acc == -1.2345f) *sink = acc;
}

void launch_read_probe(const void* p, std::size_t bytes, float* sink, cudaStream_t s) {
  const DeviceInfo d = query_device();
  read_probe_kernel<<<std::max(1, d.sm_count) * 8, 256, 0, s>>>(static_cast<const float4*>(p), bytes / sizeof(float4),
                                                                kProbePasses, sink);
  TIERSIM_CUDA_CHECK_LAUNCH("read_probe_kernel", format_bytes(double(bytes)));
}

cuda::DeviceBuffer* g_control_buffer = nullptr;

}  // namespace

double l2_read_probe_ms(std::size_t bytes, int reps) {
  bytes = bytes / 16 * 16;
  cuda::DeviceBuffer buf(bytes, "L2 read probe"), sink(sizeof(float), "L2 read probe sink");
  TIERSIM_CUDA_CHECK(cudaMemset(buf.data(), 0x3c, bytes));  // 0x3c3c3c3c: about 0.0115, not zero
  cudaStream_t s = nullptr;
  TIERSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  TIERSIM_CUDA_CHECK(cudaEventCreate(&e0));
  TIERSIM_CUDA_CHECK(cudaEventCreate(&e1));
  std::vector<float> ms;
  for (int r = 0; r < reps + 3; ++r) {
    TIERSIM_CUDA_CHECK(cudaEventRecord(e0, s));
    launch_read_probe(buf.data(), bytes, sink.as<float>(), s);
    TIERSIM_CUDA_CHECK(cudaEventRecord(e1, s));
    TIERSIM_CUDA_CHECK(cudaEventSynchronize(e1));
    float t = 0;
    TIERSIM_CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
    if (r >= 3) ms.push_back(t);
  }
  TIERSIM_CUDA_CHECK(cudaEventDestroy(e0));
  TIERSIM_CUDA_CHECK(cudaEventDestroy(e1));
  TIERSIM_CUDA_CHECK(cudaStreamDestroy(s));
  std::sort(ms.begin(), ms.end());
  return ms.empty() ? 0.0 : double(ms[ms.size() / 2]);
}

std::size_t l2_leave_persisting_lines(std::size_t bytes, std::size_t carveout) {
  const L2Support sup = l2_persistence_support();
  if (!sup.supported) throw Error("L2 persistence not supported: " + sup.why_not);
  std::size_t previous = 0;
  TIERSIM_CUDA_CHECK(cudaDeviceGetLimit(&previous, cudaLimitPersistingL2CacheSize));
  carveout = std::min(carveout, sup.persisting_max);
  bytes = std::min(bytes, sup.window_max) / 16 * 16;
  TIERSIM_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, carveout));
  delete g_control_buffer;
  g_control_buffer = new cuda::DeviceBuffer(bytes, "L2 control buffer");
  cuda::DeviceBuffer sink(sizeof(float), "L2 control sink");
  TIERSIM_CUDA_CHECK(cudaMemset(g_control_buffer->data(), 0x3c, bytes));
  cudaStream_t s = nullptr;
  TIERSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const cudaStreamAttrValue v =
      window_value(g_control_buffer->data(), bytes, float(std::min(1.0, double(carveout) / double(bytes))));
  TIERSIM_CUDA_CHECK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
  for (int r = 0; r < 3; ++r) launch_read_probe(g_control_buffer->data(), bytes, sink.as<float>(), s);
  const cudaStreamAttrValue none = window_value(nullptr, 0, 0.f);
  TIERSIM_CUDA_CHECK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &none));
  TIERSIM_CUDA_CHECK(cudaStreamSynchronize(s));
  TIERSIM_CUDA_CHECK(cudaStreamDestroy(s));
  return previous;  // lines left persisting, limit left set: the bad citizen
}

void l2_cleanup_after_control(std::size_t previous_limit) {
  TIERSIM_CUDA_CHECK(cudaDeviceSynchronize());
  TIERSIM_CUDA_CHECK(cudaCtxResetPersistingL2Cache());
  TIERSIM_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, previous_limit));
  delete g_control_buffer;
  g_control_buffer = nullptr;
}

}  // namespace tiersim
