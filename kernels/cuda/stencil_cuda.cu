// The CUDA stencil backend: fields in device memory (one GridSpec for all), the halo fill and
// the update kernel of kernels/cuda/stencil_kernels.cu per step, reductions on the device, and
// one telemetry record per launch timed with CUDA events.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/stencil_kernels.cuh"
#include "kernels/device_info.hpp"
#include "kernels/stencil_engine.hpp"

namespace tiersim {
namespace {

// The __constant__ table is one per process and scalar type: the engine whose table is there.
std::atomic<std::uint64_t> g_next_engine_id{1};
std::uint64_t g_constant_owner[2] = {0, 0};

template <class T>
class StencilCuda final : public StencilEngine {
 public:
  StencilCuda(const Strategy& s, const StencilProblem& p, const StencilTuning& t)
      : p_(p), s_(s), t_(t), spec_(GridSpec<T>::make(p.nx, p.ny, p.nz, p.radius)), id_(g_next_engine_id++) {
    const DeviceInfo d = query_device();
    if (!d.usable) throw Error("--backend cuda: " + d.why_not);
    sm_count_ = d.sm_count;
    const int nf = stencil_field_count(p.equation);
    const int ngrids = p.equation == Equation::Wave ? 2 : 2 * nf;
    const std::string what = std::string("stencil field (") + name(p.equation) + ", " + std::to_string(p.nx) + "x" +
                             std::to_string(p.ny) + "x" + std::to_string(p.nz) + ", R=" + std::to_string(p.radius) + ")";
    for (int g = 0; g < ngrids; ++g) {
      bufs_.emplace_back(spec_.bytes(), what);
      // Padding and halos start as zeros: nothing uninitialised reaches a kernel.
      TIERSIM_CUDA_CHECK(cudaMemset(bufs_.back().data(), 0, spec_.bytes()), what);
      views_.push_back(spec_.view(bufs_.back().template as<T>()));
    }
    for (int f = 0; f < nf; ++f) cur_.push_back(f);
    if (p.equation != Equation::Wave)
      for (int f = 0; f < nf; ++f) nxt_.push_back(nf + f);
    coeffs_ = make_laplacian_coeffs<T>(p.radius, p.h[0], p.h[1], p.h[2]);
    coeffs_dev_.allocate(sizeof(StencilCoeffs<T>), "stencil coefficients");
    TIERSIM_CUDA_CHECK(cudaMemcpy(coeffs_dev_.data(), &coeffs_, sizeof coeffs_, cudaMemcpyHostToDevice));
    max_blocks_ = 4 * std::max(1, sm_count_) * 8;
    partials_.allocate(sizeof(double) * 4 * std::size_t(max_blocks_), "reduction partials");
  }

  ~StencilCuda() override {
    for (auto& r : pending_) cudaEventDestroy(r.start), cudaEventDestroy(r.stop);
  }

  const StencilProblem& problem() const override { return p_; }

  void upload(int field, const std::vector<double>& v) override {
    check_field(field, v.size());
    std::vector<T> host(spec_.elements(), T(0));
    const GridView<T> hv = spec_.view(host.data());
    for (int k = 0; k < p_.nz; ++k)
      for (int j = 0; j < p_.ny; ++j)
        for (int i = 0; i < p_.nx; ++i) hv(i, j, k) = T(v[(std::size_t(k) * p_.ny + j) * p_.nx + i]);
    TIERSIM_CUDA_CHECK(cudaMemcpy(bufs_[cur_[field]].data(), host.data(), spec_.bytes(), cudaMemcpyHostToDevice),
                       "stencil field upload");
  }

