// The CUDA stencil backend: fields in device memory (one GridSpec for all), the halo fill and
// the update kernel (stencil_kernels.cuh's drivers) per step, or one temporally blocked pass per
// several steps (stencil_temporal.cuh), reductions on the device, and one telemetry record per
// launch through the shared LaunchTimer (CUDA events, NVTX, L2 window).
//
// One engine per listed equation (kernels/physics/equations.hpp): the fields, the ping-pong
// buffers and the point update follow from the equation's traits.
//
// L2 persistence (--l2-persist on). What is hot: the field the NEXT step reads, i.e. the
// buffer this step writes (every field of a two-field equation such as Gray-Scott's U and V; with
// a previous level, as the wave's, the buffer updated in place, which is the next step's u), and
// the coefficient table (--coeffs global). The grids live in one allocation laid out as
//     [ group A grids | coefficient table | group B grids ]
// (one grid per field in each group), so that a window over either group plus the table, or over
// everything, is one contiguous range. Two placements
// (kernels/l2_window.hpp, StencilL2Target):
//  - Output (default without a previous level: heat, Gray-Scott): retargeted every step, before the update, to the
//  group being written
//    (the next step's input). Measured on an H200 (docs/performance.md, "L2 persistence"):
//    neutral (0.96-1.04x) while the group fits the carve-out, slower beyond: the lines made
//    persisting one step are still persisting the next, so ping-pong asks for twice the
//    carve-out, and with hitRatio < 1 steps ran up to 3x slower.
//  - Pair: one window over the arena, hitRatio = carve-out / both groups. Measured slower than
//    Output at every size.
//  - Fixed (default with a previous level: the wave): group A and the table, set once, never moved (no churn: A
//    is read every step and rewritten every other step). Measured on an H100 with periodic
//    boundaries and carve-outs filled to the brim: slower than Output from 176^3 (0.53-0.74x);
//    with fixed boundaries and a carve-out with slack (l2_fill 0.85) the wave gains 1.1-1.2x
//    at 160-176^3 (docs/performance.md, "L2 persistence").
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <future>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/comm.hpp"
#include "kernels/cuda/staging.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/ipc_exchange.hpp"
#include "kernels/cuda/l2_window.cuh"
#include "kernels/cuda/launch_timer.hpp"
#include "kernels/cuda/nccl_comm.cuh"
#include "kernels/cuda/stencil_kernels.cuh"
#include "kernels/cuda/stencil_temporal.cuh"
#include "kernels/device_info.hpp"
#include "kernels/halo_exchange.hpp"
#include "kernels/l2_window.hpp"
#include "kernels/stencil_engine.hpp"
#include "layouts/grid.hpp"

namespace tiersim {
namespace {

// The __constant__ table is one per process and scalar type: the engine whose table is there.
std::atomic<std::uint64_t> g_next_engine_id{1};
std::uint64_t g_constant_owner[2] = {0, 0};

// Every grid of the arena starts 256-byte aligned, as cudaMalloc would place it.
constexpr std::size_t round_up(std::size_t b, std::size_t a) { return (b + a - 1) / a * a; }
constexpr std::size_t round256(std::size_t b) { return round_up(b, 256); }

template <class T, class Eq>
class StencilCuda final : public StencilEngine {
  static constexpr int kFields = Eq::kFields;  // grids per group: the fields one step writes
  static constexpr int kStateFields = int(Eq::kStateNames.size());

