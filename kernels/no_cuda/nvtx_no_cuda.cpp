// Built without CUDA: no NVTX, and nothing to trace on a GPU.
#include "base/trace.hpp"

namespace tiersim {

void trace_push(const char*) {}
void trace_pop() {}

}  // namespace tiersim
