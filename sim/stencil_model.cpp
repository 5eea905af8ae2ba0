// The stencil model: a 3D grid with halos and one of the listed equations
// (kernels/physics/equations.hpp), advanced by a backend engine (CPU reference or CUDA kernels).
// One model class per equation: its fields, observables, limit and names come from the
// equation's traits; its initial state from sim/stencil_initial.cpp.
//
// Under several ranks (base/comm.hpp) each rank holds a slab of z planes (kernels/halo_exchange.hpp:
// its engine works on the slab as on a grid of its own, the halo's z pass comes from the
// neighbours); the state is the same, value for value, as on one rank, since the point update
// reads only the point and its neighbours. The initial state is made for the whole grid on every
// rank (random initial conditions stay those of one rank); the statistics are reduced over the
// ranks, and outputs gathered on rank 0.
#include <algorithm>
#include <cmath>
#include <functional>
#include <cstdio>
#include <limits>
#include <optional>
#include <sstream>

#include "base/comm.hpp"
#include "base/host_memory.hpp"
#include "io/checkpoint.hpp"
#include "io/snapshots.hpp"
#include "kernels/halo_exchange.hpp"
#include "kernels/staging.hpp"
#include "kernels/stencil_engine.hpp"
#include "sim/model.hpp"
#include "sim/stencil_initial.hpp"

namespace tiersim {
namespace {

StencilProblem problem_from_case(const Case& c) {
  StencilProblem p;
  p.equation = parse_equation(c.get_string("stencil.equation"));
  const int n = int(c.get_int("grid.n"));
  p.nx = c.get_int("grid.nx") > 0 ? int(c.get_int("grid.nx")) : n;
  p.ny = c.get_int("grid.ny") > 0 ? int(c.get_int("grid.ny")) : n;
  p.nz = c.get_int("grid.nz") > 0 ? int(c.get_int("grid.nz")) : n;
  p.radius = int(c.get_int("grid.radius"));
  p.h[0] = c.get_float("grid.length") / p.nx;
  p.h[1] = c.get_float("grid.hy") > 0 ? c.get_float("grid.hy") : p.h[0];
  p.h[2] = c.get_float("grid.hz") > 0 ? c.get_float("grid.hz") : p.h[0];
  p.boundary = c.get_string("grid.boundary") == "fixed" ? Boundary::Fixed : Boundary::Periodic;
  p.boundary_value = c.get_float("grid.boundary_value");
  // Every equation's constants from its keys (each key names the member it sets).
  StencilEquations::for_each([&](auto eq) {
    using Eq = decltype(eq);
    for (const auto& k : Eq::kKeys)
      if (k.constant) p.constants<Eq>().*k.constant = c.get_float(k.key);
  });
  with_equation(p.equation, [&](auto eq) {
    using Eq = decltype(eq);
    if (Eq::kOwnBoundaryKeys && p.boundary == Boundary::Fixed && p.boundary_value != 0)
      throw Error("grid.boundary_value = " + format_g(p.boundary_value) + " does not apply to " + Eq::kName +
                  ": its fixed boundaries hold " + Eq::kOwnBoundaryKeys);
  });
  return p;
}

// The statistics of the whole grid from each rank's of its slab (collective; one rank: `st`):
// the first non-finite value's index is global (the slab's plus `offset`, the points below it),
// the smallest over the ranks that have one.
FieldStats reduce_stats(const FieldStats& st, std::int64_t offset) {
  FieldStats g;
  double sums[2] = {st.sum, st.sum_sq};
  comm::sum(sums, 2);
  g.sum = sums[0], g.sum_sq = sums[1];
  g.min = comm::min(st.min);
  g.max = comm::max(st.max);
  g.non_finite = comm::sum(st.non_finite);
  constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::max();
  const std::int64_t first = comm::min(st.first_non_finite >= 0 ? st.first_non_finite + offset : kNone);
  g.first_non_finite = first == kNone ? -1 : first;
  return g;
}

// A stencil model's staged output: each field's interior in the run's precision.
struct StagedFields final : StagedOutput {
  std::int64_t step = 0;
  double time = 0;
  GridGeometry geometry;
  std::vector<std::string> names;  // the snapshot's fields
  bool fp64 = false;
  std::size_t points = 0;
  std::vector<HostBuffer> buffers;  // one per field the engine holds
  std::vector<std::unique_ptr<CopyInFlight>> copies;
  std::vector<std::pair<std::string, double>> scalars;
  // Staged in parts: this rank's slab (its first value's index in the grid), and every rank's
  // first plane and planes (rank 0 names them all).
  bool in_parts = false;
  std::int64_t first = 0;
  std::vector<std::int64_t> first_plane, planes;

