// Built without CUDA: the CUDA backend reports why it is missing instead of failing to link.
#include "kernels/device_info.hpp"
#include "kernels/nbody_engine.hpp"

namespace tiersim {

bool cuda_compiled() { return false; }
void select_device(int) {}

DeviceInfo query_device() {
  DeviceInfo d;
  d.why_not = "tiersim was built without CUDA (no nvcc at configure time)";
  return d;
}

double measure_device_copy_gbs(bool) { throw Error("no GPU: " + query_device().why_not); }
double measure_device_fma_gflops(bool, bool) { throw Error("no GPU: " + query_device().why_not); }

std::unique_ptr<NbodyEngine> make_nbody_cuda(const Strategy&, int, const NbodyParams&, const NbodyTuning&,
                                             const BodyPartition&) {
  throw Error("--backend cuda: " + query_device().why_not);
}

}  // namespace tiersim
