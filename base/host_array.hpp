// HostArray<T>: a std::vector whose elements are left uninitialised when it is sized, so that a
// large array (a 512^3 field is a gigabyte in double) is first touched by the loop that fills it,
// in parallel where that loop is (OpenMP threads take the page faults side by side), instead of
// by one thread zeroing it first.
#pragma once

#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

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