  std::vector<KernelRecord> wait() override {
    std::vector<KernelRecord> recs;
    for (auto& c : copies) {
      c->wait();
      if (KernelRecord r = c->record(); !r.kernel.empty()) recs.push_back(std::move(r));
    }
    return recs;
  }
  static std::string array_name(std::size_t f) { return "field" + std::to_string(f); }
  void write_snapshot(SnapshotFile& out) const override {
    for (std::size_t f = 0; f < names.size(); ++f) {
      if (in_parts)
        out.write_field_parts(step, time, names[f], geometry, {array_name(f), first_plane, planes, fp64});
      else if (fp64)
        out.write_field(step, time, names[f], geometry, buffers[f].as<double>());
      else
        out.write_field(step, time, names[f], geometry, buffers[f].as<float>());
    }
  }
  ModelState state() const override {
    ModelState st;
    st.scalars = scalars;
    if (in_parts) {
      // The parts every rank wrote: the checkpoint names them.
      const std::int64_t plane = std::int64_t(geometry.nx) * geometry.ny;
      std::vector<std::int64_t> at, count;
      for (std::size_t r = 0; r < planes.size(); ++r)
        at.push_back(first_plane[r] * plane), count.push_back(planes[r] * plane);
      for (std::size_t f = 0; f < buffers.size(); ++f) st.in_parts.push_back({array_name(f), step, at, count, fp64});
      return st;
    }
    // In the run's precision (an fp32 checkpoint holds floats: half the bytes to write), written
    // from the staging buffers, which live as long as this output.
    for (std::size_t f = 0; f < buffers.size(); ++f)
      st.borrowed.push_back({array_name(f), buffers[f].data(), points, fp64});
    return st;
  }
  std::vector<StatePartArray> part(std::int64_t& at, bool whole_state) const override {
    at = first;
    std::vector<StatePartArray> v;
    if (in_parts)
      for (std::size_t f = 0; f < (whole_state ? buffers.size() : names.size()); ++f)
        v.push_back({array_name(f), buffers[f].data(), points, fp64});
    return v;
  }
  double bytes() const override {
    double b = 0;
    for (const auto& h : buffers) b += double(h.bytes());
    return b;
  }
};

template <class Eq>
class StencilModel final : public Model {
  static constexpr int kFields = Eq::kFields;
  static constexpr int kStateFields = int(Eq::kStateNames.size());

