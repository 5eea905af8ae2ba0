// base/comm.hpp over MPI (when tiersim is built with it), or the one-rank case without.
#include "base/comm.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "base/error.hpp"

#ifdef TIERSIM_HAVE_MPI
// The C API only: mpi.h would otherwise pull in the deprecated C++ bindings (a library more).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace tiersim::comm {
namespace {

int g_rank = 0, g_size = 1, g_local_rank = 0, g_local_size = 1;
bool g_started = false;  // MPI_Init was called by init()

#ifdef TIERSIM_HAVE_MPI
// MPI counts are int: messages go in pieces of at most this many bytes.
constexpr std::size_t kChunk = std::size_t(1) << 30;

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(std::string("MPI: ") + what + " failed: " + std::string(text, std::size_t(len)));
}

// Started by a launcher: the variables Open MPI, PMI/PMIx (MPICH, Slurm's srun) set for each rank.
bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(v)) return true;
  return false;
}
#endif

}  // namespace

void init(int* argc, char*** argv) {
#ifdef TIERSIM_HAVE_MPI
  if (!launched_by_mpi()) return;
  // Only the main thread calls MPI (the output thread never does).
  int provided = 0;
  check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  g_started = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  MPI_Comm node;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  MPI_Comm_rank(node, &g_local_rank);
  MPI_Comm_size(node, &g_local_size);
  MPI_Comm_free(&node);
#else
  (void)argc, (void)argv;
#endif
}

void finalize() {
#ifdef TIERSIM_HAVE_MPI
  if (g_started) {
    int done = 0;
    MPI_Finalized(&done);
    if (!done) MPI_Finalize();
    g_started = false;
  }
#endif
}

void abort(int code) {
#ifdef TIERSIM_HAVE_MPI
  if (g_started && g_size > 1) MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::exit(code);
}

int rank() { return g_rank; }
int size() { return g_size; }
int local_rank() { return g_local_rank; }
int local_size() { return g_local_size; }

