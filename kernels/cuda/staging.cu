// HostBuffer (kernels/staging.hpp) and the engines' Stager (staging.cuh).
#include "kernels/cuda/staging.cuh"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <future>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <utility>

#include "base/host_memory.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/device_info.hpp"

namespace tiersim {

namespace {

// Page-locked host memory: the pages (huge where the system gives them, allocate_large) touched on
// every thread, then registered with CUDA. On the host of an H200 this locked 0.06 s per GB,
// cudaMallocHost (4 KB pages zeroed and locked on one thread) 0.55, at the same copy rate,
// 54-55 GB/s (docs/performance.md, "End to end"). nullptr where locking fails.
void* lock_pages(std::size_t bytes) {
  void* p = allocate_large(bytes);
  if (!p) return nullptr;
  const long chunks = long((bytes + kHugePageBytes - 1) / kHugePageBytes);
#pragma omp parallel for schedule(static)
  for (long q = 0; q < chunks; ++q) {
    const std::size_t at = std::size_t(q) * kHugePageBytes;
    std::memset(static_cast<char*>(p) + at, 0, std::min(kHugePageBytes, bytes - at));
  }
  if (cudaHostRegister(p, bytes, cudaHostRegisterPortable) != cudaSuccess) {
    (void)cudaGetLastError();  // page-locking can fail (limits)
    std::free(p);
    return nullptr;
  }
  return p;
}
void unlock_pages(void* p) noexcept {
  if (!p) return;
  cudaHostUnregister(p);  // no throw from a destructor; a failure means the context is gone
  std::free(p);
}

// Locked blocks of released buffers, by size, for the next output's staging: locking a block
// costs time and unlocking synchronises the device, so every snapshot would pay both. At most
// kPooled blocks are kept; the process's exit frees them (never destroyed: a static destructor
// would run after the CUDA runtime's).
constexpr std::size_t kPooled = 64;
struct PinnedPool {
  std::mutex mu;
  std::multimap<std::size_t, void*> free;
};
PinnedPool& pinned_pool() {
  static PinnedPool* p = new PinnedPool;
  return *p;
}

// reserve_host_buffers_behind's work in flight (never destroyed, as the pool: a process that
// ends meanwhile just ends).
struct Reserving {
  std::mutex mu;
  std::future<void> done;
};
Reserving& reserving() {
  static Reserving* r = new Reserving;
  return *r;
}
void wait_reserving() {
  Reserving& r = reserving();
  std::lock_guard<std::mutex> lk(r.mu);
  if (r.done.valid()) r.done.get();
}

}  // namespace

HostBuffer::HostBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  wait_reserving();
  {
    PinnedPool& pool = pinned_pool();
    std::lock_guard<std::mutex> lk(pool.mu);
    if (auto it = pool.free.find(bytes); it != pool.free.end()) {
      ptr_ = it->second;
      pinned_ = true;
      pool.free.erase(it);
      return;
    }
  }
  if (query_device().usable && (ptr_ = lock_pages(bytes))) {
    pinned_ = true;
    return;
  }  // page-locking can fail (limits): pageable memory
  ptr_ = allocate_large(bytes);
  if (!ptr_) throw Error("out of host memory for an output staging buffer of " + format_bytes(double(bytes)));
}

void reserve_host_buffers_behind(std::size_t bytes, int count) {
  if (bytes == 0 || !query_device().usable) return;
  wait_reserving();
  int device = 0;
  TIERSIM_CUDA_CHECK(cudaGetDevice(&device), "the device of the staging buffers");
  Reserving& r = reserving();
  std::lock_guard<std::mutex> lk(r.mu);
  r.done = std::async(std::launch::async, [=] {
    // Without a device of its own the thread would pin for device 0 (and make a context there).
    if (cudaSetDevice(device) != cudaSuccess) return (void)cudaGetLastError();
    reserve_host_buffers(bytes, count);
  });
}

void reserve_host_buffers(std::size_t bytes, int count) {
  if (bytes == 0 || !query_device().usable) return;
  PinnedPool& pool = pinned_pool();
  for (int i = 0; i < count; ++i) {
    {
      std::lock_guard<std::mutex> lk(pool.mu);
      if (pool.free.size() >= kPooled) return;
    }
    void* const p = lock_pages(bytes);
    if (!p) return;  // page-locking can fail (limits): outputs then allocate their own
    std::lock_guard<std::mutex> lk(pool.mu);
    pool.free.emplace(bytes, p);
  }
}