 public:
  // p: the whole grid; the engine gets this rank's slab of it.
  StencilModel(const Case& c, Strategy s, const StencilProblem& p, ModelSetup setup)
      : s_(s),
        g_(p),
        p_(z_slab(p, comm::rank(), comm::size())),
        dt_(c.get_float("run.dt")),
        output_slots_(c.get_int("run.output_slots") > 0 ? int(c.get_int("run.output_slots")) : 2) {
    const int n[3] = {g_.nx, g_.ny, g_.nz};
    for (int a = 0; a < 3; ++a)
      if (g_.boundary == Boundary::Periodic && n[a] < g_.radius)
        throw Error("grid: periodic boundaries need at least grid.radius = " + std::to_string(g_.radius) +
                    " points on every axis (axis " + "xyz"[a] + " has " + std::to_string(n[a]) + ")");
    const double limit = stencil_dt_limit(p_);
    if (dt_ > limit) {
      const std::string why = "run.dt = " + format_g(dt_) + " exceeds the explicit stability limit " + format_g(limit) +
                              " (" + stencil_stability_rule(p_) + ", rho = |Laplacian| max = " +
                              format_g(laplacian_spectral_radius(p_.radius, p_.h[0], p_.h[1], p_.h[2])) +
                              " for R = " + std::to_string(p_.radius) + ")";
      if (!c.get_bool("stencil.force")) throw Error(why + "; lower run.dt or set stencil.force = true");
      forced_ = why;
    }
    if (s_.backend == Backend::Auto) s_.backend = resolve_backend(s_.backend);
    check_host_memory(host_bytes(c), "a " + std::to_string(g_.nx) + "x" + std::to_string(g_.ny) + "x" +
                                         std::to_string(g_.nz) + " " + Eq::kName + " run (" +
                                         tiersim::name(s_.precision) + ", " + tiersim::name(s_.backend) +
                                         "; initial state, engine grids, staged outputs)");
    StencilTuning tuning;
    tuning.temporal_steps = int(c.get_int("stencil.temporal_steps"));
    eng_ = s_.backend == Backend::Cuda ? make_stencil_cuda(s_, p_, tuning) : make_stencil_cpu(s_, p_);
    startup_.part("device and engine");
    // The staging buffers of the outputs in flight (stage_output) are page-locked behind the
    // initial state, on a thread of their own: about 0.06 s per GB.
    if (setup.output) {
      const std::size_t scalar = s_.precision == Precision::Fp64 ? sizeof(double) : sizeof(float);
      // A run's outputs are staged in parts: each rank its slab.
      reserve_host_buffers_behind(std::size_t(p_.points()) * scalar, kStateFields * (output_slots_ + 1));
      reserved_ = true;
    }
    source_ = point_source(c, g_);
    if (!setup.restart) {  // a restart's fields come from load_state
      // This rank's planes only (the same values as the whole grid's there).
      InitialState init = initial_state(c, g_, dt_, p_.z0, p_.nz);
      startup_.part("initial state");
      // On a GPU the first upload waits for the kernels' set-up (make_stencil_cuda starts it).
      for (int f = 0; f < kStateFields; ++f) eng_->upload(f, init.fields[std::size_t(f)]);
      init = {};  // the host copy freed within the upload's part
      startup_.part("state uploaded");
    }
    // Once the run can start (an error before it stays the one line `main` prints).
    if (!forced_.empty())
      std::fprintf(stderr, "tiersim: warning: %s; running anyway (stencil.force = true)\n", forced_.c_str());
    std::ostringstream d;
    d << g_.nx << "x" << g_.ny << "x" << g_.nz << " grid, R = " << g_.radius << " (order " << 2 * g_.radius << "), "
      << (g_.boundary == Boundary::Periodic ? "periodic" : "fixed") << ", " << Eq::kName;
    if (comm::size() > 1) d << ", " << comm::size() << " ranks (z slabs, " << tiersim::name(s_.transport) << ")";
    if (s_.backend == Backend::Cuda && s_.tiling == Tiling::Temporal) {
      const int fused = eng_->fused_steps();
      if (fused > 0)
        d << ", " << fused << (fused == 1 ? " step" : " steps") << " a temporal pass";
      else
        d << ", single steps (a temporal pass would not beat them on this GPU; stencil.temporal_steps asks for one)";
    }
    describe_ = d.str();
  }

  // Host memory this rank takes at its peak, before anything is allocated: the initial state in
  // double (this rank's planes, or the whole grid's and a slab cut from it where it must be made
  // whole: sim/stencil_initial.hpp), the CPU engine's grids of the slab (halos included) or the
  // CUDA upload's two buffers (kUploadBufferBytes, a plane at least: kernels/staging.hpp), and the
  // staged outputs: on rank 0 run.output_slots of them (2 when sized from memory) and the one
  // being staged, every array of the whole grid's state in the run's precision; on the other ranks
  // one copy of their slab's, gathered at once.
  double host_bytes(const Case& c) const {
    const double points = double(g_.points()), slab = double(p_.points());
    const double scalar = s_.precision == Precision::Fp64 ? 8.0 : 4.0;
    const double grid = double(p_.nx + 2 * p_.radius) * (p_.ny + 2 * p_.radius) * (p_.nz + 2 * p_.radius) * scalar;
    const double slots = double(std::max<std::int64_t>(2, c.get_int("run.output_slots")));
    const double plane = double(p_.nx + 2 * p_.radius) * (p_.ny + 2 * p_.radius) * scalar;
    const double engine = s_.backend == Backend::Cuda ? 2 * std::max(double(kUploadBufferBytes), plane)
                                                      : double(kStateFields + kFields) * grid;
    const bool whole = p_.z_split() && initial_state_needs_whole_grid(c, g_.equation);
    const double initial = whole ? 8.0 * (kStateFields * points + slab) : 8.0 * kStateFields * slab;
    const double staged = comm::is_root() ? (slots + 1) * kStateFields * points * scalar : kStateFields * slab * scalar;
    return initial + engine + staged;
  }

