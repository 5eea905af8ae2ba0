// The run's NCCL communicator (kernels/transport.hpp made it when the transport resolved to
// Nccl), for the engines that queue sends and receives on their streams. Only where tiersim has
// NCCL (TIERSIM_HAVE_NCCL).
#pragma once

#ifdef TIERSIM_HAVE_NCCL
#include <nccl.h>

#include <string>

namespace tiersim::cuda {

// The communicator over all ranks; throws Error when resolve_transport did not make one.
ncclComm_t nccl_comm();
// Throws Error naming `what` and NCCL's reason unless r is ncclSuccess.
void nccl_check(ncclResult_t r, const std::string& what);

}  // namespace tiersim::cuda
#endif
