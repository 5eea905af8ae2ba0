// Every key a case file may hold. Add a key here and it is validated, overridable with --set,
// listed by `tiersim keys`, documented in cases/example.toml (`tiersim keys --toml`; a required
// key needs an example value) and stored with the output.
#include <algorithm>

#include "base/strategy.hpp"
#include "sim/case.hpp"

namespace tiersim {

void append_stencil_keys(std::vector<KeySpec>& keys);  // sim/stencil_keys.cpp

namespace {
using T = KeySpec::Type;
constexpr double kBig = 1e308;

std::vector<KeySpec> build_schema() {
  std::vector<KeySpec> k = {
      // [run]
      {"run.model",
       T::String,
       "",
       "which model: nbody or stencil",
       -kBig,
       kBig,
       false,
       {"nbody", "stencil"},
       "\"nbody\""},
      {"run.title", T::String, "\"\"", "free text stored with the output"},
      {"run.steps", T::Int, "100", "time steps to take", 0, 1e12},
      {"run.dt", T::Float, "", "time step (simulation units)", 0, kBig, true, {}, "0.01"},
      {"run.snapshot_every", T::Int, "10", "write a snapshot every N steps (0: first and last only)", 0, 1e12},
      {"run.diagnostics_every", T::Int, "1", "compute diagnostics (energies, momenta, field sums) every N steps", 1,
       1e12},
      {"run.checkpoint_every", T::Int, "0", "write a restart checkpoint every N steps (0: with each snapshot)", 0,
       1e12},
      {"run.seed", T::Int, "1", "random seed of the initial conditions", 0, 9.2e18},
      {"run.telemetry", T::Bool, "true",
       "time every CUDA kernel with events (false: no events, ms = 0; to measure telemetry's own cost)"},
      {"run.output_slots", T::Int, "2",
       "snapshots and checkpoints staged in host memory at most while the output thread writes them (the steps wait "
       "only when every slot is busy); 0: as many as a quarter of the available host memory holds, 2 to 64",
       0, 64},
      {"run.telemetry_every", T::Int, "1",
       "time and record the kernels of every N-th step only (the others run without events: for steps shorter than "
       "~0.3 ms)",
       1, 1e12},
      // [strategy]
      {"strategy.l2_persist_bytes", T::Int, "0",
       "bytes of the L2 window (0: the hot set, clamped to the device maximum)", 0, 1e15},
      {"strategy.block", T::Int, "0", "CUDA threads per block of the main kernel (0: chosen for the device)", 0, 1024},
      // [nbody]
      {"nbody.count", T::Int, "4096", "number of bodies", 1, 2147483647},
      {"nbody.ic",
       T::String,
       "\"plummer\"",
       "initial conditions",
       -kBig,
       kBig,
       false,
       {"plummer", "uniform", "collision", "kepler", "galaxy"}},
      {"nbody.softening", T::Float, "0.01", "Plummer softening length epsilon", 0, kBig},
      {"nbody.G", T::Float, "1.0", "gravitational constant (N-body units: 1)", 0, kBig, true},
      {"nbody.total_mass", T::Float, "1.0", "total mass of the system", 0, kBig, true},
      {"nbody.radius", T::Float, "1.0",
       // The code's meaning (sim/initial_conditions.cpp), not the Plummer scale length itself.
       "length scale R. plummer, collision (first cluster): virial radius, so the Plummer scale length is 3 pi/16 R; "
       "uniform: sphere radius; galaxy: disk scale length R/4, bodies out to 2R, bulge virial radius 0.2R; kepler: "
       "unused",
       0, kBig, true},
      // [kepler]
      {"kepler.eccentricity", T::Float, "0.5", "orbital eccentricity of the binary", 0, 0.999999},
      {"kepler.period", T::Float, "6.283185307179586", "orbital period; sets the semi-major axis with G and the masses",
       0, kBig, true},
      {"kepler.mass_ratio", T::Float, "1.0", "m2 / m1", 0, kBig, true},
      // [collision]
      {"collision.separation", T::Float, "6.0",
       "initial distance between the cluster centres (in units of nbody.radius)", 0, kBig, true},
      {"collision.impact_parameter", T::Float, "1.0", "offset perpendicular to the approach (in units of nbody.radius)",
       0, kBig},
      {"collision.velocity", T::Float, "0.5", "relative approach speed", 0, kBig},
      {"collision.mass_ratio", T::Float, "1.0", "mass of the second cluster / the first", 0, kBig, true},
      // [galaxy]
      {"galaxy.bulge_fraction", T::Float, "0.3",
       "fraction of the mass in the central Plummer bulge (virial radius 0.2 nbody.radius)", 0, 1},
      {"galaxy.thickness", T::Float, "0.05",
       "disk thickness: standard deviation of the bodies' height z, in units of nbody.radius", 0, kBig},
      {"galaxy.dispersion", T::Float, "0.05", "velocity dispersion / circular velocity in the disk", 0, kBig},
  };
  // [strategy]: one key per strategy flag, from its table (base/strategy.hpp), before the
  // strategy's numeric keys.
  std::vector<KeySpec> flags;
  for_each_flag([&](auto flag, auto) {
    using F = decltype(flag);
    std::vector<std::string> names;
    std::string doc = F::help;
    doc += ':';
    for (const auto& v : F::values) {
      names.emplace_back(v.name);
      doc += std::string(" ") + v.name + " (" + v.help + ")" + (&v == &F::values.back() ? "" : ",");
    }
    flags.push_back({std::string("strategy.") + F::key, T::String, std::string("\"") + name(F::fallback) + "\"", doc,
                     -kBig, kBig, false, names});
  });
  const auto at = std::find_if(k.begin(), k.end(), [](const KeySpec& s) { return s.key.starts_with("strategy."); });
  k.insert(at, flags.begin(), flags.end());
  append_stencil_keys(k);
  return k;
}
}  // namespace

const std::vector<KeySpec>& case_schema() {
  static const std::vector<KeySpec> schema = build_schema();
  return schema;
}

}  // namespace tiersim
