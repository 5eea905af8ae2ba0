// Halo planes between z-neighbouring ranks of one node by the GPUs' copy engines (CUDA IPC):
// the --transport ipc path of the stencil engine. Each rank's copy engines write its boundary
// planes straight into its neighbours' GPU memory over NVLink, so the exchange takes no SM from
// the interior update running beside it (NCCL's sends and receives are kernels, one block per
// channel, on the SMs the update needs).
//
// Each rank owns a staging area its neighbours write into: [parity][from below | from above]
// [grid][bytes]. Exchange k writes parity k % 2; the receiver copies its staging into its halo
// planes on its own stream once the neighbour's copies are done. Why this is safe without any
// "slot free" signal: a rank's copies of exchange k + 2 are queued after its own stream waited
// for the neighbour's copies of exchange k + 1, which the neighbour queued after everything its
// stream did before (the unpacking of exchange k among it). Writing into the halos directly would
// not be: two exchanges in a row may name the same grid (the wave's energy pass exchanges
// u(t - dt), which the step before exchanged as u(t)).
//
// Ordering across processes: each rank records an interprocess event after its copies to each
// neighbour; the receiver's stream waits on it. A wait sees the event's latest record, so the
// hosts trade a one-byte notice (MPI) after recording and before waiting: the receiver never
// waits on a record older than the exchange's, and (events alternate by parity) a sender cannot
// record exchange k + 2 before the receiver has queued its wait for exchange k.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "kernels/cuda/device_buffer.hpp"

namespace tiersim::cuda {

class IpcExchange {
 public:
  // Collective over every rank (each calls it, with its own neighbours): below / above are the
  // z-neighbours' ranks (-1: none). `capacity`: the most bytes one exchange sends each neighbour
  // (all grids together). Throws Error when the neighbours' memory cannot be mapped (not on one
  // node, no peer access).
  IpcExchange(int below, int above, std::size_t capacity);
  ~IpcExchange();
  IpcExchange(const IpcExchange&) = delete;
  IpcExchange& operator=(const IpcExchange&) = delete;

  // Queues this exchange's copies: low[i] (bytes each) into the rank below's staging, on `down`;
  // high[i] into the rank above's, on `up`; each stream then records the event its receiver
  // waits on. The streams must already wait for the planes to be written.
  void send(const std::vector<const void*>& low, const std::vector<const void*>& high, std::size_t bytes,
            cudaStream_t down, cudaStream_t up);
  // Trades the notices with the neighbours (the host waits for both to have sent), makes `s` wait
  // for their copies and queues the copies from the staging into low_halo[i] (from below) and
  // high_halo[i] (from above). Every send is followed by one receive on every rank.
  void receive(const std::vector<void*>& low_halo, const std::vector<void*>& high_halo, std::size_t bytes,
               cudaStream_t s);

  std::size_t capacity() const { return capacity_; }

 private:
  // Staging of parity p, from below (side 0) or above (side 1): where grid 0's bytes start.
  std::size_t slot(int parity, int side) const { return (std::size_t(parity) * 2 + std::size_t(side)) * capacity_; }

  int below_, above_;
  std::size_t capacity_;
  DeviceBuffer staging_;
  void* peer_below_ = nullptr;                           // the rank below's staging, mapped here
  void* peer_above_ = nullptr;                           // the rank above's (the same mapping where one rank is both)
  cudaEvent_t sent_[2][2] = {};                          // [parity][0: to below, 1: to above], interprocess
  cudaEvent_t from_below_[2] = {}, from_above_[2] = {};  // the neighbours' sent_ events, opened here
  int k_ = 0;                                            // exchanges so far
};

}  // namespace tiersim::cuda
