// The host link, the second-to-last tier of the memory hierarchy: host memory that device data
// leaves through, and the copies in flight into it. Plain C++ (the CUDA side is
// kernels/cuda/staging.cu, or kernels/no_cuda/staging_no_cuda.cpp).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "base/kernel_record.hpp"

namespace tiersim {

// Host memory for staged output: page-locked (pinned) when a GPU is usable, so device-to-host
// copies run at the link's full rate on a copy engine and overlap kernels; ordinary memory
// otherwise. Move-only.
class HostBuffer {
 public:
  HostBuffer() = default;
  explicit HostBuffer(std::size_t bytes);
  ~HostBuffer();
  HostBuffer(HostBuffer&& o) noexcept;
  HostBuffer& operator=(HostBuffer&& o) noexcept;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  void* data() const { return ptr_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }
  bool pinned() const { return pinned_; }

 private:
  void release() noexcept;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  bool pinned_ = false;
};

// Pins `count` more blocks of `bytes` ahead of use, for the HostBuffers of later outputs (on the
// GPU, page-locking costs about 0.06 s per GB when an output asks for it; without a GPU: nothing).
void reserve_host_buffers(std::size_t bytes, int count);
// The same on a thread of its own (for the calling thread's device), returning at once: the
// first output's staging then overlaps the work before it (the initial state). A HostBuffer, or
// the next reserve, waits for it to finish.
void reserve_host_buffers_behind(std::size_t bytes, int count);

// The host side of a GPU engine's upload (kernels/cuda/staging.cuh, PlaneUploader): two buffers
// of about this many bytes each (whole planes, one plane at least), filled in turn.
inline constexpr std::size_t kUploadBufferBytes = std::size_t(16) << 20;

// One device-to-host copy on its way (or done, for data that was on the host already).
class CopyInFlight {
 public:
  virtual ~CopyInFlight() = default;
  // Blocks until the data is in the host buffer (call it from the thread that reads it).
  virtual void wait() = 0;
  // The copy as a telemetry record ("copy_device_to_host": bytes, elapsed ms on the copy
  // stream); valid after wait(). No record (kernel empty) where nothing crossed the link.
  virtual KernelRecord record() const = 0;
};

// A copy that is complete when made (CPU backend: the data was copied on the host).
class CopyDone final : public CopyInFlight {
 public:
  void wait() override {}
  KernelRecord record() const override { return {}; }
};

}  // namespace tiersim
