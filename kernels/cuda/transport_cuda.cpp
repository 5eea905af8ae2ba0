// kernels/transport.hpp with the CUDA backend: the choice of transport, the run's NCCL
// communicator (kernels/cuda/nccl_comm.cuh; when tiersim has NCCL) and the NCCL link measurement.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>

#include "base/comm.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/ipc_exchange.hpp"
#include "kernels/cuda/launch_timer.hpp"
#include "kernels/cuda/nccl_comm.cuh"
#include "kernels/device_info.hpp"
#include "kernels/transport.hpp"

namespace tiersim {

#ifdef TIERSIM_HAVE_NCCL
namespace {
ncclComm_t g_comm = nullptr;
}  // namespace

namespace cuda {
void nccl_check(ncclResult_t r, const std::string& what) {
  if (r == ncclSuccess) return;
  const char* last = ncclGetLastError(nullptr);
  throw Error("NCCL: " + what + " failed: " + ncclGetErrorString(r) +
              (last && *last ? std::string(" (") + last + ")" : ""));
}
ncclComm_t nccl_comm() {
  if (!g_comm) throw Error("NCCL: no communicator (the run's transport is not nccl)");
  return g_comm;
}
}  // namespace cuda

std::string nccl_library() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "NCCL (version unknown)";
  return "NCCL " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}
#else
std::string nccl_library() { return "none (built without NCCL)"; }
#endif

Transport resolve_transport(Transport asked, Backend backend) {
  if (comm::size() == 1) return Transport::Mpi;
  // "--transport nccl" or "--transport ipc", for messages.
  const bool direct = asked == Transport::Nccl || asked == Transport::Ipc;
  const std::string nccl = flag_option(Flag<Transport>::key) + " " + name(asked);
  if (backend != Backend::Cuda) {
    if (direct) throw Error(nccl + ": the CPU backend exchanges through MPI; use --backend cuda");
    return Transport::Mpi;
  }
  if (asked == Transport::Mpi) return Transport::Mpi;
  // No two ranks of a node on one GPU (select_device deals them round-robin): every node agrees.
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess) (void)cudaGetLastError(), gpus = 0;
  const bool own_gpu = comm::min(std::int64_t(comm::local_size() <= gpus ? 1 : 0)) == 1;
#ifdef TIERSIM_HAVE_NCCL
  if (!own_gpu) {
    if (direct)
      throw Error(nccl + ": " + std::to_string(comm::local_size()) + " ranks on a node of " + std::to_string(gpus) +
                  (gpus == 1 ? " GPU" : " GPUs") +
                  " share a device, which NCCL refuses; use --transport mpi or one rank per GPU");
    return Transport::Mpi;
  }
  // CUDA IPC maps memory between the processes of one node only, between GPUs with peer access.
  if (asked == Transport::Ipc && comm::local_size() != comm::size())
    throw Error(nccl + ": the " + std::to_string(comm::size()) +
                " ranks span several nodes and IPC maps GPU memory within one; use --transport nccl");
  // Auto: the copy engines where every rank is on one node and every pair of its GPUs has peer
  // access (heat R = 4 at 1024^3 on 4 H200s: 1,184 steps/s against NCCL's 1,076), NCCL otherwise.
  bool ipc = asked == Transport::Ipc;
  if (asked == Transport::Auto && comm::local_size() == comm::size()) {
    bool peers = true;
    for (int a = 0; a < std::min(gpus, comm::size()); ++a)
      for (int b = 0; b < std::min(gpus, comm::size()); ++b) {
        int can = 0;
        if (a != b && (cudaDeviceCanAccessPeer(&can, a, b) != cudaSuccess || !can))
          (void)cudaGetLastError(), peers = false;
      }
    ipc = comm::min(std::int64_t(peers ? 1 : 0)) == 1;
  }
  // NVLink multicast (NVLS) stays off unless the environment says otherwise: the exchanges here
  // are sends, receives and broadcasts, which never need it.
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  // At most 8 channels (one block each), unless the environment says otherwise: the halo
  // exchange runs beside the interior update, and NCCL's own choice on NVLink took SMs the update
  // needed. Heat R = 4 at 1024^3, 4 H200s: 857 steps/s with NCCL's choice, 765 / 958 / 948 with
  // 4 / 8 / 16 channels (4 too few: the exchange outlasted the update); 2 H200s: 548 / 561 / 558.
  setenv("NCCL_MAX_NCHANNELS", "8", 0);
  ncclUniqueId id{};
  if (comm::is_root()) cuda::nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  comm::broadcast(&id, sizeof id);
  // Every rank must end up with the communicator or none: an error on one is everyone's.
  std::string why;
  try {
    cuda::nccl_check(ncclCommInitRank(&g_comm, comm::size(), id, comm::rank()), "ncclCommInitRank");
  } catch (const Error& e) {
    why = e.what();
  }
  if (comm::any(!why.empty())) {
    const std::int64_t first = comm::min(why.empty() ? std::int64_t(comm::size()) : std::int64_t(comm::rank()));
    throw Error(comm::broadcast(why, int(first)));
  }
  return ipc ? Transport::Ipc : Transport::Nccl;
