#include "kernels/cuda/kernel_setup.hpp"

#include <cuda_runtime.h>

#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "kernels/cuda/cuda_check.hpp"

namespace tiersim::cuda {

void set_shared_memory_once(const void* kernel, std::size_t smem_bytes, bool max_carveout, const char* what) {
  static std::mutex mu;
  static std::set<std::pair<const void*, int>> done;  // (kernel, device) with its attributes set
  int dev = 0;
  TIERSIM_CUDA_CHECK(cudaGetDevice(&dev));
  std::lock_guard<std::mutex> lock(mu);
  if (done.count({kernel, dev})) return;
  TIERSIM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_bytes)),
                     std::string(what) + ", " + std::to_string(smem_bytes) + " B of shared memory");
  if (max_carveout)
    TIERSIM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                            int(cudaSharedmemCarveoutMaxShared)),
                       what);
  done.insert({kernel, dev});
}

}  // namespace tiersim::cuda