 public:
  StencilCuda(const Strategy& s, const StencilProblem& p, const StencilTuning& t)
      : p_(p), s_(s), t_(t), spec_(GridSpec<T>::make(p.nx, p.ny, p.nz, p.radius)), id_(g_next_engine_id++) {
    const DeviceInfo d = query_device();
    if (!d.usable) throw Error("--backend cuda: " + d.why_not);
    sm_count_ = d.sm_count;
    l2_bytes_ = d.l2_bytes;
    cc_major_ = d.cc_major;
    if (temporal_) {
      if (cuda::temporal_shapes(p.equation, p.radius, sizeof(T) == 8).empty())
        throw Error(std::string("--tiling temporal: no temporally blocked kernel for ") + Eq::kName + " at R = " +
                    std::to_string(p.radius) + " (heat and wave: R = 1..4; gray-scott: R = 1); use --tiling shared");
      cuda::TemporalOptions opt;
      opt.steps = t.temporal_steps;
      // From the whole grid, so that every rank of a split grid fuses as many steps (its passes
      // exchange T R planes with the neighbours).
      const int nz_all = p.nz_global > 0 ? p.nz_global : p.nz;
      fused_ = t.temporal_steps > 0
                   ? t.temporal_steps
                   : cuda::temporal_default_steps(p.equation, p.radius, sizeof(T) == 8, p.nx, p.ny, nz_all, opt);
      const int most = cuda::temporal_max_steps(p.equation, p.radius, sizeof(T) == 8);
      if (fused_ < 1 || fused_ > most)
        throw Error("stencil.temporal_steps = " + std::to_string(fused_) + ": the temporal kernel for " + Eq::kName +
                    " at R = " + std::to_string(p.radius) + " fuses 1.." + std::to_string(most) + " steps");
      // Chosen, where fusing would lose to the single step on this device: single steps. A grid
      // split over ranks fuses only where every rank's device would (they exchange alike).
      if (t.temporal_steps == 0) {
        bool pays = cuda::temporal_pays(p.equation, p.radius, sizeof(T) == 8, p.boundary);
        if (p.z_split()) pays = comm::min(std::int64_t(pays ? 1 : 0)) == 1;
        if (!pays) temporal_ = false, fused_ = 1;
      }
      // Split over ranks, a pass reads T R planes of each neighbour: the grids get that deep a z
      // halo (zpad_ planes beyond the R of GridSpec on each side), and a slab must hold them.
      if (p.z_split()) {
        // The thinnest slab (z_slab's are nz / ranks planes, rounded down or up), so that every rank
        // refuses alike.
        const int deep = fused_ * p.radius, thinnest = nz_all / comm::size();
        if (thinnest < deep)
          throw Error("--tiling temporal: grid.nz = " + std::to_string(nz_all) + " split over " +
                      std::to_string(comm::size()) + " ranks leaves slabs of " + std::to_string(thinnest) +
                      " z planes, fewer than the " + std::to_string(deep) + " (" + std::to_string(fused_) +
                      " fused steps x R) a pass reads from each neighbour; use fewer ranks or stencil.temporal_steps");
        zpad_bytes_ = std::size_t(deep - p.radius) * std::size_t(spec_.plane()) * sizeof(T);
      }
    }
    // Two groups of the fields one step writes; a temporal pass over an equation with a previous
    // level writes both levels, so it gets two grids more (the pass cannot work in place).
    const int ngrids = 2 * kFields + (temporal_ && Eq::kPreviousLevel ? 2 : 0);
    const std::string what = std::string("stencil fields (") + Eq::kName + ", " + std::to_string(ngrids) + " x " +
                             std::to_string(p.nx) + "x" + std::to_string(p.ny) + "x" + std::to_string(p.nz) +
                             ", R=" + std::to_string(p.radius) + ")";
    grid_stride_ = round256(spec_.bytes() + 2 * zpad_bytes_);
    coeff_slot_ = round256(sizeof(StencilCoeffs<T>));
    arena_.allocate(std::size_t(ngrids) * grid_stride_ + coeff_slot_, what);
    // Padding and halos start as zeros: nothing uninitialised reaches a kernel.
    TIERSIM_CUDA_CHECK(cudaMemset(arena_.data(), 0, arena_.bytes()), what);
    for (int g = 0; g < ngrids; ++g) views_.push_back(spec_.view(reinterpret_cast<T*>(grid_base(g))));
    uploader_ = std::make_unique<cuda::PlaneUploader>(std::size_t(spec_.plane()) * sizeof(T), p.nz);
    // With a previous level: u(t) and u(t - dt) in grids 0 and 1, swapped every step; without:
    // group A holds the fields, group B the next step's.
    for (int f = 0; f < kStateFields; ++f) cur_.push_back(f);
    if constexpr (!Eq::kPreviousLevel)
      for (int f = 0; f < kFields; ++f) nxt_.push_back(kFields + f);
    else if (temporal_)
      nxt_ = {2, 3};
    coeffs_ = make_laplacian_coeffs<T>(p.radius, p.h[0], p.h[1], p.h[2]);
    coeffs_dev_ = reinterpret_cast<StencilCoeffs<T>*>(static_cast<char*>(arena_.data()) + kFields * grid_stride_);
    TIERSIM_CUDA_CHECK(cudaMemcpy(coeffs_dev_, &coeffs_, sizeof coeffs_, cudaMemcpyHostToDevice));
    // Ipc: the staging the neighbours write into, for the deepest exchange of every state field.
    if (s_.transport == Transport::Ipc && p.z_split()) {
      const std::size_t planes = std::size_t(std::max(1, fused_) * p.radius);
      ipc_ = std::make_unique<cuda::IpcExchange>(p.rank_below, p.rank_above,
                                                 std::size_t(kStateFields) * planes * spec_.plane() * sizeof(T));
    }
    max_blocks_ = 4 * std::max(1, sm_count_) * 8;
    partials_.allocate(sizeof(double) * cuda::kFieldStatsPartials * std::size_t(max_blocks_), "reduction partials");
    // The first step reads group A: that is the hot set until the first update retargets.
    target_window(Eq::kPreviousLevel ? cur_[1] : cur_[0]);
    int device = 0;
    TIERSIM_CUDA_CHECK(cudaGetDevice(&device), "stencil engine");
    prepared_ = std::async(std::launch::async, [this, device] { prepare_kernels(device); });
  }

  const StencilProblem& problem() const override { return p_; }
  int fused_steps() const override { return temporal_ ? fused_ : 0; }

  using StencilEngine::upload;
  void upload(int field, const double* v, std::size_t n) override {
    check_field(field, n);
    // The kernels prepared by now: the state's first copy, and all that follows it (the run's
    // figures of the copy bandwidth among them), shares the device with nothing else.
    wait_prepared();
    // The z halo planes zeroed; the interior planes, with their x and y halos and padding as
    // zeros, converted by the OpenMP threads chunk by chunk and each chunk sent while the next is
    // made.
    char* const base = static_cast<char*>(grid_base(cur_[field]));
    const std::size_t halo_planes = std::size_t(spec_.plane_start(0)) * sizeof(T);
    const std::size_t interior = std::size_t(spec_.plane()) * std::size_t(p_.nz) * sizeof(T);
    TIERSIM_CUDA_CHECK(cudaMemsetAsync(base, 0, halo_planes, stream_), "stencil field upload");
    TIERSIM_CUDA_CHECK(
        cudaMemsetAsync(base + halo_planes + interior, 0, spec_.bytes() - halo_planes - interior, stream_),
        "stencil field upload");
    uploader_->upload(
        base + halo_planes, p_.nz,
        [&](int first, int count, void* buf) { set_interior_planes(spec_, static_cast<T*>(buf), first, count, v); },
        stream_, "stencil field upload");
    ++state_version_;
    fixed_halos_ready_ = x_halos_current_ = false;  // the upload wrote zeros over that grid's halo
  }

  std::vector<double> download(int field) override {
    check_field(field, std::size_t(p_.points()));
    const HostGrid<T> host(p_.nx, p_.ny, p_.nz, p_.radius);
    TIERSIM_CUDA_CHECK(cudaMemcpy(host.data(), grid_base(cur_[field]), spec_.bytes(), cudaMemcpyDeviceToHost),
                       "stencil field download");
    std::vector<double> v(std::size_t(p_.points()));
    host.get_interior(v.data());
    return v;
  }

  std::unique_ptr<CopyInFlight> stage(int field, void* dst) override {
    check_field(field, std::size_t(p_.points()));
    const std::size_t r = std::size_t(p_.radius);
    return stager_.stage_box(grid_base(cur_[field]), sizeof(T), std::size_t(spec_.pitch), std::size_t(spec_.plane()),
                             std::size_t(spec_.xoff), r, r, std::size_t(p_.nx), std::size_t(p_.ny), std::size_t(p_.nz),
                             dst, "stencil field");
  }

