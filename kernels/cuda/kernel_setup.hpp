// A kernel's shared-memory attributes, set once per kernel and device before its first launch:
// the dynamic shared memory it takes beyond the 48 KB default and, where asked, the largest
// shared-memory carve-out of the SM. Under CUDA's lazy loading the first call also loads the
// kernel's module. Safe from several threads: a stencil engine sets its kernels up on a thread of
// its own while another engine may be launching the same kernel.
#pragma once

#include <cstddef>

namespace tiersim::cuda {

// `what` names the kernel in the error ("stencil ring kernel"); the bytes are added to it.
void set_shared_memory_once(const void* kernel, std::size_t smem_bytes, bool max_carveout, const char* what);

}  // namespace tiersim::cuda
