// The N-body model: initial conditions, leapfrog kick-drift-kick over a backend engine,
// diagnostics and snapshots.
//
// Under several ranks (base/comm.hpp) each rank owns a range of the bodies (BodyPartition):
// every rank makes the same initial conditions and holds all positions and masses; its engine
// moves the owned bodies, and the owned positions go to every rank after each drift. Each
// body's force is summed over j as with one rank, so the state is that of one rank, bit for bit
// on the CPU; the diagnostics are the ranks' sums added (comm::sum), equal to one rank's to
// rounding.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "base/comm.hpp"
#include "io/checkpoint.hpp"
#include "io/snapshots.hpp"
#include "kernels/kernel_timing.hpp"
#include "kernels/nbody_engine.hpp"
#include "base/host_memory.hpp"
#include "sim/initial_conditions.hpp"
#include "sim/model.hpp"

namespace tiersim {
namespace {

Bodies initial_bodies(const Case& c, int n) {
  const std::string ic = c.get_string("nbody.ic");
  const double M = c.get_float("nbody.total_mass"), R = c.get_float("nbody.radius"), G = c.get_float("nbody.G");
  const auto seed = static_cast<std::uint64_t>(c.get_int("run.seed"));
  if (ic == "plummer") return make_plummer(n, M, R, G, seed);
  if (ic == "uniform") return make_uniform_sphere(n, M, R, seed);
  if (ic == "collision") {
    if (n < 2)
      throw Error(c.source_name() + ": nbody.count: " + std::to_string(n) +
                  " is too few for nbody.ic = \"collision\" (two clusters need at least 2 bodies)");
    return make_collision(n, M, R, G, c.get_float("collision.separation"), c.get_float("collision.impact_parameter"),
                          c.get_float("collision.velocity"), c.get_float("collision.mass_ratio"), seed);
  }
  if (ic == "kepler") {
    if (n != 2)
      throw Error(c.source_name() + ": nbody.count: the kepler binary has 2 bodies, not " + std::to_string(n));
    return make_kepler_binary(M, G, c.get_float("kepler.period"), c.get_float("kepler.eccentricity"),
                              c.get_float("kepler.mass_ratio"));
  }
  return make_disk_galaxy(n, M, R, G, c.get_float("nbody.softening"), c.get_float("galaxy.bulge_fraction"),
                          c.get_float("galaxy.thickness"), c.get_float("galaxy.dispersion"), seed);
}

std::string ic_description(const std::string& ic) {
  if (ic == "plummer") return "Plummer sphere";
  if (ic == "uniform") return "cold uniform sphere";
  if (ic == "collision") return "two-cluster collision";
  if (ic == "kepler") return "Kepler binary";
  return "rotating disk galaxy";
}

// The edge of the cubic box that holds every body (H5MD's box of an open system).
double box_edge(const Bodies& b) {
  double extent = 0;
  for (const auto& p : b.pos) extent = std::max({extent, std::fabs(p.x), std::fabs(p.y), std::fabs(p.z)});
  return 2 * extent;
}

// An N-body model's staged output: the bodies, downloaded. Whole (in double precision on the host,
// gathered on rank 0), or in parts: each rank's own bodies in the run's precision (exact: the
// engine holds them so), the arrays of its part file (io/state_parts.hpp).
struct StagedBodies final : StagedOutput {
  std::int64_t step = 0;
  double time = 0;
  Bodies bodies;
  std::vector<std::pair<std::string, double>> scalars;

  // In parts: this rank's bodies [first, last) (taken from `bodies` on the output thread, by
  // wait()), every rank's range, and rank 0's box edge.
  struct PartArray {
    std::string name;
    int per_body = 1;
    std::vector<double> f64;
    std::vector<float> f32;
  };
  bool in_parts = false, fp64 = false, root = false;
  std::int64_t first = 0, last = 0;
  std::vector<PartArray> arrays;  // position, velocity, acceleration, mass
  std::vector<std::int64_t> firsts, counts;
  double edge = 0;

