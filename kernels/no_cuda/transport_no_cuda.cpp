// kernels/transport.hpp without the CUDA backend: every exchange goes through MPI.
#include "base/comm.hpp"
#include "kernels/transport.hpp"

namespace tiersim {

std::string nccl_library() { return "none (built without CUDA)"; }

Transport resolve_transport(Transport asked, Backend backend) {
  (void)backend;
  if ((asked == Transport::Nccl || asked == Transport::Ipc) && comm::size() > 1)
    throw Error(flag_option(Flag<Transport>::key) + " " + name(asked) +
                ": tiersim was built without CUDA; use --transport mpi");
  return Transport::Mpi;
}

double measure_nccl_exchange_gbs(std::size_t) { return 0; }

double measure_ipc_exchange_gbs(std::size_t) { return 0; }

void close_transport() {}

}  // namespace tiersim
