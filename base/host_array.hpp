// HostArray<T>: a std::vector whose elements are left uninitialised when it is sized, so that a
// large array (a 512^3 field is a gigabyte in double) is first touched by the loop that fills it,
// in parallel where that loop is (OpenMP threads take the page faults side by side), instead of
// by one thread zeroing it first. An array of 2 MB or more lies on huge pages (allocate_large).
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/host_memory.hpp"

namespace tiersim {

template <class T>
struct NoInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = NoInitAllocator<U>;
  };
  NoInitAllocator() = default;
  template <class U>
  NoInitAllocator(const NoInitAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    if (n * sizeof(T) < kHugePageBytes) return std::allocator<T>::allocate(n);
    void* p = allocate_large(n * sizeof(T));
    if (!p) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) < kHugePageBytes)
      std::allocator<T>::deallocate(p, n);
    else
      std::free(p);
  }
  // Default-initialisation: nothing written for arithmetic types.
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};

template <class T>
using HostArray = std::vector<T, NoInitAllocator<T>>;

}  // namespace tiersim