  void step(double dt) override {
    wait_prepared();
    ++state_version_;
    // A grid split over ranks: the z halos leave first, on a stream of their own, while the x and
    // y halo passes and the interior update (planes R..nz-R-1, which read no z halo) run; the z
    // faces (R planes at each end) are updated once they are in. The planes sent carry the x and
    // y halos of the step before (the passes below rewrite them meanwhile), which no star stencil
    // reads in a z halo plane. Heat R = 4 at 1024^3 (docs/performance.md, "Several GPUs"): queued
    // after the halo passes, beside the interior update alone, the exchange slowed the update by
    // 11% on 2 H100s (NCCL's blocks held SMs it needed; held to 4 blocks, the exchange outlasted
    // it); queued first, beside the halo passes, it was hidden on 2 H200s (3 us waited per step)
    // and the interior update ran within 1.2% of one GPU's time per plane.
    if (p_.z_split()) start_exchange(cur_.data(), kFields);
    // Halos: the fill fill_plan() asks for. The window still covers the inputs (last step's
    // outputs): their halos are hot too.
    const bool periodic = p_.boundary == Boundary::Periodic;
    const bool images = periodic && s_.tiling != Tiling::None && x_images_fit();
    const FillPlan plan =
        fill_plan(x_halos_current_, x_read_wrapped_, y_read_wrapped_, wraps_built_, fixed_halos_ready_);
    if (plan.due) {
      const int grids = periodic ? kFields : int(views_.size());
      timer_.begin("stencil_halo_cuda", strategy_);
      // Arena grid g holds state field g % kStateFields (group A, then group B, each in field order;
      // with a previous level the two grids swap roles, but both levels hold the same value).
      cuda::HaloFill<T> fill;
      fill.x_faces = plan.x_faces;
      fill.y_faces = plan.y_faces;
      for (int i = 0; i < grids; ++i) {
        fill.add(views_[periodic ? cur_[i] : i], T(p_.field_boundary_value(i % kStateFields)));
        if (fill.full() || i == grids - 1)
          cuda::launch_halo_fill(fill, p_.boundary, stream_, plan.z_sides), fill.count = 0;
      }
      // Without faces the fill writes the z planes alone: halo_points of no interior plane.
      const double hp = double(grids) * (!fill.y_faces ? double(halo_points(p_.nx, p_.ny, 0, p_.radius, plan.z_sides))
                                                       : halo_points(p_.nx, p_.ny, p_.nz, p_.radius, plan.z_sides) -
                                                             (fill.x_faces ? 0.0 : 2.0 * p_.radius * p_.ny * p_.nz));
      const double bytes = hp * (periodic ? 2 : 1) * sizeof(T);  // periodic: read a face, write a halo
      cost(timer_.end(), bytes, bytes, 0, hp);
      fixed_halos_ready_ = !periodic;
    }
    cuda::StencilLaunch<T, Eq> l = launch_of(images, plan.wraps, dt);
    if (s_.coeffs == CoeffSpace::Constant) {
      // On the legacy default stream: ordered after every engine's queued kernels (their
      // streams are blocking streams) and before this engine's next ones.
      std::uint64_t& owner = g_constant_owner[sizeof(T) == 8];
      if (owner != id_) cuda::upload_constant_coeffs(coeffs_, cudaStreamLegacy), owner = id_;
    }
    // Hot set of the next step: the grids this update writes.
    target_window(Eq::kPreviousLevel ? cur_[1] : nxt_[0]);
    const int r = p_.radius, inner = p_.nz - 2 * r;
    x_images_written_ = images;                    // until a launch says it did not write them
    x_read_wrapped_ = y_read_wrapped_ = l.xwraps;  // likewise
    if (!p_.z_split() && !t_.split_z) {
      update_planes(l, 0, p_.nz);
    } else {
      if (inner > 0) update_planes(l, r, inner);
      if (p_.z_split()) finish_exchange();
      // Both z faces in one launch: they are on every step's path (the next exchange sends what
      // they write), and on 4 H200s one launch takes 0.056 ms where two took 0.032 ms each.
      update_planes(l, 0, p_.nz, inner > 0 ? r : 0);
    }
    if constexpr (Eq::kPreviousLevel)
      std::swap(cur_[0], cur_[1]);
    else
      for (int f = 0; f < kFields; ++f) std::swap(cur_[f], nxt_[f]);
    x_halos_current_ = x_images_written_;
  }

  // --tiling temporal: one pass of min(max_steps, fused_) steps (stencil_temporal.cuh). Where only
  // one step is wanted (a pass cut short by the cadences), the single step if it needs no halo
  // fill after a pass (single_fills_nothing_): its kernel, prepared at start-up beside the passes,
  // is faster than a pass that fuses nothing; else a pass of one, which fills nothing (512^3, H200:
  // heat fp32 R = 2 0.318 against 0.403 ms, but R = 1 0.306 ms and a fill of the x faces against
  // 0.347; docs/performance.md, "Temporal blocking").
  int advance(double dt, int max_steps) override {
    wait_prepared();
    if (!temporal_ || max_steps < 1 || (max_steps == 1 && fused_ > 1 && single_fills_nothing_)) {
      step(dt);
      return 1;
    }
    ++state_version_;
    cuda::TemporalOptions opt;
    opt.steps = std::min(max_steps, fused_);
    const int deep = opt.steps * p_.radius;
    // Split over ranks: every state field's T R planes at each end go to the neighbours and theirs
    // come into the deep z halo, while the planes that read none of them are updated.
    if (p_.z_split()) start_exchange(cur_.data(), kStateFields, deep);
    cuda::TemporalParams<T> prm;
    cuda::set_temporal_params<Eq>(prm, Eq::template params<T>(p_.template constants<Eq>(), dt));
    GridView<T> in[2], out[2];
    T bv[2];
    for (int f = 0; f < 2; ++f) {
      const int sf = f < kStateFields ? f : 0;
      in[f] = views_[cur_[sf]];
      out[f] = views_[nxt_[sf < int(nxt_.size()) ? sf : 0]];
      bv[f] = T(p_.field_boundary_value(sf));
    }
    // The pass over planes [k0, k0 + n), below and above which `below` and `above` planes hold
    // values (the slab's own or the neighbours'), each launch its own record.
    int n = 0;
    auto pass = [&](int k0, int planes, int below, int above, bool faces) {
      GridView<T> zi[2], zo[2];
      for (int f = 0; f < 2; ++f) zi[f] = z_range(in[f], k0, planes), zo[f] = z_range(out[f], k0, planes);
      cuda::TemporalOptions o = opt;
      o.z_below = below, o.z_above = above;
      KernelRecord cost_model;
      timer_.begin(update_name_.c_str(), strategy_);
      n = cuda::launch_stencil_temporal<T>(p_.equation, p_.radius, zi, zo, coeffs_, prm, p_.boundary, bv, stream_,
                                           cost_model, o);
      KernelRecord& r = timer_.end();
      r.kernel = faces ? cost_model.kernel + "_zfaces" : cost_model.kernel;
      r.steps = n;
      cost(r, cost_model.bytes_compulsory, cost_model.bytes_modelled, cost_model.flops, cost_model.work);
    };
    if (!p_.z_split()) {
      pass(0, p_.nz, 0, 0, false);
    } else {
      const int lo = p_.rank_below >= 0 ? deep : 0, hi = p_.rank_above >= 0 ? deep : 0, inner = p_.nz - 2 * deep;
      if (inner > 0) pass(deep, inner, deep, deep, false);
      finish_exchange();
      if (inner > 0) {
        pass(0, deep, lo, deep, true);
        pass(p_.nz - deep, deep, deep, hi, true);
      } else {
        pass(0, p_.nz, lo, hi, false);
      }
    }
    for (int f = 0; f < kStateFields; ++f) std::swap(cur_[f], nxt_[f]);
    x_halos_current_ = false;  // a pass writes no halo
    return n;
  }