  std::vector<KernelRecord> wait() override {
    if (in_parts && arrays.empty()) take_part();
    return {};
  }
  void take_part() {
    if (root) edge = box_edge(bodies);  // every rank holds every position
    const std::size_t lo = std::size_t(first), owned = std::size_t(last - first);
    auto add = [&](const char* name, int per_body, auto value) {
      PartArray a{name, per_body, {}, {}};
      const std::size_t k = std::size_t(per_body);
      std::vector<double> all(k * owned);
      for (std::size_t i = 0; i < owned; ++i) value(lo + i, &all[k * i]);
      if (fp64)
        a.f64 = std::move(all);
      else
        a.f32.assign(all.begin(), all.end());  // exact: the engine's values are floats
      arrays.push_back(std::move(a));
    };
    auto vec = [](const std::vector<Vec3<double>>& x) {
      return [&x](std::size_t i, double* o) { o[0] = x[i].x, o[1] = x[i].y, o[2] = x[i].z; };
    };
    add("position", 3, vec(bodies.pos));
    add("velocity", 3, vec(bodies.vel));
    add("acceleration", 3, vec(bodies.acc));
    add("mass", 1, [&](std::size_t i, double* o) { *o = bodies.mass[i]; });
    bodies = {};
  }
  void write_snapshot(SnapshotFile& out) const override {
    if (in_parts)
      out.write_particles_parts(step, time, {firsts, counts, fp64, edge});
    else
      out.write_particles(step, time, bodies, box_edge(bodies));
  }
  ModelState state() const override {
    ModelState s;
    if (in_parts) {
      // The parts every rank wrote: the checkpoint names them (flat arrays, per_body values a body).
      for (const PartArray& a : arrays) {
        std::vector<std::int64_t> at, count;
        for (std::size_t r = 0; r < firsts.size(); ++r)
          at.push_back(firsts[r] * a.per_body), count.push_back(counts[r] * a.per_body);
        s.in_parts.push_back({a.name, step, at, count, fp64});
      }
      s.scalars = scalars;
      return s;
    }
    auto flat = [&](const std::vector<Vec3<double>>& v) {
      HostArray<double> out(3 * v.size());
      for (std::size_t i = 0; i < v.size(); ++i) out[3 * i] = v[i].x, out[3 * i + 1] = v[i].y, out[3 * i + 2] = v[i].z;
      return out;
    };
    const Bodies& b = bodies;
    s.arrays = {{"position", flat(b.pos)},
                {"velocity", flat(b.vel)},
                {"acceleration", flat(b.acc)},
                {"mass", HostArray<double>(b.mass.begin(), b.mass.end())}};
    s.scalars = scalars;
    return s;
  }
  // The snapshot's arrays (mass with them: the first snapshot holds it), and the acceleration too
  // for a checkpoint.
  std::vector<StatePartArray> part(std::int64_t& at, bool whole_state) const override {
    at = first;
    std::vector<StatePartArray> v;
    for (const PartArray& a : arrays)
      if (whole_state || a.name != "acceleration")
        v.push_back({a.name, fp64 ? static_cast<const void*>(a.f64.data()) : a.f32.data(),
                     fp64 ? a.f64.size() : a.f32.size(), fp64});
    return v;
  }
  // The downloaded bodies until wait() (in parts) takes this rank's from them.
  double bytes() const override {
    double b = double(bodies.size()) * (10 * sizeof(double));
    for (const PartArray& a : arrays) b += double(a.f64.size()) * sizeof(double) + double(a.f32.size()) * sizeof(float);
    return b;
  }
};

class NbodyModel final : public Model {
 public:
  // restart: the state comes from load_state (ModelSetup).
  NbodyModel(const Case& c, const Strategy& s, bool restart) : strategy_(s) {
    const auto count = c.get_int("nbody.count");
    n_ = static_cast<int>(count);
    part_ = BodyPartition::even(n_, comm::size(), comm::rank());
    ic_ = c.get_string("nbody.ic");
    NbodyParams p;
    p.G = c.get_float("nbody.G");
    p.softening = c.get_float("nbody.softening");
    if (p.softening == 0 && ic_ != "kepler")
      throw Error(c.source_name() +
                  ": nbody.softening: 0 is only allowed for the kepler binary (close encounters diverge)");
    // Host memory: the initial conditions (double), the engine's store, and a copy for output.
    // (+ 8: the CPU engine's potential per body). Every rank holds all n bodies; under several
    // ranks, its part of an output (or rank 0's gather, for VTK) takes up to 10 doubles per body
    // more, and the ranks of this node share its memory.
    double bytes_per_body = 10 * 8.0 + 3 * 8.0 * 4 + 12 * (s.precision == Precision::Fp64 ? 8.0 : 4.0) + 8.0;
    std::string what = std::to_string(n_) + " bodies";
    if (comm::size() > 1) {
      bytes_per_body = (bytes_per_body + 10 * 8.0) * comm::local_size();
      what += " on each of " + std::to_string(comm::local_size()) + " ranks of this node";
    }
    check_host_memory(bytes_per_body * n_, what);
    diagnostics_every_ = c.get_int("run.diagnostics_every");
    steps_ = c.get_int("run.steps");
    Bodies b;
    if (!restart) {
      b = initial_bodies(c, n_);
      startup_.part("initial state");
    }
    engine_ = s.backend == Backend::Cuda
                  ? make_nbody_cuda(s, n_, p, NbodyTuning{int(c.get_int("strategy.block")), 0}, part_)
                  : make_nbody_cpu(s, n_, p, part_);
    startup_.part("device and engine");
    if (restart) return;
    engine_->upload(b);
    b = Bodies{};  // the host copy freed within the upload's part
    startup_.part("state uploaded");
    // Queued: the run's initial diagnostics wait for it.
    engine_->compute_forces(true);  // the first kick needs a(x0); the run observes step 0
  }