#else
  if (direct) throw Error(nccl + ": tiersim was built without NCCL; use --transport mpi");
  (void)own_gpu;
  return Transport::Mpi;
#endif
}

double measure_nccl_exchange_gbs(std::size_t bytes) {
#ifdef TIERSIM_HAVE_NCCL
  if (!g_comm || comm::size() == 1) return 0;
  const std::string what = "NCCL link measurement";
  cuda::DeviceBuffer send(bytes, what), recv(bytes, what);
  TIERSIM_CUDA_CHECK(cudaMemset(send.data(), 1, bytes), what);
  const cuda::OwnedStream stream(cudaStreamNonBlocking);
  cudaStream_t s = stream.get();
  const cuda::OwnedEvent start(true), stop(true);
  const int next = (comm::rank() + 1) % comm::size(), prev = (comm::rank() + comm::size() - 1) % comm::size();
  // Timed with events on the stream: the transfer alone, not its launch.
  return comm::measure_exchange_gbs(bytes, [&] {
    TIERSIM_CUDA_CHECK(cudaEventRecord(start.get(), s), what);
    cuda::nccl_check(ncclGroupStart(), "ncclGroupStart");
    cuda::nccl_check(ncclSend(send.data(), bytes, ncclChar, next, g_comm, s), "ncclSend");
    cuda::nccl_check(ncclRecv(recv.data(), bytes, ncclChar, prev, g_comm, s), "ncclRecv");
    cuda::nccl_check(ncclGroupEnd(), "ncclGroupEnd");
    TIERSIM_CUDA_CHECK(cudaEventRecord(stop.get(), s), what);
    TIERSIM_CUDA_CHECK(cudaEventSynchronize(stop.get()), what);
    float ms = 0;
    TIERSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()), what);
    return ms * 1e-3;
  });
#else
  (void)bytes;
  return 0;
#endif
}

double measure_ipc_exchange_gbs(std::size_t bytes) {
  if (comm::size() == 1) return 0;
  const std::string what = "IPC link measurement";
  const int next = (comm::rank() + 1) % comm::size(), prev = (comm::rank() + comm::size() - 1) % comm::size();
  // The rank below is the previous, the one above the next: the planes go up the ring only.
  cuda::IpcExchange x(prev, next, bytes);
  cuda::DeviceBuffer send(bytes, what), recv(bytes, what);
  TIERSIM_CUDA_CHECK(cudaMemset(send.data(), 1, bytes), what);
  const cuda::OwnedStream stream(cudaStreamNonBlocking);
  cudaStream_t s = stream.get();
  const cuda::OwnedEvent start(true), stop(true);
  return comm::measure_exchange_gbs(bytes, [&] {
    TIERSIM_CUDA_CHECK(cudaEventRecord(start.get(), s), what);
    x.send({}, {send.data()}, bytes, s, s);
    x.receive({recv.data()}, {}, bytes, s);
    TIERSIM_CUDA_CHECK(cudaEventRecord(stop.get(), s), what);
    TIERSIM_CUDA_CHECK(cudaEventSynchronize(stop.get()), what);
    float ms = 0;
    TIERSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()), what);
    return ms * 1e-3;
  });
}

void close_transport() {
#ifdef TIERSIM_HAVE_NCCL
  if (g_comm) ncclCommDestroy(g_comm);
  g_comm = nullptr;
#endif
}

}  // namespace tiersim
