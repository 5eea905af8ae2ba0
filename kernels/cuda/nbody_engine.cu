// make_nbody_cuda: the CUDA N-body backend. The particles live in one device buffer in the
// chosen layout for the whole run; upload/download copy only when asked (initial state,
// snapshots). Every launch goes through the shared LaunchTimer (launch_timer.hpp): CUDA events
// on the engine's stream, an NVTX range, the L2 window in the record; take_records() resolves
// them, so the hot loop never synchronizes.
//
// L2 persistence (--l2-persist on): the hot set is what the force kernel re-reads, the
// positions and masses (x y z m) of every body: each of the n/block blocks streams all n of
// them (--tiling none: every thread loads every j-body from L1/L2; --tiling shared: each block
// stages them tile by tile into shared memory, so every block still reads all of them once).
// Where they sit is the layout's (View::hot_bytes, layouts/particles.hpp): soa's first four
// arrays, float4's posm array; aos and aosoa interleave positions with velocities and
// accelerations, so the window covers the whole store. The window is set once on the engine's stream and covers every
// launch (kick and drift included: drift's position writes then land in persisting lines the next force evaluation
// reads).
//
// Under several ranks (BodyPartition) every launch covers the owned bodies only, with the
// launch shape of all n (the force kernels' sums over j, and the pairs each body's psi holds,
// are then those of one rank, bit for bit), and exchange_positions() brings every rank's owned
// position ranges to all: through NCCL from GPU to GPU (--transport nccl), or through host memory
// (mpi: the owned ranges down into a pinned buffer, comm::allgather there, the others' ranges up).
#include <cuda_runtime.h>

#include <array>
#include <chrono>
#include <string>
#include <vector>

#include "base/comm.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/l2_window.cuh"
#include "kernels/cuda/launch_timer.hpp"
#include "kernels/cuda/nccl_comm.cuh"
#include "kernels/cuda/nbody_forces.cuh"
#include "kernels/cuda/nbody_integrate.cuh"
#include "kernels/device_info.hpp"
#include "kernels/kernel_timing.hpp"
#include "kernels/nbody_engine.hpp"
#include "kernels/physics/gravity.hpp"
#include "kernels/staging.hpp"

namespace tiersim {

namespace {

template <class View>
class CudaNbodyEngine final : public NbodyEngine {
 public:
  using T = typename View::scalar;

  CudaNbodyEngine(const Strategy& s, int n, const NbodyParams& p, const NbodyTuning& t, const BodyPartition& part)
      : s_(s), n_(n), p_(p), t_(t), part_(part), lo_(part.lo()), hi_(part.hi(n)) {
    s_.backend = Backend::Cuda;
    strategy_ = std::string("cuda/") + name(s.layout) + "/" + name(s.precision) + "/" + name(s.tiling);
    // Validate the tuning now, not at the first launch.
    (void)cuda::choose_force_launch(s.tiling, s.precision, n, t);
    const std::string what =
        "particles (" + std::to_string(n) + " bodies, " + name(s.layout) + ", " + name(s.precision) + ")";
    const std::size_t bytes = View::bytes(std::size_t(n));
    const std::size_t psi_bytes = std::size_t(n) * sizeof(double);
    const std::size_t scratch = cuda::nbody_diagnostics_scratch_bytes<View>(hi_ - lo_);
    // Check the whole need first, so that a case too large fails with one message.
    std::size_t free_b = 0, total_b = 0;
    TIERSIM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b), "starting the CUDA backend");
    const std::size_t need = bytes + psi_bytes + scratch;
    if (need > free_b)
      throw Error("case too large for the GPU: " + what + " need " + format_bytes(double(need)) + " (" +
                  format_bytes(double(bytes)) + " particles + " + format_bytes(double(psi_bytes + scratch)) +
                  " diagnostics scratch), " + format_bytes(double(free_b)) + " free of " +
                  format_bytes(double(total_b)) + " on " + query_device().name);
    store_.allocate(bytes, what);
    psi_.allocate(psi_bytes, "potential per body");
    scratch_.allocate(scratch, "diagnostics reduction scratch");
    scratch_bytes_ = scratch;
    dview_ = View(store_.data(), n);
    l2_.target(store_.data(), View::hot_bytes(std::size_t(n)));
    if (part_.ranks() > 1) plan_exchange();
    if (part_.ranks() > 1 && s_.transport == Transport::Nccl) {
      // NCCL connects the ranks for a pattern at its first use (0.27 s for 4 H200s): once here,
      // at set-up, with the data not yet uploaded, so that the first step does not pay it.
      broadcast_positions();
      TIERSIM_CUDA_CHECK(cudaStreamSynchronize(stream_), "connecting the ranks for the position exchange");
    }
  }

