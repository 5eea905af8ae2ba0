// The ranks of a run: one process per GPU (or per CPU share) started by an MPI launcher
// (`mpirun -np 4 tiersim run case.toml`), or one process started alone. Every layer above talks
// to the other ranks through these functions only, so that no MPI type leaks into the models or
// the engines, and a build without MPI (or a process started without a launcher) is the one-rank
// case of the same code: size() == 1, the reductions return their argument, the gathers copy.
//
// Collective calls (marked so) must be made by every rank in the same order. Large messages are
// split below MPI's int counts, so a transfer may be any size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/error.hpp"

namespace tiersim::comm {

// Starts MPI when the process was started by an MPI launcher (its environment says so: Open MPI,
// PMI, PMIx, Slurm); otherwise the run has one rank and MPI is not touched. Call first in main.
void init(int* argc, char*** argv);
// Ends MPI (collective); harmless when init did not start it.
void finalize();
// Ends every rank at once with `code` (an error one rank alone met while the others may be
// waiting in a collective call).
[[noreturn]] void abort(int code);

int rank();
int size();
// This rank's index among the ranks of its node, and their number (picks the GPU).
int local_rank();
int local_size();
inline bool is_root() { return rank() == 0; }
// "mpi (Open MPI v4.1.4)" or "none (built without MPI)" for `tiersim info`.
std::string library();

// Collective reductions; every rank gets the result.
void barrier();
double sum(double v);
double min(double v);
double max(double v);
std::int64_t sum(std::int64_t v);
std::int64_t min(std::int64_t v);
std::int64_t max(std::int64_t v);
void sum(double* v, int n);  // element-wise, in place
// True on every rank when `v` is true on any (an error or a stop request one rank saw).
bool any(bool v);

// Collective: root's bytes to every rank.
void broadcast(void* data, std::size_t bytes, int root = 0);
std::string broadcast(const std::string& s, int root = 0);

// Collective: each rank's `bytes` from `send`, concatenated in rank order into `recv` on root
// (which holds the sum of all ranks' bytes; ignored elsewhere). A rank may send 0 bytes.
void gather(const void* send, std::size_t bytes, void* recv, int root = 0);
// Collective: the same into `recv` on every rank; `offsets[r]`, `counts[r]` (bytes) place rank
// r's part; recv + offsets[rank()] may be `send` itself (sent in place).
void allgather(const void* send, void* recv, const std::vector<std::size_t>& offsets,
               const std::vector<std::size_t>& counts);
// Collective: one value per rank, in rank order, on every rank.
std::vector<double> allgather(double v);

// Point to point: sends `send_bytes` to `dest` while receiving `recv_bytes` from `source` (either
// may be -1: no such transfer). Tags keep concurrent exchanges apart.
void sendrecv(const void* send, std::size_t send_bytes, int dest, void* recv, std::size_t recv_bytes, int source,
              int tag);

// Collective: the bandwidth of an exchange between neighbouring ranks, GB/s (bytes sent and
// received by a rank over the time, the slowest rank's): each rank sends `bytes` of host memory to
// the next and receives as much from the previous, median of 5. 0 with one rank.
double measure_exchange_gbs(std::size_t bytes = std::size_t(16) << 20);
// The same for any transport: `exchange` moves `bytes` to the next rank and as many from the
// previous, and returns the seconds it took (as the transport times it); called 6 times after a
// barrier each, the first (connection set-up) left out.
double measure_exchange_gbs(std::size_t bytes, const std::function<double()>& exchange);

// Runs f on every rank; when it throws an Error on any, every rank throws the message of the lowest
// rank that failed (main prints it once, on rank 0). Collective. For the steps only some ranks take
// (rank 0 makes the output directory), so that no rank is left waiting for the others.
template <class F>
void on_every_rank(F&& f) {
  if (size() == 1) return f();
  std::string what;
  bool failed = false;
  try {
    f();
  } catch (const Error& e) {
    failed = true;
    what = e.what();
  }
  const std::int64_t first = min(failed ? std::int64_t(rank()) : std::int64_t(size()));
  if (first < size()) throw Error(broadcast(what, int(first)));
}

}  // namespace tiersim::comm