  std::string name() const override { return std::string("stencil/") + Eq::kName; }
  std::string strategy_name() const override { return eng_->strategy_name(); }
  std::string describe() const override { return describe_; }
  StartupParts startup_parts() const override { return startup_.parts(); }

  void step(double dt) override {
    dt_ = dt;
    eng_->step(dt);
    // On the rank whose slab holds the source's plane.
    if (source_ && source_->at[2] >= p_.z0 && source_->at[2] < p_.z0 + p_.nz) {
      // u_tt = c^2 lap u + s(t) delta(x - x_s): leapfrog adds dt^2 s(t_n) / cell volume.
      const double vol = p_.h[0] * p_.h[1] * p_.h[2];
      eng_->add_point_value(source_->at[0], source_->at[1], source_->at[2] - p_.z0,
                            source_->amplitude * ricker(time_, source_->frequency, source_->delay) * dt * dt / vol);
    }
    time_ += dt;
  }

  std::int64_t advance(double dt, std::int64_t max_steps) override {
    // The point source is added between steps: one step at a time while it still adds anything.
    // Past its peak the wavelet decays to exactly 0 (exp underflows) and stays there, and adding
    // 0 changes no value, so from then on steps may be fused.
    if (source_ && (time_ <= source_->delay || ricker(time_, source_->frequency, source_->delay) != 0.0)) {
      step(dt);
      return 1;
    }
    dt_ = dt;
    const int n = eng_->advance(dt, int(std::min<std::int64_t>(max_steps, 1 << 20)));
    for (int i = 0; i < n; ++i) time_ += dt;  // as n single steps add it
    return n;
  }

  Observables observe() override {
    queue_observation();
    return take_observation().values;
  }

  // The reductions queued on the engine behind the steps (on the GPU: kernels, a small copy and
  // an event), read back by take_observation.
  void queue_observation() override {
    queued_reductions_ = eng_->queue_reductions(std::is_same_v<Eq, equations::Wave>, dt_);
  }

  bool queues_observations() const override { return true; }
  void await_observation() override {
    if (!queued_reductions_) return;
    taken_ = queued_reductions_();
    queued_reductions_ = nullptr;
  }

  Observation take_observation() override {
    await_observation();
    if (!taken_) throw Error("stencil: no observation queued");
    const StencilEngine::Reductions r = std::move(*taken_);
    taken_.reset();
    std::vector<FieldStats> global;
    for (const FieldStats& st : r.stats) global.push_back(reduce_stats(st, slab_offset()));
    const double energy = comm::sum(r.wave_energy);
    // What an equation's observe() reads (kernels/physics/equation.hpp): the whole grid's figures.
    struct Probe {
      const std::vector<FieldStats>& st;
      const StencilProblem& global;
      double energy;
      FieldStats stats(int field) const { return st[std::size_t(field)]; }
      double cell_volume() const { return global.h[0] * global.h[1] * global.h[2]; }
      double points() const { return double(global.points()); }
      double wave_energy() const { return energy; }
    } probe{global, g_, energy};
    Observation o;
    o.values = Eq::observe(probe);
    if (!have_q0_) q0_ = o.values[std::size_t(Eq::kHeadline.observable)].second, have_q0_ = true;
    for (int f = 0; f < kStateFields; ++f)
      if (global[std::size_t(f)].non_finite > 0)
        o.non_finite.push_back(
            {Eq::kStateNames[std::size_t(f)], update_kernel(), global[std::size_t(f)].first_non_finite});
    return o;
  }

  std::pair<std::string, double> conservation(const Observables& now) const override {
    constexpr Headline h = Eq::kHeadline;
    const double q = now[std::size_t(h.observable)].second;
    if (!h.relative) return {h.label, q};
    if (q0_ == 0) return {h.absolute_label, q};
    return {h.label, (q - q0_) / std::fabs(q0_)};
  }

