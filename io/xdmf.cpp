#include "io/xdmf.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "base/strategy.hpp"

namespace tiersim {

namespace {

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
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
  o << indent << "<DataItem Dimensions=\"" << dims_text(a.dims) << "\" NumberType=\""
    << (a.floating ? "Float" : "Int") << "\" Precision=\"" << a.precision << "\" Format=\"HDF\">"
    << xml_escape(a.file.empty() ? h5 : a.file) << ":" << xml_escape(a.dataset) << "</DataItem>\n";
}

}  // namespace

std::string xdmf_document(const std::string& h5_name, const std::vector<XdmfCollection>& collections) {
  std::ostringstream o;
  o << "<?xml version=\"1.0\" ?>\n"
       "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
       "<!-- tiersim snapshots: open this file in ParaView. Data in snapshots.d/step_*.h5, one file "
       "per output step; "
    << xml_escape(h5_name) << " indexes them in the H5MD 1.1 layout. -->\n"
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
          << "          <DataItem Name=\"Spacing\" Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">"
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

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(tmp + ": cannot create: " + std::strerror(errno));
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error(tmp + ": write failed: " + std::strerror(e));
    }
    done += static_cast<std::size_t>(w);
  }
  // fsync: the rename must not become durable before the contents (power loss, not only kill -9).
  const int synced = ::fsync(fd);
  int e = errno;
  const int closed = ::close(fd);
  if (closed != 0) e = errno;
  if (synced != 0 || closed != 0) {
    ::unlink(tmp.c_str());
    throw Error(tmp + ": flush failed: " + std::strerror(e));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw Error(path + ": cannot replace: " + std::strerror(e));
  }
}

}  // namespace tiersim
