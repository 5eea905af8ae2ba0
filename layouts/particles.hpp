// Particle stores: the same bodies in four memory layouts, each behind a view with the same
// accessors (Cabana's AoSoA, LLAMA's mappings). A view is a few pointers into one contiguous
// buffer of View::bytes(n) bytes, so the same view type works over host memory (CPU backend,
// output) and device memory (CUDA kernels), and a host<->device copy is one memcpy.
//
// Every layout holds, per body: position, mass, velocity and acceleration (the kick needs the
// acceleration of the last force evaluation). Ids are the index and are not stored.
//
// A layout is defined once, here: its view (accessors, bytes(), hot_bytes(), moved_bytes()) and
// its entry in TIERSIM_PARTICLE_VIEWS below, from which with_layout(), ParticleView<L, T> and
// the CUDA kernels' instantiations are generated; plus its Flag<Layout> entry in
// base/strategy.hpp (docs/architecture.md, "How to add a particle layout").
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "base/hd.hpp"
#include "base/vec.hpp"
#include "base/strategy.hpp"

namespace tiersim {

// Round up to a multiple of `a` bytes; every array inside a buffer starts 256-byte aligned so
// that vector loads and coalescing work the same on host and device.
TIERSIM_HD constexpr std::size_t align_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }
inline constexpr std::size_t kArrayAlign = 256;

// The fields of a body, in the order every layout stores them: x y z m vx vy vz ax ay az. A set
// of fields is a bit mask (field_mask(kX, 4): position and mass).
enum BodyField : int { kX = 0, kY, kZ, kM, kVX, kVY, kVZ, kAX, kAY, kAZ, kBodyFields };
constexpr unsigned field_mask(int first, int count) { return ((1u << count) - 1u) << first; }

// Cost model of a strided layout: average bytes per record of the 32-byte sectors touched when
// consecutive threads read or write the fields in `mask` (each `field_bytes` wide) of
// consecutive records of `record` bytes. Arrays start 256-byte aligned; 1024 records cover
// every phase of record against sector. (The memory system moves whole sectors.)
inline double sector_bytes_per_record(std::size_t record, std::size_t field_bytes, unsigned mask) {
  const std::size_t records = 1024, sector = 32;
  std::vector<bool> touched((records * record + sector - 1) / sector + 1, false);
  for (std::size_t r = 0; r < records; ++r)
    for (int f = 0; f < kBodyFields; ++f) {
      if (!(mask >> f & 1u)) continue;
      const std::size_t lo = r * record + std::size_t(f) * field_bytes, hi = lo + field_bytes;
      for (std::size_t s = lo / sector; s * sector < hi; ++s) touched[s] = true;
    }
  return double(std::count(touched.begin(), touched.end(), true)) * sector / double(records);
}

// A run of bytes inside a store: [offset, offset + bytes).
struct ByteRange {
  std::size_t offset = 0, bytes = 0;
};

// Under several ranks each rank owns a range of the bodies (kernels/nbody_engine.hpp,
// BodyPartition) whose bounds are multiples of this, or n: a multiple of every view's block (an
// AoSoA block is never split), so that the positions of a rank's range are a few whole byte
// ranges of the store (position_ranges below), sent as they lie.
inline constexpr int kBodySliceAlign = 32;

// Every view below also answers, for the CUDA engine's L2 window and the kernels' cost models:
//  hot_bytes(n):   bytes from the start of the store that hold x y z m of every body (what the
//                  force kernel re-reads);
//  moved_bytes(f): bytes per body the memory system moves when consecutive threads touch the
//                  fields in mask f of consecutive bodies;
// and, for the position exchange between ranks:
//  position_ranges(n, lo, hi): the kPositionRanges byte ranges of a store of n bodies that hold
//                  the positions of bodies lo .. hi - 1 (lo and hi as BodyPartition makes them).
//                  A range may hold other fields of those bodies too; a later rank's ranges lie
//                  after an earlier one's, each kind of range after its own kind.

// Array of structures: one 40-byte (fp32) record per body. A warp reading positions touches
// 10x the bytes it uses per field: strided access.
template <class T>
struct AoSView {
  using scalar = T;
  static constexpr Layout layout = Layout::AoS;
  struct Body {
    T x, y, z, m, vx, vy, vz, ax, ay, az;
  };
  Body* b = nullptr;
  int n = 0;