  void add_point_value(int i, int j, int k, double value) override {
    // Recorded like every launch of a step, so that --counters pairs each profiled launch with a
    // telemetry record (one point: read and written once).
    ++state_version_;
    timer_.begin("stencil_source_cuda", strategy_);
    // Where the x halos hold their images (the next fill does not rewrite them), the point's
    // images get the new value too.
    cuda::launch_add_point(views_[cur_[0]], i, j, k, T(value), x_halos_current_, stream_);
    cost(timer_.end(), 2 * sizeof(T), 2 * sizeof(T), 1, 1);
  }

  // One reduction over the field on the device; kFieldStatsPartials doubles per block come back.
  FieldStats stats(int field) override {
    check_field(field, std::size_t(p_.points()));
    // The diagnostics and the non-finite check of one step ask for the same statistics: one pass.
    auto& cached = stats_cache_[std::size_t(field)];
    if (cached.first == state_version_) return cached.second;
    const int blocks = launch_stats(field, partials_.template as<double>());
    const std::vector<double> h = fetch_partials(std::size_t(blocks) * cuda::kFieldStatsPartials);
    cached = {state_version_, sum_stats(h.data(), blocks)};
    return cached.second;
  }

  double wave_energy(double dt) override {
    const int blocks = launch_wave_energy(dt, partials_.template as<double>());
    const std::vector<double> h = fetch_partials(std::size_t(blocks));
    return sum_energy(h.data(), blocks);
  }

  // The same reductions into a buffer of their own, their partials copied into pinned memory
  // behind them and an event recorded: the caller waits for that event, not for the stream.
  std::function<Reductions()> queue_reductions(bool energy, double dt) override {
    constexpr std::size_t np = cuda::kFieldStatsPartials;
    const std::size_t per = np * std::size_t(max_blocks_);  // doubles of one field's partials
    const std::size_t total = per * kStateFields + std::size_t(max_blocks_);
    if (queued_host_.bytes() == 0) {
      queued_dev_.allocate(total * sizeof(double), "queued reduction partials");
      queued_host_ = HostBuffer(total * sizeof(double));
    }
    double* dev = queued_dev_.template as<double>();
    double* host = queued_host_.template as<double>();
    std::vector<int> blocks(kStateFields);
    for (int f = 0; f < kStateFields; ++f) {
      blocks[std::size_t(f)] = launch_stats(f, dev + per * f);
      TIERSIM_CUDA_CHECK(cudaMemcpyAsync(host + per * f, dev + per * f, blocks[std::size_t(f)] * np * sizeof(double),
                                         cudaMemcpyDeviceToHost, stream_),
                         "queued reduction partials");
    }
    int eblocks = 0;
    if (energy) {
      eblocks = launch_wave_energy(dt, dev + per * kStateFields);
      TIERSIM_CUDA_CHECK(cudaMemcpyAsync(host + per * kStateFields, dev + per * kStateFields,
                                         std::size_t(eblocks) * sizeof(double), cudaMemcpyDeviceToHost, stream_),
                         "queued reduction partials");
    }
    TIERSIM_CUDA_CHECK(cudaEventRecord(queued_.get(), stream_), "queued reductions");
    return [this, blocks, eblocks, host, per] {
      TIERSIM_CUDA_CHECK(cudaEventSynchronize(queued_.get()), "queued reductions");
      Reductions r;
      for (int f = 0; f < kStateFields; ++f) r.stats.push_back(sum_stats(host + per * f, blocks[std::size_t(f)]));
      r.wave_energy = sum_energy(host + per * kStateFields, eblocks);
      return r;
    };
  }

  // The launches' records, then the halo exchanges' (on the exchange's stream).
  std::vector<KernelRecord> take_records(bool wait) override {
    std::vector<KernelRecord> recs = timer_.take_records(wait);
    for (KernelRecord& r : comm_timer_.take_records(wait)) recs.push_back(std::move(r));
    return recs;
  }

  std::string strategy_name() const override {
    return std::string("cuda/") + name(s_.precision) + "/" + name(s_.tiling) + "/" + name(s_.coeffs);
  }

 private:
  static void cost(KernelRecord& r, double compulsory, double modelled, double flops, double work) {
    r.bytes_compulsory = compulsory;
    r.bytes_modelled = modelled;
    r.flops = flops;
    r.work = work;
    r.work_unit = "points";
  }

