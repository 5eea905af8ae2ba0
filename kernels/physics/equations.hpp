// The stencil equations: each traits type (kernels/physics/equations/*.hpp) listed once, here.
// Everything equation-specific is instantiated from this list: the CPU loop and the CUDA kernels
// (one instantiation per listed equation), the model, the case keys (stencil.equation's values
// and each equation's section), the benchmarks and the tests. An equation is chosen at run time
// by its Equation value (its position in the list) and turned into its type once, by
// with_equation(); a traits type that lacks a member fails to compile here
// (check_stencil_equation), and there is no equation the dispatch could fall through to.
#pragma once

#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "kernels/physics/equation.hpp"
#include "kernels/physics/equations/allen_cahn.hpp"
#include "kernels/physics/equations/gray_scott.hpp"
#include "kernels/physics/equations/heat.hpp"
#include "kernels/physics/equations/wave.hpp"

namespace tiersim {

// Compile-time check of what kernels/physics/equation.hpp says an equation holds. (Written with
// decltype and std::declval, not requires-expressions with parameters, which nvcc's front end
// does not take.)
template <class E>
constexpr bool check_stencil_equation() {
  using C = typename E::Constants;
  using PF = typename E::template Params<float>;
  using PD = typename E::template Params<double>;
  using Arr = float[E::kFields];
  static_assert(std::is_convertible_v<decltype(E::kName), const char*>, "equation: kName");
  static_assert(std::is_convertible_v<decltype(E::kKernelTag), const char*>, "equation: kKernelTag");
  static_assert(E::kFields == 1 || E::kFields == 2, "equation: kFields must be 1 or 2 (what the kernels read)");
  static_assert(std::is_same_v<decltype(E::kPreviousLevel), const bool>, "equation: kPreviousLevel");
  static_assert(!E::kPreviousLevel || E::kFields == 1, "equation: a previous time level needs one field");
  static_assert(E::kStateNames.size() == std::size_t(E::kFields + (E::kPreviousLevel ? 1 : 0)),
                "equation: kStateNames names the fields, then the previous level");
  static_assert(E::kFieldAccessesPerPoint == 2 * E::kFields + (E::kPreviousLevel ? 1 : 0),
                "equation: kFieldAccessesPerPoint is each input read once (the previous level included) and each "
                "output written once");
  static_assert(std::is_same_v<decltype(E::kGridUnits), const bool>, "equation: kGridUnits");
  static_assert(std::is_default_constructible_v<C>, "equation: Constants");
  static_assert(std::is_same_v<decltype(E::template params<float>(std::declval<const C&>(), 1.0)), PF> &&
                    std::is_same_v<decltype(E::template params<double>(std::declval<const C&>(), 1.0)), PD>,
                "equation: params<T>(constants, dt) -> Params<T>");
  static_assert(std::is_void_v<decltype(E::update(std::declval<const PF&>(), std::declval<const Arr&>(),
                                                  std::declval<const Arr&>(), 0.0f, std::declval<Arr&>()))>,
                "equation: update(params, u[kFields], lap[kFields], u_prev, out[kFields])");
  static_assert(std::is_same_v<decltype(E::flops_per_point(1)), double>, "equation: flops_per_point(R)");
  static_assert(std::is_same_v<decltype(E::dt_limit(std::declval<const C&>(), 1.0)), double>,
                "equation: dt_limit(constants, rho)");
  static_assert(std::is_same_v<decltype(E::stability_rule(std::declval<const C&>())), std::string>,
                "equation: stability_rule(constants)");
  static_assert(std::is_same_v<decltype(E::fixed_boundary_value(std::declval<const C&>(), 0, 0.0)), double>,
                "equation: fixed_boundary_value(constants, state_field, grid_value)");
  static_assert(std::is_same_v<decltype(E::kHeadline), const Headline>, "equation: kHeadline");
  static_assert(std::is_convertible_v<decltype(E::kOwnBoundaryKeys), const char*>, "equation: kOwnBoundaryKeys");
  static_assert(std::is_same_v<std::remove_extent_t<std::remove_cv_t<decltype(E::kKeys)>>, EquationKey<C>>,
                "equation: kKeys, an array of EquationKey<Constants>");
  return true;
}

template <class... Eqs>
struct EquationList {
  static_assert((check_stencil_equation<Eqs>() && ...));
  static constexpr int size = int(sizeof...(Eqs));
  template <int I>
  using At = std::tuple_element_t<std::size_t(I), std::tuple<Eqs...>>;
  template <class Eq>
  static constexpr int index_of() {  // -1: not listed
    constexpr bool same[] = {std::is_same_v<Eq, Eqs>...};
    for (int i = 0; i < size; ++i)
      if (same[i]) return i;
    return -1;
  }
  // Every listed equation's constants, one member each (StencilProblem holds them).
  using ConstantsTuple = std::tuple<typename Eqs::Constants...>;
  template <class F>
  static void for_each(F&& f) {
    (f(Eqs{}), ...);
  }
};

// The list. A new equation: its traits header, included above, and its type here (the Equation
// name below is a convenience for code and tests that name one).
using StencilEquations = EquationList<equations::Heat, equations::Wave, equations::GrayScott, equations::AllenCahn>;

// An equation at run time: its position in StencilEquations.
enum class Equation : int {
  Heat = StencilEquations::index_of<equations::Heat>(),
  Wave = StencilEquations::index_of<equations::Wave>(),
  GrayScott = StencilEquations::index_of<equations::GrayScott>(),
  AllenCahn = StencilEquations::index_of<equations::AllenCahn>(),
};

template <class Eq>
constexpr Equation equation_of() {
  static_assert(StencilEquations::index_of<Eq>() >= 0, "not in StencilEquations");
  return Equation(StencilEquations::index_of<Eq>());
}

namespace detail {
template <int I, class F>
decltype(auto) visit_equation(int index, F&& f) {
  using Eq = StencilEquations::At<I>;
  if constexpr (I + 1 == StencilEquations::size) {
    if (index != I) throw Error("stencil: no equation number " + std::to_string(index));
    return f(Eq{});
  } else {
    if (index == I) return f(Eq{});
    return visit_equation<I + 1>(index, std::forward<F>(f));
  }
}
}  // namespace detail

// f(Eq{}) with the traits type of e; f returns the same type for every equation.
template <class F>
decltype(auto) with_equation(Equation e, F&& f) {
  return detail::visit_equation<0>(int(e), std::forward<F>(f));
}

inline std::vector<Equation> all_equations() {
  std::vector<Equation> v;
  StencilEquations::for_each([&](auto eq) { v.push_back(equation_of<decltype(eq)>()); });
  return v;
}

inline const char* name(Equation e) {
  return with_equation(e, [](auto eq) { return decltype(eq)::kName; });
}

inline const char* kernel_tag(Equation e) {
  return with_equation(e, [](auto eq) { return decltype(eq)::kKernelTag; });
}

inline std::vector<std::string> equation_names() {
  std::vector<std::string> v;
  StencilEquations::for_each([&](auto eq) { v.emplace_back(decltype(eq)::kName); });
  return v;
}

// "heat|wave|..." (sep between names).
inline std::string equation_choices(const char* sep = "|") {
  std::string s;
  StencilEquations::for_each([&](auto eq) { s += (s.empty() ? "" : sep) + std::string(decltype(eq)::kName); });
  return s;
}

inline Equation parse_equation(const std::string& s) {
  for (Equation e : all_equations())
    if (s == name(e)) return e;
  throw Error("stencil.equation: unknown value '" + s + "' (expected " + equation_choices() + ")");
}

}  // namespace tiersim
