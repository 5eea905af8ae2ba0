// Tensor maps of the ring kernel's bulk tensor copy (TMA): cuTensorMapEncodeTiled, reached
// through the runtime (no link against libcuda), over a grid's whole allocation.
#include <cudaTypedefs.h>

#include <cstdlib>
#include <string>

#include "base/env.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/stencil_families.cuh"

namespace tiersim::cuda {
namespace {

PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q{};
    TIERSIM_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q),
                       "cuTensorMapEncodeTiled");
    if (q != cudaDriverEntryPointSuccess || !f)
      throw Error("the driver has no cuTensorMapEncodeTiled (bulk tensor copy)");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }();
  return fn;
}

// L2 promotion of the copy engine's reads: how much the L2 fetches from DRAM around each miss,
// 256 bytes or none as the ring asks (stencil_ring.cuh, kTmaPromote), unless
// TIERSIM_TMA_L2_PROMOTION=none|64|128|256 sets it for every map (the benchmark's sweeps).
CUtensorMapL2promotion tma_l2_promotion(bool promote) {
  static const int forced = [] {
    const char* e = std::getenv(env::kTmaL2Promotion);
    if (!e) return -1;
    const std::string v = e;
    if (v == "none") return int(CU_TENSOR_MAP_L2_PROMOTION_NONE);
    if (v == "64") return int(CU_TENSOR_MAP_L2_PROMOTION_L2_64B);
    if (v == "128") return int(CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
    if (v == "256") return int(CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
    throw Error("TIERSIM_TMA_L2_PROMOTION must be none, 64, 128 or 256, not '" + v + "'");
  }();
  if (forced >= 0) return CUtensorMapL2promotion(forced);
  return promote ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B : CU_TENSOR_MAP_L2_PROMOTION_NONE;
}

}  // namespace

// A 3D map over the allocation of the grid whose interior starts at `origin` (x: row pitch,
// y: rows with halos, z: planes with halos); outside it the copy engine fills zeros (where the
// cp.async path writes zeros too).
template <class T>
CUtensorMap encode_grid_map(const T* origin, long long sy, long long sz, int ny, int nz, int r, int gx0, int gy0,
                            int gz0, int box_x, int box_y, bool promote) {
  const T* base = origin - (gx0 + gy0 * sy + gz0 * sz);
  const cuuint64_t dims[3] = {cuuint64_t(sy), cuuint64_t(ny + 2 * r), cuuint64_t(nz + 2 * r)};
  const cuuint64_t strides[2] = {cuuint64_t(sy) * sizeof(T), cuuint64_t(sz) * sizeof(T)};
  const cuuint32_t box[3] = {cuuint32_t(box_x), cuuint32_t(box_y), 1};
  const cuuint32_t elem[3] = {1, 1, 1};
  CUtensorMap m;
  const CUresult e =
      tensor_map_encoder()(&m, sizeof(T) == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 3,
                           const_cast<T*>(base), dims, strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE,
                           CU_TENSOR_MAP_SWIZZLE_NONE, tma_l2_promotion(promote), CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (e != CUDA_SUCCESS)
    throw Error("stencil: tensor map for the bulk tensor copy refused (CUresult " + std::to_string(int(e)) + ")");
  return m;
}

template CUtensorMap encode_grid_map<float>(const float*, long long, long long, int, int, int, int, int, int, int, int,
                                            bool);
template CUtensorMap encode_grid_map<double>(const double*, long long, long long, int, int, int, int, int, int, int,
                                             int, bool);

}  // namespace tiersim::cuda
