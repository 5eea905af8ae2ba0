#include "io/xdmf.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "io/snapshot_index.hpp"

namespace tiersim {

namespace {

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string dims_text(const std::vector<std::uint64_t>& d) {
  std::string s;
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (i) s += ' ';
    s += std::to_string(d[i]);
  }
  return s;
}

// Shortest text that reads back as the same double.
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void data_item(std::ostringstream& o, const std::string& h5, const XdmfArray& a, const char* indent) {
  o << indent << "<DataItem Dimensions=\"" << dims_text(a.dims) << "\" NumberType=\"" << (a.floating ? "Float" : "Int")
    << "\" Precision=\"" << a.precision << "\" Format=\"HDF\">" << xml_escape(a.file.empty() ? h5 : a.file) << ":"
    << xml_escape(a.dataset) << "</DataItem>\n";
}

}  // namespace

std::string xdmf_document(const std::string& h5_name, const std::vector<XdmfCollection>& collections) {
  std::ostringstream o;
  o << "<?xml version=\"1.0\" ?>\n"
       "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
       "<!-- tiersim snapshots: open this file in ParaView. Data in snapshots.d/step_*.h5, one file "
       "per output step; "
    << xml_escape(h5_name)
    << " indexes them in the H5MD 1.1 layout. -->\n"
       "<Xdmf xmlns:xi=\"http://www.w3.org/2001/XInclude\" Version=\"3.0\">\n"
       "  <Domain>\n";
  for (const XdmfCollection& c : collections) {
    if (c.steps.empty()) continue;
    o << "    <Grid Name=\"" << xml_escape(c.name) << "\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
    for (const XdmfGridStep& s : c.steps) {
      o << "      <Grid Name=\"" << xml_escape(c.name) << "_step_" << s.step << "\" GridType=\"Uniform\">\n"
        << "        <Time Value=\"" << num(s.time) << "\"/>\n";
      if (s.particles) {
        o << "        <Topology TopologyType=\"Polyvertex\" NumberOfElements=\"" << s.points
          << "\" NodesPerElement=\"1\">\n";
        data_item(o, h5_name, s.connectivity, "          ");
        o << "        </Topology>\n"
          << "        <Geometry GeometryType=\"XYZ\">\n";
        data_item(o, h5_name, s.position, "          ");
        o << "        </Geometry>\n";
      } else {
        o << "        <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"" << s.nz << " " << s.ny << " " << s.nx
          << "\"/>\n"
          << "        <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n"
          << "          <DataItem Name=\"Origin\" Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">"
          << num(s.origin[2]) << " " << num(s.origin[1]) << " " << num(s.origin[0]) << "</DataItem>\n"
          << "          <DataItem Name=\"Spacing\" Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" "
             "Format=\"XML\">"
          << num(s.spacing[2]) << " " << num(s.spacing[1]) << " " << num(s.spacing[0]) << "</DataItem>\n"
          << "        </Geometry>\n";
      }
      for (const XdmfArray& a : s.attributes) {
        o << "        <Attribute Name=\"" << xml_escape(a.name) << "\" AttributeType=\""
          << (a.vector ? "Vector" : "Scalar") << "\" Center=\"Node\">\n";
        data_item(o, h5_name, a, "          ");
        o << "        </Attribute>\n";
      }
      o << "      </Grid>\n";
    }
    o << "    </Grid>\n";
  }
  o << "  </Domain>\n</Xdmf>\n";
  return o.str();
}

std::vector<XdmfCollection> xdmf_collections(const SnapshotIndex& index) {
  using Field = SnapshotIndex::Field;
  const auto& particle_rows = index.particle_rows;
  const auto& fields = index.fields;
  const std::uint64_t n_particles = index.n_particles;
  std::vector<XdmfCollection> out;
  const int prec = index.double_precision ? 8 : 4;
  if (!particle_rows.empty()) {
    const std::string first = step_file_name(particle_rows.front().step);
    XdmfCollection c{"particles", {}};
    for (const SnapshotIndex::ParticleRow& row : particle_rows) {
      const std::string file = step_file_name(row.step);
      XdmfGridStep s;
      s.step = row.step;
      s.time = row.time;
      s.particles = true;
      s.points = n_particles;
      s.position = {"position", file, "/particles/position", {n_particles, 3}, true, prec, true};
      s.connectivity = {"id", first, "/particles/id", {n_particles}, false, 8, false};
      s.attributes.push_back({"velocity", file, "/particles/velocity", {n_particles, 3}, true, prec, true});
      s.attributes.push_back({"mass", first, "/particles/mass", {n_particles}, true, prec, false});
      s.attributes.push_back({"id", first, "/particles/id", {n_particles}, false, 8, false});
      c.steps.push_back(std::move(s));
    }
    out.push_back(std::move(c));
  }
  // Fields sharing a geometry go into one collection: one grid per step with every field
  // written at that step.
  std::vector<bool> used(fields.size(), false);
  int group = 0;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (used[i] || fields[i].rows.empty()) continue;
    const GridGeometry& g = fields[i].g;
    auto same = [&](const GridGeometry& o) {
      return o.nx == g.nx && o.ny == g.ny && o.nz == g.nz && std::equal(o.origin, o.origin + 3, g.origin) &&
             std::equal(o.spacing, o.spacing + 3, g.spacing);
    };
    std::map<std::int64_t, XdmfGridStep> by_step;
    for (std::size_t j = i; j < fields.size(); ++j) {
      if (used[j] || !same(fields[j].g)) continue;
      used[j] = true;
      const Field& f = fields[j];
      for (const auto& [step, time] : f.rows) {
        auto [it, fresh] = by_step.try_emplace(step);
        XdmfGridStep& s = it->second;
        if (fresh) {
          s.step = step;
          s.time = time;
          s.particles = false;
          s.nx = g.nx;
          s.ny = g.ny;
          s.nz = g.nz;
          std::copy(g.origin, g.origin + 3, s.origin);
          std::copy(g.spacing, g.spacing + 3, s.spacing);
        }
        s.attributes.push_back({f.name,
                                step_file_name(step),
                                "/fields/" + f.name,
                                {hsize_t(g.nz), hsize_t(g.ny), hsize_t(g.nx)},
                                true,
                                f.double_precision ? 8 : 4,
                                false});
      }
    }
    XdmfCollection c{group == 0 ? "fields" : "fields_" + std::to_string(group + 1), {}};
    for (auto& kv : by_step) c.steps.push_back(std::move(kv.second));
    out.push_back(std::move(c));
    ++group;
  }
  return out;
}

}  // namespace tiersim