  int size() const override { return n_; }
  std::string strategy_name() const override { return strategy_; }

  void upload(const Bodies& b) override {
    if (int(b.size()) != n_)
      throw Error("upload: " + std::to_string(b.size()) + " bodies into an engine of " + std::to_string(n_));
    HostParticleStore<View> host(n_);
    store_bodies(b, host.view());
    TIERSIM_CUDA_CHECK(cudaMemcpyAsync(store_.data(), host.data(), host.bytes(), cudaMemcpyHostToDevice, stream_),
                       "upload " + format_bytes(double(host.bytes())));
    TIERSIM_CUDA_CHECK(cudaStreamSynchronize(stream_), "upload");  // host buffer goes out of scope
    potential_current_ = false;
  }

  Bodies download() override {
    HostParticleStore<View> host(n_);
    TIERSIM_CUDA_CHECK(cudaMemcpyAsync(host.data(), store_.data(), host.bytes(), cudaMemcpyDeviceToHost, stream_),
                       "download " + format_bytes(double(host.bytes())));
    TIERSIM_CUDA_CHECK(cudaStreamSynchronize(stream_), "download");
    return load_bodies(host.view());
  }

  void compute_forces(bool with_potential) override {
    force_pass(with_potential ? cuda::ForcePass::ForcesPotential : cuda::ForcePass::Forces);
  }

  void kick(double dt) override {
    KernelRecord& r = timer_.begin("nbody_kick", strategy_);
    cuda::launch_nbody_kick(dview_, dt, stream_, r, lo_, hi_);
    timer_.end();
  }

  void drift(double dt) override {
    KernelRecord& r = timer_.begin("nbody_drift", strategy_);
    cuda::launch_nbody_drift(dview_, dt, stream_, r, lo_, hi_);
    timer_.end();
    potential_current_ = false;
  }