  std::vector<double> download(int field) override {
    check_field(field, std::size_t(p_.points()));
    std::vector<T> host(spec_.elements());
    TIERSIM_CUDA_CHECK(cudaMemcpy(host.data(), bufs_[cur_[field]].data(), spec_.bytes(), cudaMemcpyDeviceToHost),
                       "stencil field download");
    const GridView<T> hv = spec_.view(host.data());
    std::vector<double> v(std::size_t(p_.points()));
    for (int k = 0; k < p_.nz; ++k)
      for (int j = 0; j < p_.ny; ++j)
        for (int i = 0; i < p_.nx; ++i) v[(std::size_t(k) * p_.ny + j) * p_.nx + i] = double(hv(i, j, k));
    return v;
  }

  void step(double dt) override {
    const int ns = p_.equation == Equation::GrayScott ? 2 : 1;
    {
      Pending r = begin("stencil_halo_cuda");
      for (int f = 0; f < ns; ++f) cuda::launch_halo_fill(views_[cur_[f]], p_.boundary, T(p_.boundary_value), stream_);
      const double hp = double(ns) * halo_points(p_.nx, p_.ny, p_.nz, p_.radius);
      end(r, hp * 2 * sizeof(T), hp * 2 * sizeof(T), 0, hp);
    }
    cuda::StencilLaunch<T> l;
    l.equation = p_.equation;
    l.radius = p_.radius;
    l.tiling = s_.tiling;
    l.coeffs = s_.coeffs;
    l.tuning = t_;
    l.sm_count = sm_count_;
    l.xlimit = int(spec_.pitch - spec_.xoff);
    l.coeffs_global = coeffs_dev_.template as<StencilCoeffs<T>>();
    if (s_.coeffs == CoeffSpace::Constant) {
      std::uint64_t& owner = g_constant_owner[sizeof(T) == 8];
      if (owner != id_) cuda::upload_constant_coeffs(coeffs_, stream_), owner = id_;
    }
    if (p_.equation == Equation::Heat) {
      l.in[0] = views_[cur_[0]], l.out[0] = views_[nxt_[0]];
      l.p[0] = T(dt * p_.diffusivity);
    } else if (p_.equation == Equation::Wave) {
      l.in[0] = views_[cur_[0]], l.out[0] = views_[cur_[1]], l.prev = views_[cur_[1]].origin;
      l.p[0] = T(p_.speed * p_.speed * dt * dt);
    } else {
      l.in[0] = views_[cur_[0]], l.in[1] = views_[cur_[1]], l.out[0] = views_[nxt_[0]], l.out[1] = views_[nxt_[1]];
      l.p[0] = T(dt), l.p[1] = T(p_.du), l.p[2] = T(p_.dv), l.p[3] = T(p_.feed), l.p[4] = T(p_.kill);
    }
    Pending r = begin("");
    const cuda::StencilLaunchInfo info = cuda::launch_stencil_update(l, stream_);
    r.rec.kernel = info.kernel;
    end(r, stencil_compulsory_bytes(p_, sizeof(T)), info.bytes_modelled,
        stencil_flops_per_point(p_) * double(p_.points()), double(p_.points()));
    if (p_.equation == Equation::Wave) std::swap(cur_[0], cur_[1]);
    else
      for (int f = 0; f < ns; ++f) std::swap(cur_[f], nxt_[f]);
  }

  void add_point_value(int i, int j, int k, double value) override {
    cuda::launch_add_point(views_[cur_[0]], i, j, k, T(value), stream_);
  }

