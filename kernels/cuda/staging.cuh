// Device-to-host staging for one engine (kernels/staging.hpp): the copies run on a copy stream
// of their own, ordered after the work already queued on the engine's stream, so the engine goes
// on computing while they cross the link.
//
// A grid's interior (a box inside its padded allocation) is first copied device-to-device into a
// packed staging buffer on the engine's stream (about one step's time at the copy bandwidth), so
// the next steps may overwrite the field at once; the packed copy then leaves on the copy stream.
// A flat range (particles) is copied straight from the engine's array, and the engine's stream
// waits for that copy before its next launch (a few ms at most against a step of hundreds).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "kernels/cuda/device_buffer.hpp"
#include "kernels/staging.hpp"

namespace tiersim::cuda {

// Host-to-device, the other way: whole planes through two page-locked buffers of about 16 MB,
// which the threads fill in turn while the other crosses the link at the page-locked rate, so no
// host copy of the whole grid is made. The buffers are page-locked when the engine is made, before
// the output staging buffers are on a thread of their own: page-locking meanwhile would wait for
// those.
class PlaneUploader {
 public:
  PlaneUploader(std::size_t plane_bytes, int planes);  // planes: the most one upload sends
  ~PlaneUploader();
  PlaneUploader(const PlaneUploader&) = delete;
  PlaneUploader& operator=(const PlaneUploader&) = delete;

  // `planes` runs of the plane's bytes into dst (one run of memory), each chunk of planes made by
  // fill(first, count, buf) (zero wherever fill writes nothing, and the same places every time).
  // Returns once the copies are done.
  void upload(void* dst, int planes, const std::function<void(int first, int count, void* buf)>& fill, cudaStream_t s,
              const char* what);

 private:
  struct Buf {
    void* ptr = nullptr;
    bool pinned = false;
    cudaEvent_t done = nullptr;  // its last copy finished
    Buf() = default;
    Buf(const Buf&) = delete;
    Buf& operator=(const Buf&) = delete;
    ~Buf();
  };
  std::size_t plane_bytes_ = 0;
  int chunk_ = 0;  // planes a buffer holds
  Buf bufs_[2];
};

class Stager {
 public:
  // Packed device buffers are kept and reused once their copy to the host is done; there are as
  // many as there are copies in flight (the output queue bounds that).
  explicit Stager(cudaStream_t compute);
  ~Stager();
  Stager(const Stager&) = delete;
  Stager& operator=(const Stager&) = delete;

  // The box [x0, x0 + nx) x [y0, y0 + ny) x [z0, z0 + nz) of elements of `elem` bytes from an
  // array whose rows are `pitch` elements apart and whose planes `plane` elements apart, into
  // dst (packed, x fastest). `dst` must hold nx * ny * nz * elem bytes and outlive the copy.
  std::unique_ptr<CopyInFlight> stage_box(const void* base, std::size_t elem, std::size_t pitch, std::size_t plane,
                                          std::size_t x0, std::size_t y0, std::size_t z0, std::size_t nx,
                                          std::size_t ny, std::size_t nz, void* dst, const char* what);
  // `bytes` from src into dst; the engine's stream waits for the copy before its next launch.
  std::unique_ptr<CopyInFlight> stage_flat(const void* src, std::size_t bytes, void* dst, const char* what);

 private:
  struct Slot {
    DeviceBuffer packed;
    cudaEvent_t done = nullptr;  // the last copy out of this slot finished
  };
  cudaStream_t compute_;
  cudaStream_t copy_ = nullptr;
  std::vector<Slot> slots_;
};

}  // namespace tiersim::cuda