  std::string name() const override { return "nbody"; }
  std::string strategy_name() const override { return engine_->strategy_name(); }
  StartupParts startup_parts() const override { return startup_.parts(); }
  std::string describe() const override {
    const int ranks = comm::size();
    return std::to_string(n_) + " bodies, " + ic_description(ic_) +
           (ranks > 1 ? ", " + std::to_string(ranks) + " ranks (" + tiersim::name(strategy_.transport) + ")" : "");
  }

  // On the steps the run loop observes (run.cpp: every run.diagnostics_every steps and the last
  // one) the force pass also sums the potential energy that observe() then reads; telemetry_step()
  // is the step being made. A step observed for another reason (a stop signal) gets the potential
  // from a separate pass in diagnostics().
  void step(double dt) override {
    checked_.reset();
    const std::int64_t s = telemetry_step();
    const bool observed = (diagnostics_every_ > 0 && s % diagnostics_every_ == 0) || s == steps_;
    engine_->kick(0.5 * dt);
    engine_->drift(dt);
    engine_->exchange_positions();  // nothing with one rank
    engine_->compute_forces(observed);
    engine_->kick(0.5 * dt);
  }

  // The owned bodies' sums, added over the ranks (one rank: as they are).
  NbodyDiagnostics diagnostics() {
    NbodyDiagnostics d = engine_->diagnostics();
    checked_ = d;  // this state's non-finite check too (find_non_finite), until it changes
    if (comm::size() == 1) return d;
    double v[9] = {d.kinetic,
                   d.potential,
                   d.mass,
                   d.momentum.x,
                   d.momentum.y,
                   d.momentum.z,
                   d.angular_momentum.x,
                   d.angular_momentum.y,
                   d.angular_momentum.z};
    comm::sum(v, 9);
    d.kinetic = v[0], d.potential = v[1], d.mass = v[2];
    d.momentum = {v[3], v[4], v[5]};
    d.angular_momentum = {v[6], v[7], v[8]};
    return d;
  }

  Observables observe() override {
    const NbodyDiagnostics d = diagnostics();
    const double total = d.kinetic + d.potential;
    if (!have_e0_) {
      e0_ = total;
      have_e0_ = true;
    }
    const double rel = e0_ != 0 ? (total - e0_) / std::fabs(e0_) : 0.0;
    return {{"kinetic_energy", d.kinetic},
            {"potential_energy", d.potential},
            {"total_energy", total},
            {"relative_energy_error", rel},
            {"virial_ratio", d.potential != 0 ? 2 * d.kinetic / std::fabs(d.potential) : 0.0},
            {"momentum_x", d.momentum.x},
            {"momentum_y", d.momentum.y},
            {"momentum_z", d.momentum.z},
            {"angular_momentum_x", d.angular_momentum.x},
            {"angular_momentum_y", d.angular_momentum.y},
            {"angular_momentum_z", d.angular_momentum.z}};
  }