  // The halo fill before a single step, from what the launches before it left (step(); and
  // prepare_kernels, for a step after a temporal pass). Periodic halos copy the step's inputs,
  // every step; fixed ones hold a value no kernel overwrites, so every grid's halo is filled once
  // (`fixed_ready`; again after an upload). On a grid split into z slabs the z faces with a
  // neighbour come from it every step (exchange_halos), fixed boundaries too: they are the
  // neighbour's planes, not a value.
  // Periodic halos under --tiling shared: the update that wrote the inputs wrote their rows' x
  // halos too (StencilLaunch::images; `x_current`), so the fill does the y and z faces only,
  // unless something else wrote the grid since (an upload, a temporal pass). On a grid not split
  // in z the updates read the planes beyond the z ends from the other end themselves where their
  // kernel is built for it (StencilLaunch::wraps; the first step's launch says whether it is):
  // the fill writes no z halo plane then. Kernels that read the x ends wrapped
  // (StencilLaunch::xwraps, the bulk-copy ring) need no x halo, and where they read the y ends
  // wrapped too (the ring; the register-prefetch kernels, whose x halos are the images) no y halo:
  // after their first step the fill writes no x face, or nothing (one GPU) but the z planes where
  // the kernel does not wrap them.
  struct FillPlan {
    bool due = false, x_faces = false, y_faces = false, wraps = false;
    int z_sides = 0;
  };
  FillPlan fill_plan(bool x_current, bool x_read_wrapped, bool y_read_wrapped, bool wraps_built,
                     bool fixed_ready) const {
    FillPlan f;
    const bool periodic = p_.boundary == Boundary::Periodic;
    f.wraps =
        periodic && s_.tiling != Tiling::None && wraps_built && !p_.z_split() && !t_.split_z && p_.nz >= p_.radius;
    f.z_sides = f.wraps ? 0 : p_.local_z_sides();
    f.x_faces = !x_current && !x_read_wrapped;
    f.y_faces = !(periodic && !f.x_faces && y_read_wrapped);
    f.due = periodic ? (f.y_faces || f.z_sides != 0) : !fixed_ready;
    return f;
  }

  // The single-step update of the current fields (periodic boundaries: the halos the update
  // reads itself, as step() decides).
  cuda::StencilLaunch<T, Eq> launch_of(bool images, bool wraps, double dt) const {
    cuda::StencilLaunch<T, Eq> l;
    l.radius = p_.radius;
    // Single steps of --tiling temporal: the shared kernels.
    l.tiling = s_.tiling == Tiling::Temporal ? Tiling::Shared : s_.tiling;
    l.coeffs = s_.coeffs;
    l.tuning = t_;
    l.sm_count = sm_count_;
    l.l2_bytes = l2_bytes_;
    l.cc_major = cc_major_;
    l.xlimit = int(spec_.pitch - spec_.xoff);
    l.images = images;
    l.wraps = wraps;
    l.xwraps = p_.boundary == Boundary::Periodic && s_.tiling != Tiling::None;
    l.coeffs_global = coeffs_dev_;
    if constexpr (Eq::kPreviousLevel) {
      l.in[0] = views_[cur_[0]], l.out[0] = views_[cur_[1]], l.prev = views_[cur_[1]].origin;
    } else {
      for (int f = 0; f < kFields; ++f) l.in[f] = views_[cur_[f]], l.out[f] = views_[nxt_[f]];
    }
    l.params = Eq::template params<T>(p_.template constants<Eq>(), dt);
    return l;
  }

  // Sets up every kernel a step may launch (the halo fill, the single step and its coefficient
  // banks; under --tiling temporal the passes too) on `device`, launching
  // nothing. CUDA loads a module when one of its kernels is first set up or launched (lazy
  // loading, the default): 48-52 ms of the first step of a 512^3 run on an H200
  // (docs/performance.md). The constructor runs this on a thread of its own while the caller
  // builds the initial state; the first upload or step waits for it. A kernel that cannot be set
  // up (a shape this device cannot hold) says so where it is launched, if it ever is: here the
  // error is dropped, and the launch sets it up again.
  void prepare_kernels(int device) {
    try {
      TIERSIM_CUDA_CHECK(cudaSetDevice(device), "preparing the stencil kernels");
      cuda::prepare_halo_fill<T>();
      if (s_.coeffs == CoeffSpace::Constant) cuda::prepare_constant_banks<T>();
      cuda::StencilLaunch<T, Eq> l = launch_of(false, false, 0.0);
      l.prepare = true;
      const cuda::StencilLaunchInfo info = cuda::launch_stencil_update(l, stream_);
      if (!temporal_) return;
      // step()'s fill after a pass, which leaves no x halo current (fixed halos: filled once by
      // then). Periodic and split over ranks a cut step stays a pass of one: the single step's
      // exchange beside it there is not measured.
      single_fills_nothing_ = !fill_plan(false, info.xwraps, info.ywraps, info.wraps_built, true).due &&
                              (p_.boundary != Boundary::Periodic || !p_.z_split());
      cuda::TemporalOptions opt;
      opt.steps = fused_;
      cuda::prepare_stencil_temporal<T>(p_.equation, p_.radius, opt);
    } catch (const std::exception&) {
      (void)cudaGetLastError();
    }
  }
  void wait_prepared() {
    if (prepared_.valid()) prepared_.get();
  }