  static std::size_t bytes(std::size_t n) { return align_up(n * sizeof(Body), kArrayAlign); }
  static std::size_t hot_bytes(std::size_t n) { return bytes(n); }  // positions interleaved with the rest
  static double moved_bytes(unsigned f) { return sector_bytes_per_record(sizeof(Body), sizeof(T), f); }
  static constexpr int kPositionRanges = 1;  // whole records: velocities and accelerations ride along
  static std::array<ByteRange, 1> position_ranges(std::size_t, std::size_t lo, std::size_t hi) {
    return {{{lo * sizeof(Body), (hi - lo) * sizeof(Body)}}};
  }
  AoSView() = default;
  AoSView(void* base, int count) : b(static_cast<Body*>(base)), n(count) {}

  TIERSIM_HD Vec4<T> pos_mass(int i) const {
    const Body& q = b[i];
    return {q.x, q.y, q.z, q.m};
  }
  TIERSIM_HD Vec3<T> pos(int i) const { return {b[i].x, b[i].y, b[i].z}; }
  TIERSIM_HD Vec3<T> vel(int i) const { return {b[i].vx, b[i].vy, b[i].vz}; }
  TIERSIM_HD Vec3<T> acc(int i) const { return {b[i].ax, b[i].ay, b[i].az}; }
  TIERSIM_HD T mass(int i) const { return b[i].m; }
  TIERSIM_HD void set_pos(int i, Vec3<T> p) const {
    b[i].x = p.x;
    b[i].y = p.y;
    b[i].z = p.z;
  }
  TIERSIM_HD void set_vel(int i, Vec3<T> v) const {
    b[i].vx = v.x;
    b[i].vy = v.y;
    b[i].vz = v.z;
  }
  TIERSIM_HD void set_acc(int i, Vec3<T> a) const {
    b[i].ax = a.x;
    b[i].ay = a.y;
    b[i].az = a.z;
  }
  TIERSIM_HD void set_mass(int i, T m) const { b[i].m = m; }
};

// Structure of arrays: ten arrays of n scalars; consecutive threads read consecutive words.
template <class T>
struct SoAView {
  using scalar = T;
  static constexpr Layout layout = Layout::SoA;
  T *x = nullptr, *y = nullptr, *z = nullptr, *m = nullptr;
  T *vx = nullptr, *vy = nullptr, *vz = nullptr, *ax = nullptr, *ay = nullptr, *az = nullptr;
  int n = 0;

  static std::size_t stride(std::size_t n) { return align_up(n * sizeof(T), kArrayAlign); }
  static std::size_t bytes(std::size_t n) { return 10 * stride(n); }
  static std::size_t hot_bytes(std::size_t n) { return 4 * stride(n); }  // x, y, z, m: the first four arrays
  static double moved_bytes(unsigned f) { return double(std::popcount(f)) * sizeof(T); }
  static constexpr int kPositionRanges = 3;  // the slices of x, y and z
  static std::array<ByteRange, 3> position_ranges(std::size_t n, std::size_t lo, std::size_t hi) {
    std::array<ByteRange, 3> r;
    for (std::size_t f = 0; f < 3; ++f) r[f] = {f * stride(n) + lo * sizeof(T), (hi - lo) * sizeof(T)};
    return r;
  }
  SoAView() = default;
  SoAView(void* base, int count) : n(count) {
    char* p = static_cast<char*>(base);
    const std::size_t s = stride(count);
    T** fields[10] = {&x, &y, &z, &m, &vx, &vy, &vz, &ax, &ay, &az};
    for (int f = 0; f < 10; ++f) *fields[f] = reinterpret_cast<T*>(p + f * s);
  }

  TIERSIM_HD Vec4<T> pos_mass(int i) const { return {x[i], y[i], z[i], m[i]}; }
  TIERSIM_HD Vec3<T> pos(int i) const { return {x[i], y[i], z[i]}; }
  TIERSIM_HD Vec3<T> vel(int i) const { return {vx[i], vy[i], vz[i]}; }
  TIERSIM_HD Vec3<T> acc(int i) const { return {ax[i], ay[i], az[i]}; }
  TIERSIM_HD T mass(int i) const { return m[i]; }
  TIERSIM_HD void set_pos(int i, Vec3<T> p) const {
    x[i] = p.x;
    y[i] = p.y;
    z[i] = p.z;
  }
  TIERSIM_HD void set_vel(int i, Vec3<T> v) const {
    vx[i] = v.x;
    vy[i] = v.y;
    vz[i] = v.z;
  }
  TIERSIM_HD void set_acc(int i, Vec3<T> a) const {
    ax[i] = a.x;
    ay[i] = a.y;
    az[i] = a.z;
  }
  TIERSIM_HD void set_mass(int i, T mm) const { m[i] = mm; }
};

