// NVTX v3 is header-only: ranges cost a few nanoseconds when no tool is attached.
#include <nvtx3/nvToolsExt.h>

#include "base/trace.hpp"

namespace tiersim {

void trace_push(const char* name) { nvtxRangePushA(name); }
void trace_pop() { nvtxRangePop(); }

}  // namespace tiersim