  // Timed on the host from the end of the drift (waited for first, so that the record holds the
  // exchange only) to the end of the last copy up: the allgather needs the copies down finished,
  // and the next force pass needs the copies up.
  void exchange_positions() override {
    if (part_.ranks() == 1) return;
    if (part_.ranks() != comm::size())
      throw Error("exchange_positions: bodies split for " + std::to_string(part_.ranks()) + " ranks, the run has " +
                  std::to_string(comm::size()));
    const std::size_t me = std::size_t(part_.rank);
    // Bytes sent and received as if each rank sent its part to each other one: this rank's part
    // to ranks - 1 ranks, and the others' parts received.
    double mine = 0, all = 0;
    for (const ExchangeRange& x : exchange_) mine += double(x.of[me].bytes), all += double(x.span);
    const double bytes = mine * (part_.ranks() - 1) + (all - mine);
    potential_current_ = false;
    if (s_.transport == Transport::Nccl) {
      timer_.begin("position_exchange_nccl", strategy_);
      broadcast_positions();
      KernelRecord& r = timer_.end();
      r.bytes_compulsory = r.bytes_modelled = r.work = bytes;
      r.work_unit = "bytes";
      r.communication = true;
      return;
    }
    TIERSIM_CUDA_CHECK(cudaStreamSynchronize(stream_), "before the position exchange");
    const auto t0 = std::chrono::steady_clock::now();
    char* dev = static_cast<char*>(store_.data());
    char* host = exchange_host_.as<char>();
    for (const ExchangeRange& x : exchange_) {
      const ByteRange& m = x.of[me];
      if (m.bytes)
        TIERSIM_CUDA_CHECK(
            cudaMemcpyAsync(host + x.host + x.offsets[me], dev + m.offset, m.bytes, cudaMemcpyDeviceToHost, stream_),
            "position exchange: owned positions down");
    }
    TIERSIM_CUDA_CHECK(cudaStreamSynchronize(stream_), "position exchange: owned positions down");
    for (const ExchangeRange& x : exchange_)
      comm::allgather(host + x.host + x.offsets[me], host + x.host, x.offsets, x.counts);
    for (const ExchangeRange& x : exchange_) {
      // The others' ranges: before this rank's and after it.
      const ByteRange& m = x.of[me];
      const std::size_t before = m.offset - x.lo, after_at = m.offset + m.bytes - x.lo;
      if (before)
        TIERSIM_CUDA_CHECK(cudaMemcpyAsync(dev + x.lo, host + x.host, before, cudaMemcpyHostToDevice, stream_),
                           "position exchange: the others' positions up");
      if (x.span > after_at)
        TIERSIM_CUDA_CHECK(cudaMemcpyAsync(dev + x.lo + after_at, host + x.host + after_at, x.span - after_at,
                                           cudaMemcpyHostToDevice, stream_),
                           "position exchange: the others' positions up");
    }
    TIERSIM_CUDA_CHECK(cudaStreamSynchronize(stream_), "position exchange: the others' positions up");
    KernelRecord r;
    r.kernel = "position_exchange_mpi";
    r.step = telemetry_step();
    r.strategy = strategy_;
    r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    r.bytes_compulsory = r.bytes_modelled = r.work = bytes;
    r.work_unit = "bytes";
    r.communication = true;
    timer_.add(std::move(r));
  }

  // The potential of the last compute_forces(true) when the positions have not moved since (the
  // model asks for it on diagnostics steps); otherwise a potential-only pass, the same arithmetic
  // and the same pairs per body, so the same psi bit for bit (launch_nbody_forces).
  NbodyDiagnostics diagnostics(bool with_potential) override {
    if (with_potential && !potential_current_) force_pass(cuda::ForcePass::Potential);
    KernelRecord& r = timer_.begin("nbody_diagnostics", strategy_, true);
    cuda::launch_nbody_diagnostics(dview_, psi_.as<double>(), scratch_.data(), scratch_bytes_, stream_, r, lo_, hi_);
    if (!with_potential) r.kernel = "nbody_finite_check";  // the same reduction, read for the check only
    timer_.end();
    return cuda::fetch_nbody_diagnostics(scratch_.data(), p_.G, stream_);
  }

  std::vector<KernelRecord> take_records(bool wait) override { return timer_.take_records(wait); }

 private:
  void force_pass(cuda::ForcePass pass) {
    KernelRecord& r = timer_.begin(cuda::force_kernel_name(pass, s_.tiling), strategy_);
    cuda::launch_nbody_forces(dview_, pass, s_.tiling, force_eps2(p_.softening), p_.G, t_, psi_.as<double>(), stream_,
                              r, lo_, hi_);
    timer_.end();
    if (pass != cuda::ForcePass::Forces) potential_current_ = true;
  }