// Array of structures of arrays: blocks of W bodies, each block an SoA of W lanes. A warp
// (W = 32) reads one contiguous 128-byte segment per field, and a body's fields stay in one
// 40*W-byte block (good for paging and partitioning).
template <class T, int W = 32>
struct AoSoAView {
  using scalar = T;
  static constexpr Layout layout = Layout::AoSoA;
  static constexpr int width = W;
  struct Block {
    T x[W], y[W], z[W], m[W], vx[W], vy[W], vz[W], ax[W], ay[W], az[W];
  };
  Block* blk = nullptr;
  int n = 0;

  static std::size_t bytes(std::size_t n) { return align_up((n + W - 1) / W * sizeof(Block), kArrayAlign); }
  static std::size_t hot_bytes(std::size_t n) { return bytes(n); }  // positions interleaved with the rest
  // Each field of a block is one contiguous W-lane segment: exactly the fields.
  static double moved_bytes(unsigned f) { return double(std::popcount(f)) * sizeof(T); }
  // Whole blocks (lo is a multiple of W; hi too, or n, whose last block is partly padding).
  static_assert(kBodySliceAlign % W == 0, "a rank's range of bodies must not split an AoSoA block");
  static constexpr int kPositionRanges = 1;
  static std::array<ByteRange, 1> position_ranges(std::size_t, std::size_t lo, std::size_t hi) {
    const std::size_t b0 = lo / W, b1 = hi > lo ? (hi + W - 1) / W : b0;
    return {{{b0 * sizeof(Block), (b1 - b0) * sizeof(Block)}}};
  }
  AoSoAView() = default;
  AoSoAView(void* base, int count) : blk(static_cast<Block*>(base)), n(count) {}

  TIERSIM_HD Vec4<T> pos_mass(int i) const {
    const Block& q = blk[i / W];
    const int l = i % W;
    return {q.x[l], q.y[l], q.z[l], q.m[l]};
  }
  TIERSIM_HD Vec3<T> pos(int i) const {
    const Block& q = blk[i / W];
    const int l = i % W;
    return {q.x[l], q.y[l], q.z[l]};
  }
  TIERSIM_HD Vec3<T> vel(int i) const {
    const Block& q = blk[i / W];
    const int l = i % W;
    return {q.vx[l], q.vy[l], q.vz[l]};
  }
  TIERSIM_HD Vec3<T> acc(int i) const {
    const Block& q = blk[i / W];
    const int l = i % W;
    return {q.ax[l], q.ay[l], q.az[l]};
  }
  TIERSIM_HD T mass(int i) const { return blk[i / W].m[i % W]; }
  TIERSIM_HD void set_pos(int i, Vec3<T> p) const {
    Block& q = blk[i / W];
    const int l = i % W;
    q.x[l] = p.x;
    q.y[l] = p.y;
    q.z[l] = p.z;
  }
  TIERSIM_HD void set_vel(int i, Vec3<T> v) const {
    Block& q = blk[i / W];
    const int l = i % W;
    q.vx[l] = v.x;
    q.vy[l] = v.y;
    q.vz[l] = v.z;
  }
  TIERSIM_HD void set_acc(int i, Vec3<T> a) const {
    Block& q = blk[i / W];
    const int l = i % W;
    q.ax[l] = a.x;
    q.ay[l] = a.y;
    q.az[l] = a.z;
  }
  TIERSIM_HD void set_mass(int i, T mm) const { blk[i / W].m[i % W] = mm; }
};

// Hot/cold split with vector types: the force kernel's hot data (x, y, z, m) is one Vec4 per
// body, a single 16-byte (fp32) or 2x16-byte (fp64) load; velocities and accelerations are
// cold Vec4 arrays (w unused) so that kick and drift also move whole vectors.
template <class T>
struct Float4View {
  using scalar = T;
  static constexpr Layout layout = Layout::Float4;
  Vec4<T>* posm = nullptr;
  Vec4<T>* v = nullptr;
  Vec4<T>* a = nullptr;
  int n = 0;

