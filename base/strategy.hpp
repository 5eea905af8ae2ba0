// The strategy flags, each defined once: a table of its values (name, enum value, help), its
// case key under [strategy] (the command-line flag is the same word, '_' written '-'), its
// default and the models it changes. The command line, the case schema, `compare`, the
// strategy label in telemetry and the output all read these tables; for_each_flag() visits
// them with their member of Strategy. A new flag: its enum, its Flag<> table, its member and
// its line in for_each_flag(), here; then the code that honours it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/error.hpp"

namespace tiersim {

enum class Backend { Auto, Cpu, Cuda };
enum class Layout { AoS, SoA, AoSoA, Float4 };
enum class Precision { Fp32, Fp64 };
enum class Tiling { None, Shared, Temporal };
enum class CoeffSpace { Constant, Global };
enum class L2Persist { Off, On };
enum class Transport { Auto, Nccl, Ipc, Mpi };

// Which models a flag changes (a flag that changes neither kernel of a model is left out of
// that model's strategy label).
enum ModelMask : unsigned { kNbody = 1, kStencil = 2, kBothModels = 3 };

template <class E>
struct FlagValue {
  const char* name;
  E value;
  const char* help;
  unsigned models = kBothModels;  // the models this value serves (a value may be for one model only)
};

template <class E>
struct Flag;  // one specialisation per strategy flag, below

template <>
struct Flag<Backend> {
  static constexpr const char* key = "backend";
  static constexpr const char* help = "where the kernels run";
  static constexpr Backend fallback = Backend::Auto;
  static constexpr unsigned models = kBothModels;
  static constexpr bool cpu_honours = true;
  static constexpr std::array<FlagValue<Backend>, 3> values{{
      {"auto", Backend::Auto, "CUDA when a GPU is usable, the CPU otherwise"},
      {"cpu", Backend::Cpu, "the OpenMP reference"},
      {"cuda", Backend::Cuda, "the CUDA kernels"},
  }};
};

template <>
struct Flag<Layout> {
  static constexpr const char* key = "layout";
  static constexpr const char* help = "how particle fields sit in global memory";
  static constexpr Layout fallback = Layout::SoA;
  static constexpr unsigned models = kNbody;
  static constexpr bool cpu_honours = true;
  static constexpr std::array<FlagValue<Layout>, 4> values{{
      {"aos", Layout::AoS, "array of structs: strided loads"},
      {"soa", Layout::SoA, "struct of arrays: coalesced loads"},
      {"aosoa", Layout::AoSoA, "arrays of 32-wide struct-of-array blocks"},
      {"float4", Layout::Float4, "hot {x,y,z,m} as one 16-byte vector, velocities apart"},
  }};
};

template <>
struct Flag<Precision> {
  static constexpr const char* key = "precision";
  static constexpr const char* help = "scalar type of particles and fields";
  static constexpr Precision fallback = Precision::Fp32;
  static constexpr unsigned models = kBothModels;
  static constexpr bool cpu_honours = true;
  static constexpr std::array<FlagValue<Precision>, 2> values{{
      {"fp32", Precision::Fp32, "single precision"},
      {"fp64", Precision::Fp64, "double precision: twice the bytes"},
  }};
};

template <>
struct Flag<Tiling> {
  static constexpr const char* key = "tiling";
  static constexpr const char* help = "kernels read neighbours from global memory or from shared-memory tiles";
  static constexpr Tiling fallback = Tiling::Shared;
  static constexpr unsigned models = kBothModels;
  static constexpr bool cpu_honours = false;
  static constexpr std::array<FlagValue<Tiling>, 3> values{{
      {"none", Tiling::None, "neighbours through L1/L2"},
      {"shared", Tiling::Shared, "tiles with halos staged in shared memory"},
      {"temporal", Tiling::Temporal,
       "stencil: several time steps per pass through memory, the levels between kept on chip", kStencil},
  }};
};

template <>
struct Flag<CoeffSpace> {
  static constexpr const char* key = "coeffs";
  static constexpr const char* help = "stencil coefficients in __constant__ or global memory";
  static constexpr CoeffSpace fallback = CoeffSpace::Constant;
  static constexpr unsigned models = kStencil;
  static constexpr bool cpu_honours = false;
  static constexpr std::array<FlagValue<CoeffSpace>, 2> values{{
      {"constant", CoeffSpace::Constant, "__constant__ memory, read by warp broadcast"},
      {"global", CoeffSpace::Global, "a global array"},
  }};
};

template <>
struct Flag<L2Persist> {
  static constexpr const char* key = "l2_persist";
  static constexpr const char* help = "L2 access-policy window over the hot data set";
  static constexpr L2Persist fallback = L2Persist::Off;
  static constexpr unsigned models = 0;  // recorded per launch (KernelRecord::l2_window), not in the label
  static constexpr bool cpu_honours = false;
  static constexpr std::array<FlagValue<L2Persist>, 2> values{{
      {"off", L2Persist::Off, "no window"},
      {"on", L2Persist::On, "a persisting window over the hot set"},
  }};
};

// How the ranks of a run (mpirun) exchange device data: halo planes, body positions. Not part of
// the label: the kernels are the same; describe() and the telemetry's exchange rows name it.
template <>
struct Flag<Transport> {
  static constexpr const char* key = "transport";
  static constexpr const char* help = "how the ranks of a run (mpirun) exchange halos and positions";
  static constexpr Transport fallback = Transport::Auto;
  static constexpr unsigned models = 0;
  static constexpr bool cpu_honours = false;
  static constexpr std::array<FlagValue<Transport>, 4> values{{
      {"auto", Transport::Auto,
       "where every rank has a GPU of its own: ipc on one node (GPUs with peer access), nccl across nodes; mpi "
       "otherwise"},
      {"nccl", Transport::Nccl, "NCCL, GPU memory to GPU memory, beside the kernels on a stream of its own"},
      {"ipc", Transport::Ipc,
       "ranks of one node, a GPU each: the copy engines write the stencil halos into the neighbours' GPU memory "
       "(CUDA IPC), taking no SM from the kernels; an N-body run goes through nccl"},
      {"mpi", Transport::Mpi, "MPI through pinned host buffers"},
  }};
};

template <class E>
concept StrategyFlag = requires {
  Flag<E>::values;
};

template <StrategyFlag E>
const char* name(E v) {
  for (const auto& f : Flag<E>::values)
    if (f.value == v) return f.name;
  return "?";
}

// "a|b|c": the values of a flag, as messages and --help show them.
template <StrategyFlag E>
std::string flag_choices(const char* sep = "|") {
  std::string s;
  for (const auto& f : Flag<E>::values) {
    if (!s.empty()) s += sep;
    s += f.name;
  }
  return s;
}

template <StrategyFlag E>
std::vector<std::string> flag_names(unsigned models = kBothModels) {
  std::vector<std::string> v;
  for (const auto& f : Flag<E>::values)
    if (f.models & models) v.emplace_back(f.name);
  return v;
}

// The command-line option of a flag: "--l2-persist" for the key "l2_persist".
inline std::string flag_option(const char* key) {
  std::string o = std::string("--") + key;
  for (char& ch : o)
    if (ch == '_') ch = '-';
  return o;
}

// The same, given the flag's table (as for_each_flag passes it).
template <StrategyFlag E>
std::string flag_choices(Flag<E>, const char* sep = "|") {
  return flag_choices<E>(sep);
}
template <StrategyFlag E>
std::vector<std::string> flag_names(Flag<E>) {
  return flag_names<E>();
}

// The models a flag's value serves (ModelMask).
template <StrategyFlag E>
unsigned value_models(E v) {
  for (const auto& f : Flag<E>::values)
    if (f.value == v) return f.models;
  return 0;
}

// Parses a flag value; throws Error("<what>: unknown value 'x' (expected a|b|c)").
template <StrategyFlag E>
E parse_flag(const std::string& s, const std::string& what = std::string("strategy.") + Flag<E>::key) {
  for (const auto& f : Flag<E>::values)
    if (s == f.name) return f.value;
  throw Error(what + ": unknown value '" + s + "' (expected " + flag_choices<E>() + ")");
}

// Where the CUDA stencil engine puts its L2 window (docs/techniques.md, "L2 persistence"):
//  Pair:       one window over both ping-pong groups, hitRatio = carve-out / both.
//  Output:     the window follows the group this step writes (retargeted every step).
//  OutputHalf: Output with hitRatio = carve-out / (2 x one group), for the lines the previous
//              step left persisting.
//  Fixed:      one window over group A alone, set once and never moved: A is read every step
//              and written every other step, so its lines stay persisting while B streams.
//              Right for the wave equation, whose update rewrites u(t - dt) in place.
//  Auto:       Fixed for the wave equation, Output otherwise.
enum class StencilL2Target { Pair, Output, OutputHalf, Fixed, Auto };

// The share of the carve-out the persisting lines may fill (0 < fill <= 1): the carve-out asked
// for is the hot set / fill and hitRatio = fill x carve-out / hot set, at most 1. 0.85: on an
// H100 a carve-out filled to the brim measured up to 0.1x slower than one with slack, and a
// larger one slower again, because the set-aside ways are lost to every other access
// (docs/performance.md, "L2 persistence").
constexpr double kDefaultL2Fill = 0.85;

// Knobs below the strategy flags: what benchmarks and telemetry-cost studies set; a run takes
// them from its case ([run] telemetry keys) and otherwise leaves the defaults.
struct Tuning {
  StencilL2Target l2_target = StencilL2Target::Auto;
  double l2_fill = kDefaultL2Fill;
  bool l2_miss_streaming = true;  // window lines not made persisting: streaming (true) or normal
  bool kernel_timing = true;      // CUDA events around launches (false: ms = 0, no events)
  std::int64_t timing_every = 1;  // time the launches of every n-th step only
  // Whether a launch of `step` is timed.
  bool timed_at(std::int64_t step) const { return kernel_timing && step % (timing_every < 1 ? 1 : timing_every) == 0; }
};

// The run-time strategy, as one value that every engine is made with.
struct Strategy {
  Backend backend = Flag<Backend>::fallback;
  Layout layout = Flag<Layout>::fallback;
  Precision precision = Flag<Precision>::fallback;
  Tiling tiling = Flag<Tiling>::fallback;
  CoeffSpace coeffs = Flag<CoeffSpace>::fallback;
  L2Persist l2_persist = Flag<L2Persist>::fallback;
  std::size_t l2_persist_bytes = 0;                 // 0: as much as the device allows
  Transport transport = Flag<Transport>::fallback;  // resolved (never Auto) once the run's ranks are known
  Tuning tuning;
};

// Calls f(Flag<E>{}, &Strategy::member) for every strategy flag, in label order.
template <class F>
void for_each_flag(F&& f) {
  f(Flag<Backend>{}, &Strategy::backend);
  f(Flag<Layout>{}, &Strategy::layout);
  f(Flag<Precision>{}, &Strategy::precision);
  f(Flag<Tiling>{}, &Strategy::tiling);
  f(Flag<CoeffSpace>{}, &Strategy::coeffs);
  f(Flag<L2Persist>{}, &Strategy::l2_persist);
  f(Flag<Transport>{}, &Strategy::transport);
}

// The strategy label telemetry and output carry: the backend, then each flag that changes the
// model's kernels on that backend ("cuda/soa/fp32/shared", "cpu/fp32").
std::string strategy_label(const Strategy& s, ModelMask model);

}  // namespace tiersim
