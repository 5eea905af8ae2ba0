// Built without CUDA: staging buffers are ordinary host memory, and there is no link to measure.
#include <cstdlib>
#include <utility>

#include "base/error.hpp"
#include "base/host_memory.hpp"
#include "kernels/device_info.hpp"
#include "kernels/staging.hpp"

namespace tiersim {

HostBuffer::HostBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  ptr_ = allocate_large(bytes);
  if (!ptr_) throw Error("out of host memory for an output staging buffer of " + format_bytes(double(bytes)));
}

void HostBuffer::release() noexcept {
  std::free(ptr_);
  ptr_ = nullptr;
}

HostBuffer::~HostBuffer() { release(); }

HostBuffer::HostBuffer(HostBuffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)), pinned_(false) {}

HostBuffer& HostBuffer::operator=(HostBuffer&& o) noexcept {
  if (this != &o) {
    release();
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

void reserve_host_buffers(std::size_t, int) {}
void reserve_host_buffers_behind(std::size_t, int) {}

double measure_pinned_link_gbs(bool) { throw Error("no GPU: " + query_device().why_not); }

}  // namespace tiersim