  static std::size_t stride(std::size_t n) { return align_up(n * sizeof(Vec4<T>), kArrayAlign); }
  static std::size_t bytes(std::size_t n) { return 3 * stride(n); }
  static std::size_t hot_bytes(std::size_t n) { return stride(n); }  // the posm array
  // Whole 4-wide vectors: x y z m | vx vy vz - | ax ay az -.
  static double moved_bytes(unsigned f) {
    const int vectors =
        ((f & field_mask(kX, 4)) != 0) + ((f & field_mask(kVX, 3)) != 0) + ((f & field_mask(kAX, 3)) != 0);
    return double(vectors) * sizeof(Vec4<T>);
  }
  static constexpr int kPositionRanges = 1;  // the posm slice: x y z and the unchanged masses
  static std::array<ByteRange, 1> position_ranges(std::size_t, std::size_t lo, std::size_t hi) {
    return {{{lo * sizeof(Vec4<T>), (hi - lo) * sizeof(Vec4<T>)}}};
  }
  Float4View() = default;
  Float4View(void* base, int count) : n(count) {
    char* p = static_cast<char*>(base);
    posm = reinterpret_cast<Vec4<T>*>(p);
    v = reinterpret_cast<Vec4<T>*>(p + stride(count));
    a = reinterpret_cast<Vec4<T>*>(p + 2 * stride(count));
  }

  TIERSIM_HD Vec4<T> pos_mass(int i) const { return posm[i]; }
  TIERSIM_HD Vec3<T> pos(int i) const {
    const Vec4<T> q = posm[i];
    return {q.x, q.y, q.z};
  }
  TIERSIM_HD Vec3<T> vel(int i) const {
    const Vec4<T> q = v[i];
    return {q.x, q.y, q.z};
  }
  TIERSIM_HD Vec3<T> acc(int i) const {
    const Vec4<T> q = a[i];
    return {q.x, q.y, q.z};
  }
  TIERSIM_HD T mass(int i) const { return posm[i].w; }
  TIERSIM_HD void set_pos(int i, Vec3<T> p) const { posm[i] = {p.x, p.y, p.z, posm[i].w}; }
  TIERSIM_HD void set_vel(int i, Vec3<T> q) const { v[i] = {q.x, q.y, q.z, T(0)}; }
  TIERSIM_HD void set_acc(int i, Vec3<T> q) const { a[i] = {q.x, q.y, q.z, T(0)}; }
  TIERSIM_HD void set_mass(int i, T mm) const { posm[i].w = mm; }
};

// ---- The layout list -----------------------------------------------------------------------
// Every particle layout, once: X(view) for each view over the scalar T. with_layout(),
// ParticleView<L, T>, ParticleViews<T> and the CUDA kernels' explicit instantiations
// (TIERSIM_PARTICLE_VIEWS(INSTANTIATE, float) TIERSIM_PARTICLE_VIEWS(INSTANTIATE, double)) all
// expand it, so a new layout is its view above, one entry here and its Flag<Layout> entry.
#define TIERSIM_PARTICLE_VIEWS(X, T) X(AoSView<T>) X(SoAView<T>) X(AoSoAView<T>) X(Float4View<T>)

template <class... Views>
struct ViewList {
  static constexpr std::size_t size = sizeof...(Views);
};
namespace detail {
template <class Sentinel, class... Views>
struct DropSentinel {
  using type = ViewList<Views...>;
};
}  // namespace detail
// The views over scalar T, in list order (the list expands to ", V" after a leading void).
#define TIERSIM_VIEW_LIST_ENTRY(V) , V
template <class T>
using ParticleViews = typename detail::DropSentinel<void TIERSIM_PARTICLE_VIEWS(TIERSIM_VIEW_LIST_ENTRY, T)>::type;
#undef TIERSIM_VIEW_LIST_ENTRY

static_assert(ParticleViews<float>::size == Flag<Layout>::values.size(),
              "every --layout value of base/strategy.hpp needs its view in TIERSIM_PARTICLE_VIEWS, and back");

namespace detail {
template <Layout L, class... Views>
struct FindView;  // no view for L in the list: incomplete, an error
template <Layout L, class V, class... Views>
struct FindView<L, V, Views...> : std::conditional_t<V::layout == L, std::type_identity<V>, FindView<L, Views...>> {};
template <Layout L, class List>
struct FindViewIn;
template <Layout L, class... Views>
struct FindViewIn<L, ViewList<Views...>> : FindView<L, Views...> {};
}  // namespace detail

// The view type of layout L over scalar T.
template <Layout L, class T>
using ParticleView = typename detail::FindViewIn<L, ParticleViews<T>>::type;