  // Auto: the window fixed on group A with a previous level (the wave: its update rewrites
  // u(t - dt) in place, so an output window would move onto the buffer being read and rewritten
  // every step), on the output otherwise (kernels/l2_window.hpp).
  static StencilL2Target resolve(StencilL2Target t) {
    if (t != StencilL2Target::Auto) return t;
    return Eq::kPreviousLevel ? StencilL2Target::Fixed : StencilL2Target::Output;
  }
  // Grid g of the arena: group A (g < kFields), the coefficient slot, group B. grid_slot is where
  // its memory starts, grid_base where its GridSpec starts (zpad_bytes_ later: the planes of a deep
  // z halo below plane -R).
  void* grid_slot(int g) const {
    char* a = static_cast<char*>(arena_.data());
    return a + std::size_t(g) * grid_stride_ + (g >= kFields ? coeff_slot_ : 0);
  }
  void* grid_base(int g) const { return static_cast<char*>(grid_slot(g)) + zpad_bytes_; }
  // The window for a step that writes grid g (see kernels/l2_window.hpp, StencilL2Target).
  void target_window(int g) {
    if (!l2_.enabled()) return;
    const std::size_t group_touched = std::size_t(kFields) * touched_grid_bytes();
    if (policy_ == StencilL2Target::Pair) {  // both groups and the table: set once, then a no-op
      l2_.target(arena_.data(), arena_.bytes(), 2 * group_touched + sizeof(StencilCoeffs<T>));
      return;
    }
    const std::size_t bytes = std::size_t(kFields) * grid_stride_ + coeff_slot_;
    if (policy_ == StencilL2Target::Fixed) {  // group A and the table, whichever group is written
      l2_.target(grid_slot(0), bytes, group_touched + sizeof(StencilCoeffs<T>));
      return;
    }
    const std::size_t demand =
        (policy_ == StencilL2Target::OutputHalf ? 2 : 1) * group_touched + sizeof(StencilCoeffs<T>);
    l2_.target(g < kFields ? grid_slot(0) : static_cast<char*>(grid_slot(kFields)) - coeff_slot_, bytes, demand);
  }
  // Bytes of one grid that kernels touch: interior plus halos, each row from the first to the
  // last 32-byte sector it reaches (the padding to the row pitch is never read).
  std::size_t touched_grid_bytes() const {
    const std::size_t row = round_up(std::size_t(p_.nx + 2 * p_.radius) * sizeof(T), 32) + 32;
    return row * std::size_t(p_.ny + 2 * p_.radius) * std::size_t(p_.nz + 2 * p_.radius);
  }
  // The carve-out the stencil asks for (before the device's maximum): the touched bytes of one
  // group and the table.
  std::size_t hot_bytes_max() const {
    return (policy_ == StencilL2Target::Pair ? 2 : 1) * std::size_t(kFields) * touched_grid_bytes() +
           sizeof(StencilCoeffs<T>);
  }

  // Whether the update kernels can write the rows' periodic x halos (cuda::x_images, stencil_tile.cuh):
  // rows of whole 32-byte sectors, with a sector of padding after each.
  bool x_images_fit() const {
    constexpr int W = cuda::kXHaloSectorPoints<T>;
    return p_.nx % W == 0 && p_.nx + W <= int(spec_.pitch - spec_.xoff);
  }

  // The update of planes [k0, k0 + n): the whole grid (0, nz) or the interior of a split step;
  // or, with `faces` = R, its two z faces (planes [0, R) and [nz - R, nz)) in one launch, once the
  // halos are in (the record's kernel name says so). Costs scale with the planes.
  void update_planes(cuda::StencilLaunch<T, Eq> l, int k0, int n, int faces = 0) {
    if (k0 != 0 || n != p_.nz) {
      for (int f = 0; f < kFields; ++f) l.in[f] = z_range(l.in[f], k0, n), l.out[f] = z_range(l.out[f], k0, n);
      if constexpr (Eq::kPreviousLevel) l.prev = l.out[0].origin;
    }
    l.z_faces = faces;
    timer_.begin(update_name_.c_str(), strategy_);
    const cuda::StencilLaunchInfo info = cuda::launch_stencil_update(l, stream_);
    x_images_written_ = x_images_written_ && info.x_images;
    x_read_wrapped_ = x_read_wrapped_ && info.xwraps;
    y_read_wrapped_ = y_read_wrapped_ && info.ywraps;
    if (k0 == 0 && n == p_.nz && faces == 0) wraps_built_ = info.wraps_built;
    KernelRecord& rec = timer_.end();
    rec.kernel = faces ? info.kernel + "_zfaces" : info.kernel;
    const double share = double(faces ? 2 * faces : n) / double(p_.nz);
    cost(rec, share * stencil_compulsory_bytes(p_, sizeof(T)), info.bytes_modelled,
         share * stencil_flops_per_point(p_) * double(p_.points()), share * double(p_.points()));
  }

  // The z pass of arena grids grids[0..n) from the neighbouring ranks, on the exchange's stream
  // once the work queued before is done: each grid's boundary planes (R, or `planes`: a temporal
  // pass's T R) to the neighbours' halos, theirs into its halo planes. Nccl: sends and receives between the GPUs,
  // queued and gone. Ipc: the copy engines' copies into the neighbours' staging, down on the
  // exchange's stream and up on a second one (two copy engines at once), queued and gone. Mpi: the planes copied down
  // into pinned host memory here; finish_exchange trades them and copies the neighbours' up. Then the caller queues
  // what does not need the halos (the interior update) and calls finish_exchange.
  void start_exchange(const int* grids, int n, int planes = 0) {
    if (planes == 0) planes = p_.radius;
    const std::size_t bytes = std::size_t(planes) * std::size_t(spec_.plane()) * sizeof(T);
    const bool nccl = s_.transport == Transport::Nccl;
    const bool ipc = s_.transport == Transport::Ipc;
    exchange_.clear();
    for (int i = 0; i < n; ++i) {
      char* dev = static_cast<char*>(grid_base(grids[i]));
      exchange_.push_back({dev + spec_.plane_start(0) * sizeof(T), dev + spec_.plane_start(p_.nz - planes) * sizeof(T),
                           dev + spec_.plane_start(-planes) * sizeof(T), dev + spec_.plane_start(p_.nz) * sizeof(T)});
    }
    exchange_bytes_ = bytes;
    TIERSIM_CUDA_CHECK(cudaEventRecord(filled_.get(), stream_), "halo exchange");
    TIERSIM_CUDA_CHECK(cudaStreamWaitEvent(comm_, filled_.get()), "halo exchange");
    comm_timer_.begin(nccl ? "halo_exchange_nccl" : ipc ? "halo_exchange_ipc" : "halo_exchange_mpi", strategy_);
    if (ipc) {
      TIERSIM_CUDA_CHECK(cudaStreamWaitEvent(comm_up_, filled_.get()), "halo exchange");
      std::vector<const void*> low, high;
      for (const ZHaloPlanes& z : exchange_) low.push_back(z.low), high.push_back(z.high);
      ipc_->send(low, high, bytes, comm_, comm_up_);
      // The exchange's record (on comm_) ends when both directions have.
      TIERSIM_CUDA_CHECK(cudaEventRecord(sent_up_.get(), comm_up_), "halo exchange");
      TIERSIM_CUDA_CHECK(cudaStreamWaitEvent(comm_, sent_up_.get()), "halo exchange");
      return;
    }
    if (nccl) {
#ifdef TIERSIM_HAVE_NCCL
      // Per peer, NCCL pairs sends and receives in the order they are posted: every rank posts
      // (to below, from above, to above, from below) per grid, so where one rank is both
      // neighbours (two ranks, periodic) its low planes still land in the other's high halo.
      ncclComm_t c = cuda::nccl_comm();
      cuda::nccl_check(ncclGroupStart(), "ncclGroupStart");
      for (const ZHaloPlanes& z : exchange_) {
        if (p_.rank_below >= 0)
          cuda::nccl_check(ncclSend(z.low, bytes, ncclChar, p_.rank_below, c, comm_), "ncclSend (halo planes down)");
        if (p_.rank_above >= 0)
          cuda::nccl_check(ncclRecv(z.high_halo, bytes, ncclChar, p_.rank_above, c, comm_),
                           "ncclRecv (halo from above)");
        if (p_.rank_above >= 0)
          cuda::nccl_check(ncclSend(z.high, bytes, ncclChar, p_.rank_above, c, comm_), "ncclSend (halo planes up)");
        if (p_.rank_below >= 0)
          cuda::nccl_check(ncclRecv(z.low_halo, bytes, ncclChar, p_.rank_below, c, comm_),
                           "ncclRecv (halo from below)");
      }
      cuda::nccl_check(ncclGroupEnd(), "ncclGroupEnd");
#else
      throw Error("--transport nccl: tiersim was built without NCCL");
#endif
      return;
    }
    // Per grid in the pinned buffer: [low out | high out | low halo in | high halo in].
    if (exchange_buf_.bytes() < 4 * std::size_t(n) * bytes) exchange_buf_ = HostBuffer(4 * std::size_t(n) * bytes);
    exchange_host_.clear();
    for (int i = 0; i < n; ++i) {
      char* host = exchange_buf_.as<char>() + 4 * std::size_t(i) * bytes;
      exchange_host_.push_back({host, host + bytes, host + 2 * bytes, host + 3 * bytes});
      if (p_.rank_below >= 0)
        TIERSIM_CUDA_CHECK(cudaMemcpyAsync(host, exchange_[std::size_t(i)].low, bytes, cudaMemcpyDeviceToHost, comm_),
                           "halo planes to the rank below");
      if (p_.rank_above >= 0)
        TIERSIM_CUDA_CHECK(
            cudaMemcpyAsync(host + bytes, exchange_[std::size_t(i)].high, bytes, cudaMemcpyDeviceToHost, comm_),
            "halo planes to the rank above");
    }
  }