void HostBuffer::release() noexcept {
  if (!ptr_) return;
  if (pinned_) {
    PinnedPool& pool = pinned_pool();
    std::lock_guard<std::mutex> lk(pool.mu);
    if (pool.free.size() < kPooled) {
      pool.free.emplace(bytes_, ptr_);
    } else {
      unlock_pages(ptr_);
    }
  } else {
    std::free(ptr_);
  }
  ptr_ = nullptr;
}

HostBuffer::~HostBuffer() { release(); }

HostBuffer::HostBuffer(HostBuffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)),
      bytes_(std::exchange(o.bytes_, 0)),
      pinned_(std::exchange(o.pinned_, false)) {}

HostBuffer& HostBuffer::operator=(HostBuffer&& o) noexcept {
  if (this != &o) {
    release();
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    pinned_ = std::exchange(o.pinned_, false);
  }
  return *this;
}

namespace cuda {
namespace {

// Events around one copy on the copy stream; wait() synchronises on the stop event.
class EventCopy final : public CopyInFlight {
 public:
  EventCopy(cudaStream_t copy, double bytes, const char* what) : bytes_(bytes), what_(what) {
    TIERSIM_CUDA_CHECK(cudaEventCreate(&start_), what_);
    TIERSIM_CUDA_CHECK(cudaEventCreate(&stop_), what_);
    TIERSIM_CUDA_CHECK(cudaEventRecord(start_, copy), what_);
  }
  ~EventCopy() override {
    if (!waited_) cudaEventSynchronize(stop_);  // the host buffer must not go while written
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  void finish(cudaStream_t copy) { TIERSIM_CUDA_CHECK(cudaEventRecord(stop_, copy), what_); }
  cudaEvent_t stop() const { return stop_; }
  void wait() override {
    if (waited_) return;
    TIERSIM_CUDA_CHECK(cudaEventSynchronize(stop_), "waiting for " + what_);
    float ms = 0;
    TIERSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_), what_);
    ms_ = ms;
    waited_ = true;
  }
  KernelRecord record() const override {
    KernelRecord r;
    r.kernel = "copy_device_to_host";
    r.strategy = what_;
    r.ms = ms_;
    r.bytes_compulsory = r.bytes_modelled = bytes_;
    r.work = bytes_;
    r.work_unit = "bytes";
    return r;
  }

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  double bytes_;
  std::string what_;
  double ms_ = 0;
  bool waited_ = false;
};

}  // namespace

Stager::Stager(cudaStream_t compute) : compute_(compute) {
  TIERSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&copy_, cudaStreamNonBlocking), "output copy stream");
}

Stager::~Stager() {
  for (Slot& s : slots_)
    if (s.done) {
      cudaEventSynchronize(s.done);
      cudaEventDestroy(s.done);
    }
  if (copy_) {
    cudaStreamSynchronize(copy_);
    cudaStreamDestroy(copy_);
  }
}

std::unique_ptr<CopyInFlight> Stager::stage_box(const void* base, std::size_t elem, std::size_t pitch,
                                                std::size_t plane, std::size_t x0, std::size_t y0, std::size_t z0,
                                                std::size_t nx, std::size_t ny, std::size_t nz, void* dst,
                                                const char* what) {
  const std::size_t bytes = nx * ny * nz * elem;
  // A packed buffer whose last copy to the host is done, else a new one.
  Slot* free_slot = nullptr;
  for (Slot& s : slots_)
    if (cudaEventQuery(s.done) == cudaSuccess && (!free_slot || s.packed.bytes() >= bytes)) free_slot = &s;
  (void)cudaGetLastError();  // cudaEventQuery's cudaErrorNotReady is not an error
  if (!free_slot) {
    slots_.emplace_back();
    free_slot = &slots_.back();
    TIERSIM_CUDA_CHECK(cudaEventCreateWithFlags(&free_slot->done, cudaEventDisableTiming), what);
  }
  Slot& slot = *free_slot;
  if (slot.packed.bytes() < bytes) {
    slot.packed = DeviceBuffer();
    slot.packed.allocate(bytes, std::string("output staging for ") + what);
  }
  // Packed device copy on the engine's stream: ordered after the step that wrote the field and
  // before the next one that overwrites it.
  if (plane % pitch != 0) throw Error(std::string("stage_box: plane stride not a whole number of rows for ") + what);
  cudaMemcpy3DParms p{};
  p.srcPtr = make_cudaPitchedPtr(const_cast<void*>(base), pitch * elem, pitch * elem, plane / pitch);
  p.srcPos = make_cudaPos(x0 * elem, y0, z0);
  p.dstPtr = make_cudaPitchedPtr(slot.packed.data(), nx * elem, nx * elem, ny);
  p.extent = make_cudaExtent(nx * elem, ny, nz);
  p.kind = cudaMemcpyDeviceToDevice;
  TIERSIM_CUDA_CHECK(cudaMemcpy3DAsync(&p, compute_), std::string("packing ") + what + " for output");
  cudaEvent_t packed = nullptr;
  TIERSIM_CUDA_CHECK(cudaEventCreateWithFlags(&packed, cudaEventDisableTiming), what);
  TIERSIM_CUDA_CHECK(cudaEventRecord(packed, compute_), what);
  TIERSIM_CUDA_CHECK(cudaStreamWaitEvent(copy_, packed, 0), what);
  cudaEventDestroy(packed);  // released once recorded work completes
  auto c = std::make_unique<EventCopy>(copy_, double(bytes), what);
  TIERSIM_CUDA_CHECK(cudaMemcpyAsync(dst, slot.packed.data(), bytes, cudaMemcpyDeviceToHost, copy_),
                     std::string("copying ") + what + " to the host");
  c->finish(copy_);
  TIERSIM_CUDA_CHECK(cudaEventRecord(slot.done, copy_), what);
  return c;
}

