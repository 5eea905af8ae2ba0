// RAII device memory. An allocation that cannot succeed fails with the bytes needed and the
// bytes free, before CUDA's own out-of-memory error, so a case too large for the GPU stops at
// start with a message the user can act on.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <utility>

#include "kernels/cuda/cuda_check.hpp"
#include "base/error.hpp"

namespace tiersim::cuda {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // what: a name for messages ("particles (soa, fp32, 1048576 bodies)").
  DeviceBuffer(std::size_t bytes, const std::string& what) { allocate(bytes, what); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }

  void allocate(std::size_t bytes, const std::string& what) {
    release();
    if (bytes == 0) return;
    std::size_t free_b = 0, total_b = 0;
    TIERSIM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b), "allocating " + what);
    if (bytes > free_b) {
      throw Error("not enough GPU memory for " + what + ": needs " + format_bytes(double(bytes)) + ", " +
                  format_bytes(double(free_b)) + " free of " + format_bytes(double(total_b)));
    }
    void* p = nullptr;
    const cudaError_t err = cudaMalloc(&p, bytes);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();  // clear the sticky-free allocation error before reporting
      throw_cuda_error(
          err, "cudaMalloc", __FILE__, __LINE__,
          what + ", " + format_bytes(double(bytes)) + " needed, " + format_bytes(double(free_b)) + " free");
    }
    ptr_ = p;
    bytes_ = bytes;
  }

  void release() noexcept {
    if (ptr_) cudaFree(ptr_);  // no throw from a destructor; a failing free means the context is gone
    ptr_ = nullptr;
    bytes_ = 0;
  }

  void* data() const { return ptr_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }
  explicit operator bool() const { return ptr_ != nullptr; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace tiersim::cuda