  // Under several ranks, in parts: every rank stages its slab (the copies issued, nothing
  // exchanged) and writes it to a part file of its own, which rank 0's files name. Otherwise
  // collective: rank 0 gets the whole grid's state (its slab staged into the start of each
  // buffer, the other ranks' gathered after it in rank order, which is z order), the other ranks
  // stage their slab, hand it over and get nullptr. The gather waits for the copies: only the
  // main thread talks to the other ranks (base/comm.hpp), not the output thread.
  bool gathers_whole_state() const override { return false; }
  std::unique_ptr<StagedOutput> stage_output(std::int64_t step, double time, bool in_parts) override {
    const bool fp64 = s_.precision == Precision::Fp64;
    const std::size_t scalar = fp64 ? sizeof(double) : sizeof(float);
    const std::size_t slab_bytes = std::size_t(p_.points()) * scalar;
    const bool parts = in_parts;
    if (!comm::is_root() && !parts) {
      if (!reserved_) reserve_host_buffers(slab_bytes, kStateFields), reserved_ = true;
      std::vector<HostBuffer> buffers;
      std::vector<std::unique_ptr<CopyInFlight>> copies;
      for (int f = 0; f < kStateFields; ++f) {
        buffers.emplace_back(slab_bytes);
        copies.push_back(eng_->stage(f, buffers.back().data()));
      }
      for (int f = 0; f < kStateFields; ++f) {
        copies[std::size_t(f)]->wait();
        if (KernelRecord r = copies[std::size_t(f)]->record(); !r.kernel.empty()) staged_records_.push_back(r);
        comm::gather(buffers[std::size_t(f)].data(), slab_bytes, nullptr);
      }
      return nullptr;
    }
    // Up to run.output_slots outputs wait for the writer while the next is staged: the buffers
    // of all of them are pinned in start-up (behind the initial state, or here at the first
    // output), not on a later output's step (page-locking takes about 0.06 s per GB). With slots
    // sized from memory, those of the default.
    const std::size_t field_bytes = std::size_t(parts ? p_.points() : g_.points()) * scalar;
    if (!reserved_) reserve_host_buffers(field_bytes, kStateFields * (output_slots_ + 1)), reserved_ = true;
    auto staged = std::make_unique<StagedFields>();
    if (parts) {
      staged->in_parts = true;
      staged->first = std::int64_t(p_.z0) * g_.nx * g_.ny;
      for (int r = 0; r < comm::size(); ++r) {
        const StencilProblem s = z_slab(g_, r, comm::size());
        staged->first_plane.push_back(s.z0), staged->planes.push_back(s.nz);
      }
    }
    staged->step = step, staged->time = time;
    staged->geometry.nx = g_.nx, staged->geometry.ny = g_.ny, staged->geometry.nz = g_.nz;
    for (int a = 0; a < 3; ++a) staged->geometry.spacing[a] = g_.h[a];
    for (int f = 0; f < kFields; ++f)
      staged->names.emplace_back(Eq::kStateNames[std::size_t(f)]);  // not the previous level
    staged->fp64 = fp64;
    staged->points = std::size_t(parts ? p_.points() : g_.points());
    staged->scalars = {{"time", time_}, {"q0", q0_}, {"has_q0", have_q0_ ? 1.0 : 0.0}};
    // Every field the engine holds (the wave equation's previous level too) for the checkpoint;
    // the snapshot writes the first names.size() of them.
    for (int f = 0; f < kStateFields; ++f) {
      staged->buffers.emplace_back(staged->points * scalar);
      staged->copies.push_back(eng_->stage(f, staged->buffers.back().data()));
    }
    if (p_.z_split() && !parts)
      for (int f = 0; f < kStateFields; ++f) {
        staged->copies[std::size_t(f)]->wait();  // wait() again on the output thread returns at once
        void* buffer = staged->buffers[std::size_t(f)].data();
        comm::gather(buffer, slab_bytes, buffer);
      }
    return staged;
  }

  std::vector<KernelRecord> take_records(bool wait) override {
    std::vector<KernelRecord> recs = eng_->take_records(wait);
    for (const auto& r : recs)
      if (!r.kernel.starts_with("stencil_halo") && !r.communication && !r.kernel.ends_with("_zfaces"))
        update_kernel_ = r.kernel;
    // The copies of the outputs this rank handed to rank 0 (whose own come with its StagedOutput).
    for (auto& r : staged_records_) recs.push_back(std::move(r));
    staged_records_.clear();
    return recs;
  }

