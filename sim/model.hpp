// What the time loop needs from a model (nbody, stencil). A model owns its backend engine and
// its state; the loop owns cadence, progress, output files and telemetry.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/host_array.hpp"
#include "io/output_format.hpp"
#include "sim/case.hpp"
#include "sim/startup_clock.hpp"
#include "base/strategy.hpp"
#include "sim/telemetry.hpp"

namespace tiersim {

class SnapshotFile;  // io/snapshots.hpp
struct ModelState;   // io/checkpoint.hpp

// Where the first NaN or infinity sits, and the kernel that writes that array.
struct NonFinite {
  std::string array, kernel;
  std::int64_t index = 0;
};

using Observables = std::vector<std::pair<std::string, double>>;

// The diagnostics of one moment: the observables, and the arrays that hold a NaN or infinity.
struct Observation {
  Observables values;
  std::vector<NonFinite> non_finite;
};

// The state of one step on its way to the files: staged on the loop's thread (on the GPU the
// copies are issued and this returns at once), then finished and written on the output thread
// (io/output_queue.hpp), in the run's precision.
class StagedOutput {
 public:
  virtual ~StagedOutput() = default;
  // Waits until the state is in host memory; returns the copies' telemetry records.
  virtual std::vector<KernelRecord> wait() = 0;
  virtual void write_snapshot(SnapshotFile& out) const = 0;
  virtual ModelState state() const = 0;  // what the checkpoint holds
  virtual double bytes() const = 0;      // host bytes staged
  // Staged in parts (stage_output's in_parts): this rank's arrays, which it writes to a part file
  // of its own (io/state_parts.hpp), and the index of their first value in the whole arrays; all
  // of the state with whole_state (a checkpoint's step), else the snapshot's arrays. On rank 0,
  // write_snapshot and state() then name every rank's part. Empty: staged whole (not in parts).
  virtual std::vector<StatePartArray> part(std::int64_t& first, bool whole_state) const {
    (void)whole_state;
    first = 0;
    return {};
  }
};

// Under several ranks (base/comm.hpp; `mpirun -np P tiersim run`) each rank builds the same model
// from the same case and holds its part of the state (a slab of the grid, a range of the bodies).
// These calls are then collective (every rank makes them, in the same order): advance/step (halo
// exchanges, position exchanges), observe and conservation (every rank gets the global values),
// find_non_finite (global indices, the same on every rank), stage_output (with in_parts every rank
// its own part, StagedOutput::part; otherwise the ranks' parts are gathered: rank 0 gets the whole
// state, as one rank would stage it, the others nullptr),
// load_state (every rank is given the whole checkpointed state and takes its part), inject_nan
// (a global index). One rank is the case of today, with nothing exchanged.
class Model {
 public:
  virtual ~Model() = default;
  virtual std::string name() const = 0;           // "nbody", "stencil/heat", ...
  virtual std::string strategy_name() const = 0;  // "cuda/soa/fp32/shared"
  virtual void step(double dt) = 0;               // advance one time step
  // Advances by 1..max_steps time steps (as the strategy fuses them) and returns how many; the
  // state between them is never seen.
  virtual std::int64_t advance(double dt, std::int64_t max_steps) {
    (void)max_steps;
    step(dt);
    return 1;
  }
  // Diagnostics at this moment (energies, momenta, field sums, min/max): name, value.
  virtual Observables observe() = 0;
  // The headline conservation figure for the progress line, e.g. "dE/E0" and its value.
  virtual std::pair<std::string, double> conservation(const Observables& now) const = 0;
  // Stages the state of this step for output (snapshot and checkpoint alike); in_parts: each rank
  // keeps its part (the stencil's slab, the bodies' range; one rank: all of it).
  virtual std::unique_ptr<StagedOutput> stage_output(std::int64_t step, double time, bool in_parts) = 0;
  // Whether a run on several ranks may gather the whole state on rank 0 for a format that writes
  // whole arrays (VTK): the bodies (O(N)) may; a grid split over devices too small for it may not.
  virtual bool gathers_whole_state() const { return true; }
  // The same, waited for and written at once (tests, compare); collective, rank 0 writes.
  void write_snapshot(SnapshotFile& out, std::int64_t step, double time);
  // Kernel records completed since the last call (each with its measured time).
  // wait = false: only the records whose device work has finished (see the engines).
  virtual std::vector<KernelRecord> take_records(bool wait = true) = 0;
  // A short description for the start-up banner ("65536 bodies, Plummer sphere").
  virtual std::string describe() const = 0;
  // Where the model's construction went, part by part (sim/startup_clock.hpp).
  virtual StartupParts startup_parts() const = 0;

  // Restart: the exact state at a step boundary (values held in double, which is exact for fp32
  // and fp64), and its reinstatement into a freshly built model of the same case.
  // (Defaults in sim/model.cpp refuse with a one-line Error.) save_state is collective: rank 0
  // gets the whole state, the other ranks an empty one.
  ModelState save_state();
  virtual void load_state(const ModelState& s);

  // The first non-finite value of each array of the state that has one (copies state back from
  // the device); empty when all is finite.
  virtual std::vector<NonFinite> find_non_finite() { return {}; }
  // Fault injection for the tests: makes one value of the state NaN.
  virtual void inject_nan(std::int64_t index);

  // Diagnostics behind the steps: queue_observation() asks for this moment's observe() and
  // find_non_finite(); take_observation() returns them, when more steps may have been queued
  // since (a GPU runs them meanwhile instead of waiting for the host). One queued at a time.
  // Collective. This default computes them at the queueing. await_observation() only waits until
  // the values are on the host (the steps queued before them are done): the time the steps take.
  virtual bool queues_observations() const { return false; }  // whether queue_observation returns at once
  virtual void queue_observation();
  virtual void await_observation() {}
  virtual Observation take_observation();

 private:
  Observation queued_;
};

// For load_state: the array or value `name` of a checkpoint's state, refused with one line
// (Error naming it and the sizes) when missing, of another length than `expected` (`what`: why,
// e.g. "3 per body, 64 bodies"), or, for a value, not finite: a damaged or foreign checkpoint must
// not be read past an array's end.
const HostArray<double>& checked_state_array(const ModelState& s, const std::string& name, std::size_t expected,
                                             const std::string& what);
double checked_state_scalar(const ModelState& s, const std::string& name);

// How a run builds its model. output: the run stages snapshots or checkpoints (the stencil's
// page-locked buffers are then made while the initial state is). restart: load_state follows at
// once with a checkpoint's state, so no initial state is made or uploaded (nor N-body's first
// force pass: the checkpoint holds the accelerations); until then the model holds no state.
struct ModelSetup {
  bool output = false;
  bool restart = false;
};

// Factories: each validates the model's own keys (ranges that depend on each other, stability
// limits, memory needed) and throws Error with one line before anything is written.
std::unique_ptr<Model> make_nbody_model(const Case& c, const Strategy& s, ModelSetup setup = {});
std::unique_ptr<Model> make_stencil_model(const Case& c, const Strategy& s, ModelSetup setup = {});

// The model a case runs (run.model), as the strategy flags' tables name models.
ModelMask model_of(const Case& c);

// The strategy a case asks for (the [strategy] section after overrides).
Strategy strategy_from_case(const Case& c);

// Backend::Auto becomes Cuda when a GPU is usable, otherwise Cpu; *why says which and why.
// Backend::Cuda without a usable GPU throws Error naming why.
Backend resolve_backend(Backend requested, std::string* why = nullptr);

}  // namespace tiersim