  std::pair<std::string, double> conservation(const Observables& now) const override {
    for (const auto& [k, v] : now)
      if (k == "relative_energy_error") return {"dE/E0", v};
    return {"dE/E0", 0.0};
  }

  // Bodies are small against a step (2^20 bodies: 40 MB, a few ms over the link, against half a
  // second of forces): they are downloaded here, and written on the output thread. In parts, every
  // rank keeps its own bodies for its part file (nothing exchanged). Otherwise, under several
  // ranks (collective), rank 0 gathers the owned bodies of each rank, in body order, and the others
  // return nullptr.
  std::unique_ptr<StagedOutput> stage_output(std::int64_t step, double time, bool in_parts) override {
    if (in_parts) return stage_part(step, time);
    std::unique_ptr<StagedBodies> staged;
    if (comm::is_root()) {
      staged = std::make_unique<StagedBodies>();
      staged->step = step, staged->time = time;
      staged->scalars = {{"initial_energy", e0_}, {"has_initial_energy", have_e0_ ? 1.0 : 0.0}};
    }
    if (comm::size() == 1) {
      staged->bodies = engine_->download();
      return staged;
    }
    // Each owned body as 10 doubles: position, velocity, acceleration, mass.
    constexpr std::size_t kPer = 10;
    const int lo = part_.lo(), hi = part_.hi(n_);
    std::vector<double> mine(kPer * std::size_t(hi - lo));
    {
      const Bodies b = engine_->download();
      for (int i = lo; i < hi; ++i) {
        double* o = &mine[kPer * std::size_t(i - lo)];
        const Vec3<double> p = b.pos[std::size_t(i)], v = b.vel[std::size_t(i)], a = b.acc[std::size_t(i)];
        o[0] = p.x, o[1] = p.y, o[2] = p.z, o[3] = v.x, o[4] = v.y, o[5] = v.z, o[6] = a.x, o[7] = a.y, o[8] = a.z;
        o[9] = b.mass[std::size_t(i)];
      }
    }
    std::vector<double> all(comm::is_root() ? kPer * std::size_t(n_) : 0);
    comm::gather(mine.data(), mine.size() * sizeof(double), all.data());
    if (!staged) return nullptr;
    Bodies& b = staged->bodies;
    b.resize(std::size_t(n_));
    for (std::size_t i = 0; i < std::size_t(n_); ++i) {
      const double* o = &all[kPer * i];
      b.pos[i] = {o[0], o[1], o[2]}, b.vel[i] = {o[3], o[4], o[5]}, b.acc[i] = {o[6], o[7], o[8]};
      b.mass[i] = o[9];
    }
    return staged;
  }

  std::vector<KernelRecord> take_records(bool wait) override { return engine_->take_records(wait); }

  void load_state(const ModelState& s) override {
    checked_.reset();
    const std::size_t n = std::size_t(n_);
    const std::string vec = "3 per body, " + std::to_string(n_) + " bodies", one = std::to_string(n_) + " bodies";
    const auto& pos = checked_state_array(s, "position", 3 * n, vec);
    const auto& vel = checked_state_array(s, "velocity", 3 * n, vec);
    const auto& acc = checked_state_array(s, "acceleration", 3 * n, vec);
    const auto& mass = checked_state_array(s, "mass", n, one);
    // Positions, velocities and accelerations are checked by find_non_finite; masses are not
    // written by any kernel, so here.
    for (std::size_t i = 0; i < n; ++i)
      if (!std::isfinite(mass[i])) throw Error("array 'mass': mass[" + std::to_string(i) + "] is not finite");
    const double e0 = checked_state_scalar(s, "initial_energy");
    const bool have_e0 = checked_state_scalar(s, "has_initial_energy") != 0;
    Bodies b;
    b.resize(n_);
    auto unflat = [&](const HostArray<double>& v, std::vector<Vec3<double>>& out) {
      for (std::size_t i = 0; i < n; ++i) out[i] = {v[3 * i], v[3 * i + 1], v[3 * i + 2]};
    };
    unflat(pos, b.pos);
    unflat(vel, b.vel);
    unflat(acc, b.acc);
    b.mass.assign(mass.begin(), mass.end());
    // Acceleration included: the next kick uses it, no force evaluation. Every rank takes the
    // whole state (all positions and masses; the velocities and accelerations of its own bodies).
    engine_->upload(b);
    e0_ = e0;
    have_e0_ = have_e0;
  }