  // Ends what start_exchange began (Mpi: the host waits for the planes, trades them over MPI and
  // queues the copies up; the GPU meanwhile runs what was queued since), then makes the engine's
  // stream wait for the halos: that wait is its own record (communication the kernels did not hide;
  // Ipc: with the copies from the staging into the halo planes).
  void finish_exchange() {
    const std::size_t bytes = exchange_bytes_;
    const int n = int(exchange_.size());
    if (s_.transport == Transport::Mpi) {
      TIERSIM_CUDA_CHECK(cudaStreamSynchronize(comm_), "halo planes to the neighbouring ranks");
      const std::vector<ZHaloPlanes>& host = exchange_host_;
      (void)exchange_z_halos(p_, host, bytes, strategy_);  // timed here on comm_'s events instead
      for (int i = 0; i < n; ++i) {
        if (p_.rank_below >= 0)
          TIERSIM_CUDA_CHECK(cudaMemcpyAsync(exchange_[std::size_t(i)].low_halo, host[std::size_t(i)].low_halo, bytes,
                                             cudaMemcpyHostToDevice, comm_),
                             "halo planes from the rank below");
        if (p_.rank_above >= 0)
          TIERSIM_CUDA_CHECK(cudaMemcpyAsync(exchange_[std::size_t(i)].high_halo, host[std::size_t(i)].high_halo, bytes,
                                             cudaMemcpyHostToDevice, comm_),
                             "halo planes from the rank above");
      }
    }
    KernelRecord& x = comm_timer_.end();
    x.bytes_compulsory = x.bytes_modelled = x.work = z_exchange_bytes(p_, exchange_.size(), bytes);
    x.work_unit = "bytes";
    x.communication = x.overlapped = true;
    TIERSIM_CUDA_CHECK(cudaEventRecord(exchanged_.get(), comm_), "halo exchange");
    timer_.begin("halo_exchange_wait", strategy_);
    TIERSIM_CUDA_CHECK(cudaStreamWaitEvent(stream_, exchanged_.get()), "waiting for the halo exchange");
    if (ipc_) {
      std::vector<void*> low_halo, high_halo;
      for (const ZHaloPlanes& z : exchange_) low_halo.push_back(z.low_halo), high_halo.push_back(z.high_halo);
      ipc_->receive(low_halo, high_halo, bytes, stream_);
    }
    KernelRecord& w = timer_.end();
    w.communication = true;
    w.work_unit = "bytes";
  }

