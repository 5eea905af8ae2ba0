// How the engines of a run's ranks (base/comm.hpp) move device data between them: halo planes
// of a stencil split into z slabs, the positions of the bodies each rank owns.
//  - Transport::Nccl: NCCL sends and receives from GPU memory to GPU memory (NVLink or PCIe
//    within a node, the network between nodes), queued on CUDA streams: no copy through the host
//    and no host synchronisation; the stencil exchange runs beside the interior update.
//  - Transport::Ipc: ranks of one node, each with its own GPU: the copy engines write the stencil
//    halo planes into the neighbours' GPU memory (CUDA IPC, kernels/cuda/ipc_exchange.hpp), so the
//    exchange takes no SM from the interior update. An N-body run resolved to Ipc runs as Nccl
//    (its positions go to every rank, not to two neighbours).
//  - Transport::Mpi: through pinned host buffers and MPI (base/comm.hpp). The CPU backend's, and
//    the one where ranks share a GPU (NCCL refuses two ranks on one device).
// Plain C++: the NCCL communicator lives in kernels/cuda (nccl_comm.cuh), so sim/ never sees it.
#pragma once

#include <cstddef>
#include <string>

#include "base/strategy.hpp"

namespace tiersim {

// "NCCL 2.28.3" (the library loaded at run time), or why there is none ("built without NCCL").
std::string nccl_library();

// Collective (every rank, at the same point, after select_device): the transport of this run for
// `asked` on `backend`. One rank: Mpi (nothing is exchanged). CPU backend: Mpi. Auto, where
// tiersim has NCCL and no two ranks of a node share a GPU: Ipc when all ranks are on one node whose
// GPUs have peer access, Nccl otherwise; Mpi where a GPU is shared or there is no NCCL. Nccl or Ipc asked where
// it cannot be had (Ipc: also ranks on several nodes): Error, the same message on every rank.
// Resolving to Nccl or Ipc creates the run's NCCL communicator (over all ranks, one GPU each).
Transport resolve_transport(Transport asked, Backend backend);

// Collective, after resolve_transport gave Nccl: the bandwidth of an exchange of GPU buffers
// between neighbouring ranks through NCCL, GB/s (bytes sent and received by a rank over the time,
// the slowest rank's; median of 5), as comm::measure_exchange_gbs measures host buffers. 0 when
// the run has no NCCL communicator.
double measure_nccl_exchange_gbs(std::size_t bytes = std::size_t(64) << 20);

// Collective, after resolve_transport gave Ipc: the same for the copy engines' exchange between
// the neighbours' GPU memory (kernels/cuda/ipc_exchange.hpp), staging and unpacking included.
// 0 without CUDA.
double measure_ipc_exchange_gbs(std::size_t bytes = std::size_t(64) << 20);

// Frees the NCCL communicator (before comm::finalize); harmless without one.
void close_transport();

}  // namespace tiersim