template <Layout L>
struct LayoutTag {
  static constexpr Layout value = L;
};
template <class T>
struct ScalarTag {
  using type = T;
};

// The one switch that turns the run-time layout flag into a type: f(LayoutTag<L>{}). The cases
// come from the list; a Layout value without a view is a -Wswitch warning here and the
// static_assert above.
template <class F>
decltype(auto) with_layout(Layout l, F&& f) {
  switch (l) {
#define TIERSIM_LAYOUT_CASE(V) \
  case V::layout:              \
    return f(LayoutTag<V::layout>{});
    TIERSIM_PARTICLE_VIEWS(TIERSIM_LAYOUT_CASE, float)
#undef TIERSIM_LAYOUT_CASE
  }
  throw Error("unknown particle layout " + std::to_string(int(l)));
}

// The same for the precision flag: f(ScalarTag<float or double>{}).
template <class F>
decltype(auto) with_scalar(Precision p, F&& f) {
  if (p == Precision::Fp64) return f(ScalarTag<double>{});
  return f(ScalarTag<float>{});
}

// Both: f(LayoutTag<L>{}, ScalarTag<T>{}); ParticleView<L, T> is the view.
template <class F>
decltype(auto) with_layout_and_scalar(Layout l, Precision p, F&& f) {
  return with_layout(l, [&](auto layout_tag) -> decltype(auto) {
    return with_scalar(p, [&](auto scalar_tag) -> decltype(auto) { return f(layout_tag, scalar_tag); });
  });
}

// Host-owned store of one layout: an aligned buffer and its view.
template <class View>
class HostParticleStore {
 public:
  explicit HostParticleStore(int n) : n_(n), bytes_(View::bytes(n)) {
    buffer_.reset(static_cast<char*>(::operator new[](bytes_, std::align_val_t{kArrayAlign})));
  }
  View view() const { return View(buffer_.get(), n_); }
  void* data() const { return buffer_.get(); }
  std::size_t bytes() const { return bytes_; }
  int size() const { return n_; }

 private:
  struct AlignedDelete {
    void operator()(char* p) const { ::operator delete[](p, std::align_val_t{kArrayAlign}); }
  };
  int n_;
  std::size_t bytes_;
  std::unique_ptr<char[], AlignedDelete> buffer_;
};

// Plain double-precision bodies: what initial conditions produce, what output and the
// reference code consume. Converting to and from any view is the tested layout conversion.
struct Bodies {
  std::vector<Vec3<double>> pos, vel, acc;
  std::vector<double> mass;
  std::size_t size() const { return mass.size(); }
  void resize(std::size_t n) {
    pos.resize(n);
    vel.resize(n);
    acc.resize(n);
    mass.resize(n);
  }
};

template <class View>
void store_bodies(const Bodies& src, const View& dst) {
  using T = typename View::scalar;
  for (int i = 0; i < dst.n; ++i) {
    dst.set_mass(i, T(src.mass[i]));
    dst.set_pos(i, {T(src.pos[i].x), T(src.pos[i].y), T(src.pos[i].z)});
    dst.set_vel(i, {T(src.vel[i].x), T(src.vel[i].y), T(src.vel[i].z)});
    dst.set_acc(i, {T(src.acc[i].x), T(src.acc[i].y), T(src.acc[i].z)});
  }
}

template <class View>
Bodies load_bodies(const View& src) {
  Bodies out;
  out.resize(src.n);
  for (int i = 0; i < src.n; ++i) {
    const auto p = src.pos(i), v = src.vel(i), a = src.acc(i);
    out.pos[i] = {double(p.x), double(p.y), double(p.z)};
    out.vel[i] = {double(v.x), double(v.y), double(v.z)};
    out.acc[i] = {double(a.x), double(a.y), double(a.z)};
    out.mass[i] = double(src.mass(i));
  }
  return out;
}

// Layout conversion between any two views of the same n.
template <class Src, class Dst>
void convert_layout(const Src& src, const Dst& dst) {
  using T = typename Dst::scalar;
  for (int i = 0; i < src.n; ++i) {
    const auto p = src.pos(i), v = src.vel(i), a = src.acc(i);
    dst.set_mass(i, T(src.mass(i)));
    dst.set_pos(i, {T(p.x), T(p.y), T(p.z)});
    dst.set_vel(i, {T(v.x), T(v.y), T(v.z)});
    dst.set_acc(i, {T(a.x), T(a.y), T(a.z)});
  }
}

}  // namespace tiersim