  // Collective under several ranks: each rank looks at its own bodies (the positions of the
  // others are copies of theirs), and the first bad index of each array is the least over the
  // ranks.
  // The first bad indices come from the engine's diagnostics reduction (on the GPU with CUDA: a
  // few scalars back, no download): the diagnostics' own on a diagnostics step, else a
  // reduction without the potential.
  std::vector<NonFinite> find_non_finite() override {
    const NbodyDiagnostics d = checked_ ? *checked_ : engine_->diagnostics(false);
    auto first_bad = [&](std::int64_t at) -> std::int64_t {
      if (comm::size() == 1) return at;
      const std::int64_t none = std::numeric_limits<std::int64_t>::max();
      const std::int64_t first = comm::min(at < 0 ? none : at);
      return first == none ? -1 : first;
    };
    std::vector<NonFinite> out;
    // In the order a step writes them: kick, drift, forces.
    if (const auto i = first_bad(d.first_non_finite_velocity); i >= 0) out.push_back({"velocity", "nbody_kick", i});
    if (const auto i = first_bad(d.first_non_finite_position); i >= 0) out.push_back({"position", "nbody_drift", i});
    if (const auto i = first_bad(d.first_non_finite_acceleration); i >= 0)
      out.push_back({"acceleration", "nbody_forces", i});
    return out;
  }

  // A velocity: only its owner changes it (the other ranks' copies of it are never read).
  void inject_nan(std::int64_t index) override {
    checked_.reset();
    const int i = int(index % n_);
    if (i < part_.lo() || i >= part_.hi(n_)) return;
    Bodies b = engine_->download();
    b.vel[static_cast<std::size_t>(i)].x = std::nan("");
    engine_->upload(b);
  }

  // For restarts and tests.
  NbodyEngine& engine() { return *engine_; }

 private:
  // In parts: the bodies, downloaded for this rank's part file (stage_output).
  std::unique_ptr<StagedOutput> stage_part(std::int64_t step, double time) {
    auto staged = std::make_unique<StagedBodies>();
    staged->step = step, staged->time = time;
    staged->scalars = {{"initial_energy", e0_}, {"has_initial_energy", have_e0_ ? 1.0 : 0.0}};
    staged->in_parts = true;
    staged->fp64 = strategy_.precision == Precision::Fp64;
    for (int r = 0; r < comm::size(); ++r) {
      const BodyPartition p = BodyPartition::even(n_, comm::size(), r);
      staged->firsts.push_back(p.lo()), staged->counts.push_back(p.hi(n_) - p.lo());
    }
    staged->first = part_.lo(), staged->last = part_.hi(n_);
    staged->root = comm::is_root();
    staged->bodies = engine_->download();  // the part is taken on the output thread (wait())
    return staged;
  }

  Strategy strategy_;
  int n_ = 0;
  BodyPartition part_;                       // the bodies this rank owns
  std::optional<NbodyDiagnostics> checked_;  // this rank's diagnostics of the current state, if made
  std::string ic_;
  std::unique_ptr<NbodyEngine> engine_;
  StartupClock startup_;  // the constructor's parts
  bool have_e0_ = false;
  double e0_ = 0;
  std::int64_t diagnostics_every_ = 0, steps_ = 0;
};

}  // namespace

std::unique_ptr<Model> make_nbody_model(const Case& c, const Strategy& s, ModelSetup setup) {
  return std::make_unique<NbodyModel>(c, s, setup.restart);
}

}  // namespace tiersim