std::string library() {
#ifdef TIERSIM_HAVE_MPI
  char v[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(v, &len);
  std::string s(v, std::size_t(len));
  s = s.substr(0, s.find_first_of(",\n"));
  return "MPI (" + s + ")" + (g_started ? ", " + std::to_string(g_size) + " ranks" : ", not started by a launcher");
#else
  return "none (built without MPI)";
#endif
}

#ifdef TIERSIM_HAVE_MPI
namespace {
template <class T>
T reduce(T v, MPI_Datatype type, MPI_Op op) {
  if (g_size == 1) return v;
  T out{};
  check(MPI_Allreduce(&v, &out, 1, type, op, MPI_COMM_WORLD), "MPI_Allreduce");
  return out;
}
}  // namespace
void barrier() {
  if (g_size > 1) check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}
double sum(double v) { return reduce(v, MPI_DOUBLE, MPI_SUM); }
double min(double v) { return reduce(v, MPI_DOUBLE, MPI_MIN); }
double max(double v) { return reduce(v, MPI_DOUBLE, MPI_MAX); }
std::int64_t sum(std::int64_t v) { return reduce(v, MPI_INT64_T, MPI_SUM); }
std::int64_t min(std::int64_t v) { return reduce(v, MPI_INT64_T, MPI_MIN); }
std::int64_t max(std::int64_t v) { return reduce(v, MPI_INT64_T, MPI_MAX); }
void sum(double* v, int n) {
  if (g_size > 1) check(MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
}
bool any(bool v) { return reduce(int(v), MPI_INT, MPI_MAX) != 0; }

void broadcast(void* data, std::size_t bytes, int root) {
  if (g_size == 1) return;
  auto* p = static_cast<char*>(data);
  for (std::size_t off = 0; off < bytes; off += kChunk)
    check(MPI_Bcast(p + off, int(std::min(kChunk, bytes - off)), MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
}

// Point to point in pieces: every rank's part reaches root one piece at a time (root posts the
// receives of one rank's part, in order), which keeps each count below 2^31.
void gather(const void* send, std::size_t bytes, void* recv, int root) {
  if (g_size == 1) {
    if (bytes && recv != send) std::memmove(recv, send, bytes);
    return;
  }
  std::vector<std::uint64_t> sizes(static_cast<std::size_t>(g_size));
  const std::uint64_t mine = bytes;
  check(MPI_Gather(&mine, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, root, MPI_COMM_WORLD), "MPI_Gather");
  constexpr int kTag = 7001;
  if (g_rank == root) {
    auto* out = static_cast<char*>(recv);
    std::size_t at = 0;
    for (int r = 0; r < g_size; ++r) {
      const std::size_t n = std::size_t(sizes[std::size_t(r)]);
      if (r == root) {
        if (n && out + at != send) std::memmove(out + at, send, n);
      } else {
        for (std::size_t off = 0; off < n; off += kChunk)
          check(MPI_Recv(out + at + off, int(std::min(kChunk, n - off)), MPI_BYTE, r, kTag, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE),
                "MPI_Recv");
      }
      at += n;
    }
  } else {
    const auto* in = static_cast<const char*>(send);
    for (std::size_t off = 0; off < bytes; off += kChunk)
      check(MPI_Send(in + off, int(std::min(kChunk, bytes - off)), MPI_BYTE, root, kTag, MPI_COMM_WORLD), "MPI_Send");
  }
}

void allgather(const void* send, void* recv, const std::vector<std::size_t>& offsets,
               const std::vector<std::size_t>& counts) {
  auto* out = static_cast<char*>(recv);
  const std::size_t me = std::size_t(g_rank);
  if (counts[me] && out + offsets[me] != send) std::memmove(out + offsets[me], send, counts[me]);
  if (g_size == 1) return;
  const bool small = *std::max_element(counts.begin(), counts.end()) < kChunk;
  if (small) {
    std::vector<int> c(counts.size()), o(offsets.size());
    bool fits = true;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      c[r] = int(counts[r]);
      fits = fits && offsets[r] <= std::size_t(std::numeric_limits<int>::max());
      o[r] = int(offsets[r]);
    }
    if (fits) {
      check(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, c.data(), o.data(), MPI_BYTE, MPI_COMM_WORLD),
            "MPI_Allgatherv");
      return;
    }
  }
  // Beyond int offsets: each rank's part broadcast from it, in pieces.
  for (int r = 0; r < g_size; ++r) broadcast(out + offsets[std::size_t(r)], counts[std::size_t(r)], r);
}

std::vector<double> allgather(double v) {
  std::vector<double> all(static_cast<std::size_t>(g_size), v);
  if (g_size > 1) check(MPI_Allgather(&v, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD), "MPI_Allgather");
  return all;
}

void sendrecv(const void* send, std::size_t send_bytes, int dest, void* recv, std::size_t recv_bytes, int source,
              int tag) {
  const int to = dest < 0 ? MPI_PROC_NULL : dest, from = source < 0 ? MPI_PROC_NULL : source;
  const std::size_t n = std::max(dest < 0 ? 0 : send_bytes, source < 0 ? 0 : recv_bytes);
  std::size_t off = 0;
  do {  // once at least: a zero-byte exchange still pairs the two sides
    const int s = dest < 0 || off >= send_bytes ? 0 : int(std::min(kChunk, send_bytes - off));
    const int r = source < 0 || off >= recv_bytes ? 0 : int(std::min(kChunk, recv_bytes - off));
    check(MPI_Sendrecv(static_cast<const char*>(send) + (s ? off : 0), s, MPI_BYTE, to, tag,
                       static_cast<char*>(recv) + (r ? off : 0), r, MPI_BYTE, from, tag, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE),
          "MPI_Sendrecv");
    off += kChunk;
  } while (off < n);
}
#else
void barrier() {}
double sum(double v) { return v; }
double min(double v) { return v; }
double max(double v) { return v; }
std::int64_t sum(std::int64_t v) { return v; }
std::int64_t min(std::int64_t v) { return v; }
std::int64_t max(std::int64_t v) { return v; }
void sum(double*, int) {}
bool any(bool v) { return v; }
void broadcast(void*, std::size_t, int) {}
void gather(const void* send, std::size_t bytes, void* recv, int) {
  if (bytes && recv != send) std::memmove(recv, send, bytes);
}
void allgather(const void* send, void* recv, const std::vector<std::size_t>& offsets,
               const std::vector<std::size_t>& counts) {
  if (counts[0] && static_cast<char*>(recv) + offsets[0] != send)
    std::memmove(static_cast<char*>(recv) + offsets[0], send, counts[0]);
}
std::vector<double> allgather(double v) { return {v}; }
void sendrecv(const void* send, std::size_t send_bytes, int dest, void* recv, std::size_t recv_bytes, int source, int) {
  // One rank: only a transfer to itself (a periodic neighbour) can be asked for.
  if (dest == 0 && source == 0) std::memmove(recv, send, std::min(send_bytes, recv_bytes));
}
#endif

double measure_exchange_gbs(std::size_t bytes, const std::function<double()>& exchange) {
  if (size() == 1) return 0;
  std::vector<double> seconds;
  for (int rep = 0; rep < 6; ++rep) {
    barrier();
    const double s = exchange();
    if (rep > 0) seconds.push_back(s);  // the first sets the transport up
  }
  std::sort(seconds.begin(), seconds.end());
  return min(2.0 * double(bytes) / seconds[seconds.size() / 2] * 1e-9);
}

double measure_exchange_gbs(std::size_t bytes) {
  if (size() == 1) return 0;
  std::vector<char> send(bytes, 1), recv(bytes, 0);
  const int next = (rank() + 1) % size(), prev = (rank() + size() - 1) % size();
  return measure_exchange_gbs(bytes, [&] {
    const auto t0 = std::chrono::steady_clock::now();
    sendrecv(send.data(), bytes, next, recv.data(), bytes, prev, 7002);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  });
}

std::string broadcast(const std::string& s, int root) {
  if (size() == 1) return s;
  std::uint64_t n = s.size();
  broadcast(&n, sizeof n, root);
  std::string out = rank() == root ? s : std::string(std::size_t(n), '\0');
  broadcast(out.data(), std::size_t(n), root);
  return out;
}

}  // namespace tiersim::comm