PlaneUploader::PlaneUploader(std::size_t plane_bytes, int planes) : plane_bytes_(plane_bytes) {
  if (plane_bytes == 0 || planes <= 0) return;
  // About kUploadBufferBytes (16 MB) a buffer, whole planes: the two are page-locked in a few ms,
  // and a buffer stays in the caches while the threads fill it.
  chunk_ = int(std::clamp<std::size_t>(kUploadBufferBytes / plane_bytes, 1, std::size_t(planes)));
  const std::size_t bytes = std::size_t(chunk_) * plane_bytes;
  for (Buf& b : bufs_) {
    if ((b.ptr = lock_pages(bytes))) {
      b.pinned = true;
    } else {  // page-locking can fail (limits): pageable memory, copied at a lower rate
      b.ptr = allocate_large(bytes);
      if (!b.ptr) throw Error("out of host memory for the upload's buffers (" + format_bytes(double(bytes)) + ")");
      std::memset(b.ptr, 0, bytes);
    }
    TIERSIM_CUDA_CHECK(cudaEventCreateWithFlags(&b.done, cudaEventDisableTiming), "the upload's buffers");
  }
}

PlaneUploader::~PlaneUploader() = default;

PlaneUploader::Buf::~Buf() {
  if (done) cudaEventDestroy(done);
  if (pinned)
    unlock_pages(ptr);
  else
    std::free(ptr);
}

void PlaneUploader::upload(void* dst, int planes, const std::function<void(int first, int count, void* buf)>& fill,
                           cudaStream_t s, const char* what) {
  if (planes > 0 && chunk_ == 0) throw Error(std::string(what) + ": the upload's buffers hold no plane");
  for (int first = 0, c = 0; first < planes; first += chunk_, ++c) {
    // The buffer's copy before (two chunks back, or an earlier upload's) is done.
    Buf& b = bufs_[c % 2];
    TIERSIM_CUDA_CHECK(cudaEventSynchronize(b.done), what);
    const int count = std::min(chunk_, planes - first);
    fill(first, count, b.ptr);
    TIERSIM_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(dst) + std::size_t(first) * plane_bytes_, b.ptr,
                                       std::size_t(count) * plane_bytes_, cudaMemcpyHostToDevice, s),
                       what);
    TIERSIM_CUDA_CHECK(cudaEventRecord(b.done, s), what);
  }
  TIERSIM_CUDA_CHECK(cudaStreamSynchronize(s), what);
}

std::unique_ptr<CopyInFlight> Stager::stage_flat(const void* src, std::size_t bytes, void* dst, const char* what) {
  cudaEvent_t ready = nullptr;
  TIERSIM_CUDA_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming), what);
  TIERSIM_CUDA_CHECK(cudaEventRecord(ready, compute_), what);
  TIERSIM_CUDA_CHECK(cudaStreamWaitEvent(copy_, ready, 0), what);
  cudaEventDestroy(ready);
  auto c = std::make_unique<EventCopy>(copy_, double(bytes), what);
  TIERSIM_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, copy_),
                     std::string("copying ") + what + " to the host");
  c->finish(copy_);
  // The engine updates these arrays in place: its next launch waits for the copy.
  TIERSIM_CUDA_CHECK(cudaStreamWaitEvent(compute_, c->stop(), 0), what);
  return c;
}

}  // namespace cuda
}  // namespace tiersim
