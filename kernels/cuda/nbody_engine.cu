// make_nbody_cuda: the CUDA N-body backend. The particles live in one device buffer in the
// chosen layout for the whole run; upload/download copy only when asked (initial state,
// snapshots). Every launch is bracketed by two CUDA events recorded on the engine's stream;
// take_records() resolves them, so the hot loop never synchronizes.
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"
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

  CudaNbodyEngine(const Strategy& s, int n, const NbodyParams& p, const NbodyTuning& t)
      : s_(s), n_(n), p_(p), t_(t) {
    s_.backend = Backend::Cuda;
    strategy_ = std::string("cuda/") + name(s.layout) + "/" + name(s.precision) + "/" + name(s.tiling);
    // Validate the tuning now, not at the first launch.
    (void)cuda::choose_force_launch(s.tiling, s.precision, n, t);
    const std::string what = "particles (" + std::to_string(n) + " bodies, " + name(s.layout) + ", " +
                             name(s.precision) + ")";
    const std::size_t bytes = View::bytes(std::size_t(n));
    const std::size_t phi_bytes = std::size_t(n) * sizeof(double);
    const std::size_t scratch = cuda::nbody_diagnostics_scratch_bytes<View>(n);
    // Check the whole need first, so that a case too large fails with one message.
    std::size_t free_b = 0, total_b = 0;
    TIERSIM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b), "starting the CUDA backend");
    const std::size_t need = bytes + phi_bytes + scratch;
    if (need > free_b)
      throw Error("case too large for the GPU: " + what + " need " + format_bytes(double(need)) + " (" +
                  format_bytes(double(bytes)) + " particles + " + format_bytes(double(phi_bytes + scratch)) +
                  " diagnostics scratch), " + format_bytes(double(free_b)) + " free of " +
                  format_bytes(double(total_b)) + " on " + query_device().name);
    store_.allocate(bytes, what);
    phi_.allocate(phi_bytes, "potential per body");
    scratch_.allocate(scratch, "diagnostics reduction scratch");
    scratch_bytes_ = scratch;
    dview_ = View(store_.data(), n);
    TIERSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }

  ~CudaNbodyEngine() override {
    for (auto& r : pending_) {
      cudaEventDestroy(r.start);
      cudaEventDestroy(r.stop);
    }
    for (auto e : free_events_) cudaEventDestroy(e);
    if (stream_) cudaStreamDestroy(stream_);
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
  }

  Bodies download() override {
    HostParticleStore<View> host(n_);
    TIERSIM_CUDA_CHECK(cudaMemcpyAsync(host.data(), store_.data(), host.bytes(), cudaMemcpyDeviceToHost, stream_),
                       "download " + format_bytes(double(host.bytes())));
    TIERSIM_CUDA_CHECK(cudaStreamSynchronize(stream_), "download");
    return load_bodies(host.view());
  }

  void compute_forces() override {
    Pending& r = begin();
    cuda::launch_nbody_forces(dview_, s_.tiling, force_eps2(p_.softening), p_.G, t_, stream_, r.rec);
    end(r);
  }

  void kick(double dt) override {
    Pending& r = begin();
    cuda::launch_nbody_kick(dview_, dt, stream_, r.rec);
    end(r);
  }

  void drift(double dt) override {
    Pending& r = begin();
    cuda::launch_nbody_drift(dview_, dt, stream_, r.rec);
    end(r);
  }

  NbodyDiagnostics diagnostics() override {
    cuda::launch_nbody_potential(dview_, p_.softening * p_.softening, phi_.as<double>(), stream_);
    return cuda::reduce_nbody_diagnostics(dview_, phi_.as<double>(), p_.G, scratch_.data(), scratch_bytes_, stream_);
  }

  std::vector<KernelRecord> take_records() override {
    std::vector<KernelRecord> out;
    out.reserve(pending_.size());
    for (auto& r : pending_) {
      TIERSIM_CUDA_CHECK(cudaEventSynchronize(r.stop), "waiting for " + r.rec.kernel);
      float ms = 0;
      TIERSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, r.start, r.stop), "timing " + r.rec.kernel);
      r.rec.ms = ms;
      out.push_back(std::move(r.rec));
      free_events_.push_back(r.start);
      free_events_.push_back(r.stop);
    }
    pending_.clear();
    return out;
  }

 private:
  struct Pending {
    KernelRecord rec;
    cudaEvent_t start = nullptr, stop = nullptr;
  };

  cudaEvent_t get_event() {
    if (!free_events_.empty()) {
      cudaEvent_t e = free_events_.back();
      free_events_.pop_back();
      return e;
    }
    cudaEvent_t e = nullptr;
    TIERSIM_CUDA_CHECK(cudaEventCreate(&e), "timing event");
    return e;
  }

  Pending& begin() {
    Pending r;
    r.start = get_event();
    r.stop = get_event();
    r.rec.strategy = strategy_;
    pending_.push_back(r);
    TIERSIM_CUDA_CHECK(cudaEventRecord(pending_.back().start, stream_));
    return pending_.back();
  }

  void end(Pending& r) { TIERSIM_CUDA_CHECK(cudaEventRecord(r.stop, stream_), "after " + r.rec.kernel); }

  Strategy s_;
  int n_;
  NbodyParams p_;
  NbodyTuning t_;
  std::string strategy_;
  cuda::DeviceBuffer store_, phi_, scratch_;
  std::size_t scratch_bytes_ = 0;
  View dview_;
  cudaStream_t stream_ = nullptr;
  std::vector<Pending> pending_;
  std::vector<cudaEvent_t> free_events_;
};

}  // namespace

std::unique_ptr<NbodyEngine> make_nbody_cuda(const Strategy& s, int n, const NbodyParams& p, const NbodyTuning& t) {
  const DeviceInfo d = query_device();
  if (!d.usable) throw Error("--backend cuda: " + d.why_not);
  if (n < 0) throw Error("nbody: negative body count " + std::to_string(n));
  if (!(p.softening >= 0)) throw Error("nbody: softening must be >= 0");
  return with_layout_and_scalar(s.layout, s.precision, [&](auto layout_tag, auto scalar_tag) -> std::unique_ptr<NbodyEngine> {
    using T = typename decltype(scalar_tag)::type;
    using View = ParticleView<decltype(layout_tag)::value, T>;
    return std::make_unique<CudaNbodyEngine<View>>(s, n, p, t);
  });
}

}  // namespace tiersim
