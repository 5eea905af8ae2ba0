#include "io/observable_series.hpp"

#include "base/error.hpp"

namespace tiersim {

void write_observable_series(const Hdf5Calls& h5, hid_t file, const ObservableRows& rows) {
  Hdf5Handle og = h5.make_group(file, "observables");
  for (const auto& [name, s] : rows) {
    Hdf5Handle g = h5.make_group(og, name);
    h5.write_checked(g, "step", H5T_STD_I64LE, H5T_NATIVE_INT64, s.step);
    h5.write_checked(g, "time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, s.time);
    h5.write_checked(g, "value", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, s.value);
  }
}

ObservableRows read_observable_series(const Hdf5Calls& h5, hid_t file, const std::string& path,
                                      std::uint64_t max_values) {
  ObservableRows rows;
  Hdf5Handle og = h5.group(file, "/observables");
  for (const std::string& name : link_names(og)) {
    const std::string where = "/observables/" + name;
    Hdf5Handle g = h5.group(og, name);
    ObservableSeries s;
    s.step = h5.read_array<std::int64_t>(g, where + "/step", H5T_NATIVE_INT64, max_values);
    s.time = h5.read_array<double>(g, where + "/time", H5T_NATIVE_DOUBLE, max_values);
    s.value = h5.read_array<double>(g, where + "/value", H5T_NATIVE_DOUBLE, max_values);
    if (s.time.size() != s.step.size() || s.value.size() != s.step.size())
      throw Error(path + ": " + where + ": step, time and value disagree");
    rows[name] = std::move(s);
  }
  return rows;
}

}  // namespace tiersim