  // One kind of the layout's position ranges (View::position_ranges) over the ranks: rank r's
  // range of[r] in the store; the ranks' ranges lie in rank order inside the span [lo, lo + span)
  // of the store, mirrored at `host` in the pinned buffer (offsets: from lo).
  struct ExchangeRange {
    std::vector<ByteRange> of;
    std::vector<std::size_t> offsets, counts;
    std::size_t lo = 0, span = 0, host = 0;
  };

#ifdef TIERSIM_HAVE_NCCL
  // Each rank's ranges broadcast from it, in place, GPU to GPU, on the engine's stream (the next
  // force pass follows in stream order): one group, which NCCL runs as an allgather.
  void broadcast_positions() {
    ncclComm_t c = cuda::nccl_comm();
    char* dev = static_cast<char*>(store_.data());
    cuda::nccl_check(ncclGroupStart(), "ncclGroupStart");
    for (const ExchangeRange& x : exchange_)
      for (int r = 0; r < part_.ranks(); ++r)
        if (const ByteRange& b = x.of[std::size_t(r)]; b.bytes)
          cuda::nccl_check(ncclBroadcast(dev + b.offset, dev + b.offset, b.bytes, ncclChar, r, c, stream_),
                           "ncclBroadcast (positions)");
    cuda::nccl_check(ncclGroupEnd(), "ncclGroupEnd");
  }
#else
  void broadcast_positions() { throw Error("--transport nccl: tiersim was built without NCCL"); }
#endif

  void plan_exchange() {
    const std::size_t ranks = std::size_t(part_.ranks()), n = std::size_t(n_);
    std::vector<std::array<ByteRange, View::kPositionRanges>> of(ranks);
    for (std::size_t r = 0; r < ranks; ++r)
      of[r] = View::position_ranges(n, std::size_t(part_.first[r]), std::size_t(part_.first[r + 1]));
    std::size_t host_bytes = 0;
    for (std::size_t k = 0; k < std::size_t(View::kPositionRanges); ++k) {
      ExchangeRange x;
      x.lo = of[0][k].offset;
      x.span = of[ranks - 1][k].offset + of[ranks - 1][k].bytes - x.lo;
      x.host = host_bytes;
      for (std::size_t r = 0; r < ranks; ++r) {
        x.of.push_back(of[r][k]);
        x.offsets.push_back(of[r][k].offset - x.lo);
        x.counts.push_back(of[r][k].bytes);
      }
      host_bytes += align_up(x.span, kArrayAlign);
      exchange_.push_back(std::move(x));
    }
    exchange_host_ = HostBuffer(host_bytes);
  }

  Strategy s_;
  int n_;
  NbodyParams p_;
  NbodyTuning t_;
  BodyPartition part_;
  int lo_, hi_;  // the owned bodies
  std::vector<ExchangeRange> exchange_;
  HostBuffer exchange_host_;  // pinned: the position ranges of every rank on their way
  std::string strategy_;
  cuda::DeviceBuffer store_, psi_, scratch_;
  std::size_t scratch_bytes_ = 0;
  bool potential_current_ = false;  // psi_ holds the potential of the bodies as they are now
  View dview_;
  // Destroyed in reverse order: timer, window (drains the stream, resets persisting lines,
  // restores the limit), then the stream.
  cuda::OwnedStream owned_stream_{cudaStreamNonBlocking};
  cudaStream_t stream_ = owned_stream_.get();
  cuda::L2Window l2_{
      stream_, s_.l2_persist, s_.l2_persist_bytes, View::hot_bytes(std::size_t(n_)), "the N-body positions", s_.tuning};
  cuda::LaunchTimer timer_{stream_, &l2_, s_.tuning};
};

}  // namespace

std::unique_ptr<NbodyEngine> make_nbody_cuda(const Strategy& s, int n, const NbodyParams& p, const NbodyTuning& t,
                                             const BodyPartition& part) {
  const DeviceInfo d = query_device();
  if (!d.usable) throw Error("--backend cuda: " + d.why_not);
  if (n < 0) throw Error("nbody: negative body count " + std::to_string(n));
  if (!(p.softening >= 0)) throw Error("nbody: softening must be >= 0");
  return with_layout_and_scalar(s.layout, s.precision,
                                [&](auto layout_tag, auto scalar_tag) -> std::unique_ptr<NbodyEngine> {
                                  using T = typename decltype(scalar_tag)::type;
                                  using View = ParticleView<decltype(layout_tag)::value, T>;
                                  return std::make_unique<CudaNbodyEngine<View>>(s, n, p, t, part);
                                });
}

}  // namespace tiersim