  // The diagnostics' passes, recorded like every launch (a diagnostics step's cost is in the
  // telemetry and the kernels' time). Statistics of state field `field`, per block into `partials`:
  int launch_stats(int field, double* partials) {
    timer_.begin("stencil_stats_cuda", strategy_, true);
    const int blocks = cuda::launch_field_stats(views_[cur_[field]], partials, max_blocks_, stream_);
    const double n = double(p_.points());
    cost(timer_.end(), n * sizeof(T), n * sizeof(T), 4 * n, n);  // read once; sum, square, min, max
    return blocks;
  }
  // The wave's discrete energy, per block into `partials` (its u(t - dt) halo filled first);
  // 0 blocks for the other equations.
  int launch_wave_energy(double dt, double* partials) {
    if constexpr (std::is_same_v<Eq, equations::Wave>) {
      cuda::launch_halo_fill(views_[cur_[1]], p_.boundary, T(p_.field_boundary_value(1)), stream_, p_.local_z_sides());
      if (p_.z_split()) start_exchange(&cur_[1], 1), finish_exchange();
      const double c = p_.template constants<Eq>().speed;
      timer_.begin("stencil_wave_energy_cuda", strategy_, true);
      const int blocks = cuda::launch_wave_energy(views_[cur_[0]], views_[cur_[1]], coeffs_dev_, c * c, 1 / dt,
                                                  partials, max_blocks_, stream_);
      const double n = double(p_.points());
      // u and u(t - dt) read once; the Laplacian (1 + 6R) and the energy density (6) per point.
      cost(timer_.end(), 2 * n * sizeof(T), 2 * n * sizeof(T), (7.0 + 6.0 * p_.radius) * n, n);
      return blocks;
    } else {
      (void)dt, (void)partials;
      return 0;
    }
  }
  static double sum_energy(const double* partials, int blocks) {
    double e = 0;
    for (int b = 0; b < blocks; ++b) e += partials[b];
    return e;
  }
  // A field's statistics from its blocks' partials (kFieldStatsPartials each, in the kernel's order).
  static FieldStats sum_stats(const double* partials, int blocks) {
    FieldStats st{0, 0, std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
    double bad = 0, first = std::numeric_limits<double>::infinity();
    for (int b = 0; b < blocks; ++b) {
      const double* p = partials + std::size_t(b) * cuda::kFieldStatsPartials;
      st.sum += p[0], st.sum_sq += p[1];
      st.min = std::min(st.min, p[2]), st.max = std::max(st.max, p[3]);
      bad += p[4], first = std::min(first, p[5]);
    }
    st.non_finite = std::int64_t(bad);
    st.first_non_finite = st.non_finite > 0 ? std::int64_t(first) : -1;
    return st;
  }

  std::vector<double> fetch_partials(std::size_t count) {
    std::vector<double> h(count);
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
  bool temporal_ = s_.tiling == Tiling::Temporal;
  int fused_ = 1;  // --tiling temporal: steps per pass
  GridSpec<T> spec_;
  std::uint64_t id_;
  int sm_count_ = 1, cc_major_ = 0, max_blocks_ = 1;
  std::size_t l2_bytes_ = 0;
  bool fixed_halos_ready_ = false;  // Boundary::Fixed: every grid's halo holds its value
  // --tiling temporal: a single step after a pass launches no halo fill (prepare_kernels; advance).
  bool single_fills_nothing_ = false;
  bool x_halos_current_ = false;   // Boundary::Periodic: the fields' rows' x halos hold their images
  bool x_images_written_ = false;  // this step's update launches all wrote them
  bool wraps_built_ = false;       // the whole grid's update kernel reads wrapped z planes (StencilLaunch::wraps)
  bool x_read_wrapped_ = false;    // this step's update launches all read the x ends wrapped (StencilLaunch::xwraps)
  bool y_read_wrapped_ = false;    // ... and the y ends
  // Changes of the state (steps, uploads, the source): the statistics of the current one are kept.
  std::uint64_t state_version_ = 1;
  std::vector<std::pair<std::uint64_t, FieldStats>> stats_cache_ =
      std::vector<std::pair<std::uint64_t, FieldStats>>(std::size_t(kStateFields), {0, FieldStats{}});
  std::size_t grid_stride_ = 0, coeff_slot_ = 0;
  std::size_t zpad_bytes_ = 0;  // a split grid under --tiling temporal: (T - 1) R planes of deeper z halo
  cuda::DeviceBuffer arena_;    // [group A | coefficients | group B]
  std::vector<GridView<T>> views_;
  std::vector<int> cur_, nxt_;
  StencilCoeffs<T> coeffs_;
  StencilCoeffs<T>* coeffs_dev_ = nullptr;  // inside the arena
  cuda::DeviceBuffer partials_;
  cuda::DeviceBuffer queued_dev_;           // queue_reductions: every field's partials and the energy's
  HostBuffer queued_host_;                  // their pinned copy
  HostBuffer exchange_buf_;                 // Mpi: pinned, the halo planes on their way to and from other ranks
  std::vector<ZHaloPlanes> exchange_;       // the exchange in flight: device planes of each grid
  std::vector<ZHaloPlanes> exchange_host_;  // Mpi: their copies in exchange_buf_
  std::size_t exchange_bytes_ = 0;          // of each block of R planes
  StencilL2Target policy_ = resolve(s_.tuning.l2_target);
  std::string strategy_ = strategy_name();
  // The update kernel's NVTX name before launch (the driver adds the tuning suffix to the record).
  std::string update_name_ =
      std::string("stencil_") + Eq::kKernelTag + "_" + name(s_.tiling) + "_r" + std::to_string(p_.radius);
  // A blocking stream (the engine's launches), then the window and timer that use it; destroyed
  // in reverse order.
  cuda::OwnedStream owned_stream_{cudaStreamDefault};
  cudaStream_t stream_ = owned_stream_.get();
  cuda::L2Window l2_{stream_, s_.l2_persist, s_.l2_persist_bytes, hot_bytes_max(), "the stencil fields", s_.tuning};
  cuda::LaunchTimer timer_{stream_, &l2_, s_.tuning};
  cuda::Stager stager_{stream_};
  std::unique_ptr<cuda::PlaneUploader> uploader_;  // upload's buffers, page-locked with the engine
  // The halo exchange's stream (several ranks), at the device's highest priority so that its
  // transfers get SMs beside a running update; its records; the events that order it.
  cuda::OwnedStream owned_comm_{cudaStreamNonBlocking, cuda::OwnedStream::Priority::Highest};
  cudaStream_t comm_ = owned_comm_.get();
  cuda::LaunchTimer comm_timer_{comm_, nullptr, s_.tuning};
  cuda::OwnedEvent filled_, exchanged_, queued_;
  // Ipc: the copies up on a stream of their own; the event that joins it back to comm_; the staging.
  cuda::OwnedStream owned_comm_up_{cudaStreamNonBlocking, cuda::OwnedStream::Priority::Highest};
  cudaStream_t comm_up_ = owned_comm_up_.get();
  cuda::OwnedEvent sent_up_;
  std::unique_ptr<cuda::IpcExchange> ipc_;
  // prepare_kernels on its thread; declared last, so destroyed (waited for) first.
  std::future<void> prepared_;
};

}  // namespace

std::unique_ptr<StencilEngine> make_stencil_cuda(const Strategy& s, const StencilProblem& p, const StencilTuning& t) {
  return with_equation(p.equation, [&](auto eq) -> std::unique_ptr<StencilEngine> {
    using Eq = decltype(eq);
    if (s.precision == Precision::Fp64) return std::make_unique<StencilCuda<double, Eq>>(s, p, t);
    return std::make_unique<StencilCuda<float, Eq>>(s, p, t);
  });
}

}  // namespace tiersim