  FieldStats stats(int field) override {
    check_field(field, std::size_t(p_.points()));
    const int blocks = cuda::launch_field_stats(views_[cur_[field]], partials_.template as<double>(), max_blocks_, stream_);
    const std::vector<double> h = fetch_partials(blocks);
    FieldStats st{0, 0, std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
    for (int b = 0; b < blocks; ++b) {
      st.sum += h[4 * b], st.sum_sq += h[4 * b + 1];
      st.min = std::min(st.min, h[4 * b + 2]), st.max = std::max(st.max, h[4 * b + 3]);
    }
    return st;
  }

  double wave_energy(double dt) override {
    if (p_.equation != Equation::Wave) return 0;
    cuda::launch_halo_fill(views_[cur_[1]], p_.boundary, T(p_.boundary_value), stream_);
    const int blocks = cuda::launch_wave_energy(views_[cur_[0]], views_[cur_[1]], coeffs_dev_.template as<StencilCoeffs<T>>(),
                                                p_.speed * p_.speed, 1 / dt, partials_.template as<double>(),
                                                max_blocks_, stream_);
    const std::vector<double> h = fetch_partials(blocks);
    double e = 0;
    for (int b = 0; b < blocks; ++b) e += h[4 * b];
    return e;
  }

  std::vector<KernelRecord> take_records() override {
    std::vector<KernelRecord> out;
    for (auto& r : pending_) {
      TIERSIM_CUDA_CHECK(cudaEventSynchronize(r.stop), "stencil kernel " + r.rec.kernel);
      float ms = 0;
      TIERSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, r.start, r.stop));
      r.rec.ms = ms;
      out.push_back(std::move(r.rec));
      cudaEventDestroy(r.start), cudaEventDestroy(r.stop);
    }
    pending_.clear();
    return out;
  }

  std::string strategy_name() const override {
    return std::string("cuda/") + name(s_.precision) + "/" + name(s_.tiling) + "/" + name(s_.coeffs);
  }

 private:
  struct Pending {
    KernelRecord rec;
    cudaEvent_t start{}, stop{};
  };

  Pending begin(const std::string& kernel) {
    Pending r;
    r.rec.kernel = kernel;
    TIERSIM_CUDA_CHECK(cudaEventCreate(&r.start));
    TIERSIM_CUDA_CHECK(cudaEventCreate(&r.stop));
    TIERSIM_CUDA_CHECK(cudaEventRecord(r.start, stream_));
    return r;
  }
  void end(Pending& r, double compulsory, double modelled, double flops, double work) {
    TIERSIM_CUDA_CHECK(cudaEventRecord(r.stop, stream_));
    r.rec.strategy = strategy_name();
    r.rec.bytes_compulsory = compulsory;
    r.rec.bytes_modelled = modelled;
    r.rec.flops = flops;
    r.rec.work = work;
    r.rec.work_unit = "points";
    pending_.push_back(std::move(r));
    // Bound the events held when nobody takes the records (tests that only step).
    if (pending_.size() > 4096) (void)take_records();
  }

  std::vector<double> fetch_partials(int blocks) {
    std::vector<double> h(4 * std::size_t(blocks));
    TIERSIM_CUDA_CHECK(cudaMemcpy(h.data(), partials_.data(), h.size() * sizeof(double), cudaMemcpyDeviceToHost),
                       "reduction partials");
    return h;
  }

  void check_field(int field, std::size_t n) const {
    if (field < 0 || field >= int(cur_.size())) throw Error("stencil: no field " + std::to_string(field));
    if (n != std::size_t(p_.points()))
      throw Error("stencil: field of " + std::to_string(n) + " values for a grid of " + std::to_string(p_.points()));
  }

  StencilProblem p_;
  Strategy s_;
  StencilTuning t_;
  GridSpec<T> spec_;
  std::uint64_t id_;
  int sm_count_ = 1, max_blocks_ = 1;
  cudaStream_t stream_ = nullptr;  // the legacy default stream: orders the __constant__ uploads of all engines
  std::vector<cuda::DeviceBuffer> bufs_;
  std::vector<GridView<T>> views_;
  std::vector<int> cur_, nxt_;
  StencilCoeffs<T> coeffs_;
  cuda::DeviceBuffer coeffs_dev_, partials_;
  std::vector<Pending> pending_;
};

}  // namespace

std::unique_ptr<StencilEngine> make_stencil_cuda(const Strategy& s, const StencilProblem& p, const StencilTuning& t) {
  if (s.precision == Precision::Fp64) return std::make_unique<StencilCuda<double>>(s, p, t);
  return std::make_unique<StencilCuda<float>>(s, p, t);
}

}  // namespace tiersim
