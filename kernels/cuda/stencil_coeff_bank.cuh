// The StencilCoeffs table in __constant__ memory (--coeffs constant). Without device linking
// (CUDA_SEPARABLE_COMPILATION OFF) every translation unit holds its own __constant__ variables,
// so each stencil kernel file that includes this header has a bank of its own, and defines the
// function that says where it is (*_bank, stencil_families.cuh); upload_constant_coeffs
// (stencil_update.cpp) fills every bank. Included (through the family headers) by the files that
// compile kernels.
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/stencil_families.cuh"

namespace tiersim::cuda {
namespace {

__constant__ StencilCoeffs<float> c_coeffs_f;
__constant__ StencilCoeffs<double> c_coeffs_d;

template <class T>
__device__ __forceinline__ const StencilCoeffs<T>& const_coeffs();
template <>
__device__ __forceinline__ const StencilCoeffs<float>& const_coeffs<float>() {
  return c_coeffs_f;
}
template <>
__device__ __forceinline__ const StencilCoeffs<double>& const_coeffs<double>() {
  return c_coeffs_d;
}

// The device address of this translation unit's bank (under CUDA's lazy loading the first
// lookup loads the file's module).
template <class T>
StencilCoeffs<T>* this_bank() {
  void* p = nullptr;
  if constexpr (std::is_same_v<T, float>)
    TIERSIM_CUDA_CHECK(cudaGetSymbolAddress(&p, c_coeffs_f), "the fp32 coefficient bank");
  else
    TIERSIM_CUDA_CHECK(cudaGetSymbolAddress(&p, c_coeffs_d), "the fp64 coefficient bank");
  return static_cast<StencilCoeffs<T>*>(p);
}

}  // namespace
}  // namespace tiersim::cuda
