// kernels/cuda/ipc_exchange.hpp: the staging, its mapping into the neighbours and the notices.
#include "kernels/cuda/ipc_exchange.hpp"

#include <algorithm>
#include <string>

#include "base/comm.hpp"
#include "base/error.hpp"
#include "kernels/cuda/cuda_check.hpp"

namespace tiersim::cuda {

namespace {
// What a rank tells its neighbours at set-up: its staging and its four events.
struct Handles {
  cudaIpcMemHandle_t staging;
  cudaIpcEventHandle_t sent[2][2];
};
constexpr int kSetUpTag = 7301, kNoticeTag = 7302;
}  // namespace

IpcExchange::IpcExchange(int below, int above, std::size_t capacity)
    : below_(below), above_(above), capacity_(capacity) {
  const std::string what = "--transport ipc";
  staging_.allocate(4 * capacity_, "halo staging for --transport ipc (" + format_bytes(4.0 * double(capacity_)) + ")");
  Handles mine{};
  TIERSIM_CUDA_CHECK(cudaIpcGetMemHandle(&mine.staging, staging_.data()), what + ": sharing the halo staging");
  for (auto& parity : sent_)
    for (cudaEvent_t& e : parity)
      TIERSIM_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming | cudaEventInterprocess), what);
  for (int p = 0; p < 2; ++p)
    for (int side = 0; side < 2; ++side)
      TIERSIM_CUDA_CHECK(cudaIpcGetEventHandle(&mine.sent[p][side], sent_[p][side]), what);
  Handles from_below{}, from_above{};
  comm::sendrecv(&mine, sizeof mine, above_, &from_below, sizeof from_below, below_, kSetUpTag);
  comm::sendrecv(&mine, sizeof mine, below_, &from_above, sizeof from_above, above_, kSetUpTag);
  // Every rank maps its neighbours or none does: an error on one is every rank's.
  std::string why;
  try {
    const auto open = [&](const Handles& h, void** peer, cudaEvent_t* events, int side) {
      const cudaError_t e = cudaIpcOpenMemHandle(peer, h.staging, cudaIpcMemLazyEnablePeerAccess);
      if (e != cudaSuccess) {
        (void)cudaGetLastError();
        throw Error(what + ": cannot map a neighbouring rank's GPU memory (" + cudaGetErrorString(e) +
                    "): the ranks must share one node and their GPUs peer access; use --transport nccl");
      }
      for (int p = 0; p < 2; ++p) TIERSIM_CUDA_CHECK(cudaIpcOpenEventHandle(&events[p], h.sent[p][side]), what);
    };
    if (below_ >= 0) open(from_below, &peer_below_, from_below_, 1);  // its copies up: to its above
    if (above_ >= 0 && above_ == below_) {
      peer_above_ = peer_below_;  // one rank is both neighbours: mapped once
      for (int p = 0; p < 2; ++p)
        TIERSIM_CUDA_CHECK(cudaIpcOpenEventHandle(&from_above_[p], from_above.sent[p][0]), what);
    } else if (above_ >= 0) {
      open(from_above, &peer_above_, from_above_, 0);  // its copies down: to its below
    }
  } catch (const Error& e) {
    why = e.what();
  }
  if (comm::any(!why.empty())) {
    const std::int64_t first = comm::min(why.empty() ? std::int64_t(comm::size()) : std::int64_t(comm::rank()));
    throw Error(comm::broadcast(why, int(first)));
  }
}

IpcExchange::~IpcExchange() {
  // No throw from a destructor. Every neighbour's copies into this staging were waited for by
  // this rank's stream (each send has its receive), which its engine synchronised before this.
  if (peer_below_) cudaIpcCloseMemHandle(peer_below_);
  if (peer_above_ && peer_above_ != peer_below_) cudaIpcCloseMemHandle(peer_above_);
  for (int p = 0; p < 2; ++p) {
    if (from_below_[p]) cudaEventDestroy(from_below_[p]);
    if (from_above_[p]) cudaEventDestroy(from_above_[p]);
    for (cudaEvent_t e : sent_[p])
      if (e) cudaEventDestroy(e);
  }
}

void IpcExchange::send(const std::vector<const void*>& low, const std::vector<const void*>& high, std::size_t bytes,
                       cudaStream_t down, cudaStream_t up) {
  const std::string what = "halo exchange (--transport ipc)";
  const std::size_t most = std::max(low.size(), high.size()) * bytes;
  if (most > capacity_)
    throw Error(what + ": " + format_bytes(double(most)) + " exceed the staging of " + format_bytes(double(capacity_)));
  const int p = k_ % 2;
  // The planes to one neighbour, into its staging slot `side`, then the event it waits on.
  const auto copy = [&](const std::vector<const void*>& src, void* peer, int side, cudaStream_t s, cudaEvent_t sent,
                        const std::string& to) {
    char* dst = static_cast<char*>(peer) + slot(p, side);
    for (std::size_t i = 0; i < src.size(); ++i)
      TIERSIM_CUDA_CHECK(cudaMemcpyAsync(dst + i * bytes, src[i], bytes, cudaMemcpyDeviceToDevice, s),
                         what + ": planes to the rank " + to);
    TIERSIM_CUDA_CHECK(cudaEventRecord(sent, s), what);
  };
  if (below_ >= 0) copy(low, peer_below_, 1, down, sent_[p][0], "below");  // the rank below's "from above"
  if (above_ >= 0) copy(high, peer_above_, 0, up, sent_[p][1], "above");   // the rank above's "from below"
}

void IpcExchange::receive(const std::vector<void*>& low_halo, const std::vector<void*>& high_halo, std::size_t bytes,
                          cudaStream_t s) {
  const std::string what = "halo exchange (--transport ipc)";
  const int p = k_ % 2;
  ++k_;
  // The notices: each neighbour has recorded its copies of this exchange.
  char out = 1, in_below = 0, in_above = 0;
  comm::sendrecv(&out, 1, above_, &in_below, 1, below_, kNoticeTag);
  comm::sendrecv(&out, 1, below_, &in_above, 1, above_, kNoticeTag);
  // Once a neighbour's copies are in, from staging slot `side` into the halo planes.
  const auto unpack = [&](const std::vector<void*>& halo, cudaEvent_t sent, int side, const std::string& from) {
    TIERSIM_CUDA_CHECK(cudaStreamWaitEvent(s, sent), what + ": waiting for the rank " + from);
    const char* src = staging_.as<char>() + slot(p, side);
    for (std::size_t i = 0; i < halo.size(); ++i)
      TIERSIM_CUDA_CHECK(cudaMemcpyAsync(halo[i], src + i * bytes, bytes, cudaMemcpyDeviceToDevice, s),
                         what + ": planes from the rank " + from);
  };
  if (below_ >= 0) unpack(low_halo, from_below_[p], 0, "below");
  if (above_ >= 0) unpack(high_halo, from_above_[p], 1, "above");
}

}  // namespace tiersim::cuda
