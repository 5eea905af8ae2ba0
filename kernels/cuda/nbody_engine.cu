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
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/l2_window.cuh"
#include "kernels/cuda/launch_timer.hpp"
#include "kernels/cuda/nbody_forces.cuh"
#include "kernels/cuda/nbody_integrate.cuh"
#include "kernels/device_info.hpp"
#include "kernels/nbody_engine.hpp"
#include "kernels/physics/gravity.hpp"

namespace tiersim {

namespace {

template <class View>
class CudaNbodyEngine final : public NbodyEngine {
 public:
  using T = typename View::scalar;

  CudaNbodyEngine(const Strategy& s, int n, const NbodyParams& p, const NbodyTuning& t) : s_(s), n_(n), p_(p), t_(t) {
    s_.backend = Backend::Cuda;
    strategy_ = std::string("cuda/") + name(s.layout) + "/" + name(s.precision) + "/" + name(s.tiling);
    // Validate the tuning now, not at the first launch.
    (void)cuda::choose_force_launch(s.tiling, s.precision, n, t);
    const std::string what =
        "particles (" + std::to_string(n) + " bodies, " + name(s.layout) + ", " + name(s.precision) + ")";
    const std::size_t bytes = View::bytes(std::size_t(n));
    const std::size_t psi_bytes = std::size_t(n) * sizeof(double);
    const std::size_t scratch = cuda::nbody_diagnostics_scratch_bytes<View>(n);
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
    cuda::launch_nbody_kick(dview_, dt, stream_, r);
    timer_.end();
  }

  void drift(double dt) override {
    KernelRecord& r = timer_.begin("nbody_drift", strategy_);
    cuda::launch_nbody_drift(dview_, dt, stream_, r);
    timer_.end();
    potential_current_ = false;
  }

  // The potential of the last compute_forces(true) when the positions have not moved since (the
  // model asks for it on diagnostics steps); otherwise a potential-only pass, the same arithmetic
  // and the same pairs per body, so the same psi bit for bit (launch_nbody_forces).
  NbodyDiagnostics diagnostics() override {
    if (!potential_current_) force_pass(cuda::ForcePass::Potential);
    KernelRecord& r = timer_.begin("nbody_diagnostics", strategy_);
    cuda::launch_nbody_diagnostics(dview_, psi_.as<double>(), scratch_.data(), scratch_bytes_, stream_, r);
    timer_.end();
    return cuda::fetch_nbody_diagnostics(scratch_.data(), p_.G, stream_);
  }

  std::vector<KernelRecord> take_records(bool wait) override { return timer_.take_records(wait); }

 private:
  void force_pass(cuda::ForcePass pass) {
    KernelRecord& r = timer_.begin(cuda::force_kernel_name(pass, s_.tiling), strategy_);
    cuda::launch_nbody_forces(dview_, pass, s_.tiling, force_eps2(p_.softening), p_.G, t_, psi_.as<double>(), stream_,
                              r);
    timer_.end();
    if (pass != cuda::ForcePass::Forces) potential_current_ = true;
  }

  Strategy s_;
  int n_;
  NbodyParams p_;
  NbodyTuning t_;
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

std::unique_ptr<NbodyEngine> make_nbody_cuda(const Strategy& s, int n, const NbodyParams& p, const NbodyTuning& t) {
  const DeviceInfo d = query_device();
  if (!d.usable) throw Error("--backend cuda: " + d.why_not);
  if (n < 0) throw Error("nbody: negative body count " + std::to_string(n));
  if (!(p.softening >= 0)) throw Error("nbody: softening must be >= 0");
  return with_layout_and_scalar(s.layout, s.precision,
                                [&](auto layout_tag, auto scalar_tag) -> std::unique_ptr<NbodyEngine> {
                                  using T = typename decltype(scalar_tag)::type;
                                  using View = ParticleView<decltype(layout_tag)::value, T>;
                                  return std::make_unique<CudaNbodyEngine<View>>(s, n, p, t);
                                });
}

}  // namespace tiersim