  // `st` holds the whole grid's state (on every rank): each rank takes its slab.
  void load_state(const ModelState& st) override {
    const std::string grid =
        "a " + std::to_string(g_.nx) + "x" + std::to_string(g_.ny) + "x" + std::to_string(g_.nz) + " grid";
    std::vector<const HostArray<double>*> fields;
    for (int f = 0; f < kStateFields; ++f)
      fields.push_back(&checked_state_array(st, "field" + std::to_string(f), std::size_t(g_.points()), grid));
    const double time = checked_state_scalar(st, "time"), q0 = checked_state_scalar(st, "q0");
    const bool have_q0 = checked_state_scalar(st, "has_q0") != 0;
    for (int f = 0; f < kStateFields; ++f) upload_slab(f, *fields[std::size_t(f)]);
    time_ = time;
    q0_ = q0;
    have_q0_ = have_q0;
  }

  // Arrays named as in the snapshots (u; U, V; the wave's previous level u_prev), each written by
  // the update kernel. From the engine's reduction over each array (on the device with CUDA):
  // the count of non-finite values and the first one's index come back, not the array; reduced
  // over the ranks (collective: the whole grid's, an index in it, the same on every rank).
  std::vector<NonFinite> find_non_finite() override {
    std::vector<NonFinite> out;
    for (int f = 0; f < kStateFields; ++f) {
      const FieldStats st = reduce_stats(eng_->stats(f), slab_offset());
      if (st.non_finite > 0) out.push_back({Eq::kStateNames[std::size_t(f)], update_kernel(), st.first_non_finite});
    }
    return out;
  }

  // The update kernel's telemetry name: as the engine last recorded it (CUDA's depends on the
  // tiling, radius and tuning), or before the first step the name the engine gives it.
  std::string update_kernel() const {
    if (!update_kernel_.empty()) return update_kernel_;
    return std::string("stencil_") + Eq::kKernelTag + "_" +
           (s_.backend == Backend::Cuda ? std::string(tiersim::name(s_.tiling)) + "_r" + std::to_string(p_.radius)
                                        : std::string("cpu"));
  }

  // `index` is in the whole grid: the rank whose slab holds it changes it.
  void inject_nan(std::int64_t index) override {
    const std::int64_t at = index % g_.points() - slab_offset();
    if (at < 0 || at >= p_.points()) return;
    std::vector<double> v = eng_->download(0);
    v[std::size_t(at)] = std::nan("");
    eng_->upload(0, v);
  }

 private:
  // Points of the whole grid below this rank's slab (0 on one rank).
  std::int64_t slab_offset() const { return std::int64_t(p_.z0) * p_.nx * p_.ny; }

  // Uploads this rank's slab of an array of the whole grid (on one rank: the array).
  void upload_slab(int field, const HostArray<double>& global) {
    if (!p_.z_split()) return eng_->upload(field, global);
    eng_->upload(field, global.data() + slab_offset(), std::size_t(p_.points()));
  }

  Strategy s_;
  StencilProblem g_;  // the whole grid
  StencilProblem p_;  // this rank's slab of it (the engine's problem)
  double dt_;
  std::unique_ptr<StencilEngine> eng_;
  std::string describe_;
  StartupClock startup_;  // the constructor's parts
  std::string forced_;    // why dt is above the limit, when stencil.force let it through
  double time_ = 0;
  std::optional<PointSource> source_;
  bool reserved_ = false;  // staging buffers of the outputs in flight pinned
  int output_slots_ = 2;   // run.output_slots (2 where sized from memory)
  bool have_q0_ = false;
  double q0_ = 0;
  std::function<StencilEngine::Reductions()> queued_reductions_;  // queue_observation's, not yet awaited
  std::optional<StencilEngine::Reductions> taken_;                // awaited, not yet taken
  std::string update_kernel_;                                     // as last recorded (take_records)
  std::vector<KernelRecord> staged_records_;                      // copies of outputs gathered on rank 0 (other ranks)
};

}  // namespace

std::unique_ptr<Model> make_stencil_model(const Case& c, const Strategy& s, ModelSetup setup) {
  if (c.get_string("run.model") != "stencil") throw Error("make_stencil_model: run.model is not stencil");
  const StencilProblem p = problem_from_case(c);
  return with_equation(p.equation, [&](auto eq) -> std::unique_ptr<Model> {
    return std::make_unique<StencilModel<decltype(eq)>>(c, s, p, setup);
  });
}

}  // namespace tiersim
