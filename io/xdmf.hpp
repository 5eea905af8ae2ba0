// snapshots.xmf: the XDMF (v3) sidecar ParaView opens. One temporal collection
// (CollectionType="Temporal") per kind of data (particles; each grid geometry), one Uniform grid per
// snapshot. Every DataItem names a whole HDF5 dataset in a file relative to the .xmf
// ("snapshots.d/step_000000000100.h5:/particles/position").
//
// Why whole datasets rather than HyperSlab items into H5MD's value[T][N][3]: ParaView 5.11's
// Xdmf3 readers (the default reader, Xdmf3ReaderS, and Xdmf3ReaderT) log "Skipping unrecognized
// array type [None]" and return 0 points for a HyperSlab item, while the legacy XDMFReader reads
// it; a plain HDF DataItem works with all of them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tiersim {

struct SnapshotIndex;  // io/snapshot_index.hpp

struct XdmfArray {
  std::string name;                 // attribute name ("velocity"); unused for geometry
  std::string file;                 // HDF5 file relative to the .xmf (empty: the h5_name below)
  std::string dataset;              // HDF5 path inside it ("/particles/velocity")
  std::vector<std::uint64_t> dims;  // slowest first
  bool floating = true;             // Float or Int
  int precision = 8;                // bytes
  bool vector = false;              // AttributeType Vector (else Scalar)
};

struct XdmfGridStep {
  std::int64_t step = 0;
  double time = 0;
  // Particles: Polyvertex topology of `points` one-node cells whose connectivity is `connectivity`
  // (the ids 0..N-1: Xdmf3 makes no cells from NumberOfElements alone), geometry XYZ from `position`.
  // Grid: 3DCoRectMesh of nz*ny*nx points (origin/spacing in x, y, z order; written z, y, x).
  bool particles = true;
  std::uint64_t points = 0;
  XdmfArray position;
  XdmfArray connectivity;
  int nx = 0, ny = 0, nz = 0;
  double origin[3] = {0, 0, 0};
  double spacing[3] = {1, 1, 1};
  std::vector<XdmfArray> attributes;  // point-centred
};

struct XdmfCollection {
  std::string name;  // "particles", "fields"
  std::vector<XdmfGridStep> steps;
};

// The whole document. h5_name: the HDF5 file name relative to the .xmf ("snapshots.h5").
std::string xdmf_document(const std::string& h5_name, const std::vector<XdmfCollection>& collections);

// The collections of everything `index` holds: particles, and one per grid geometry.
std::vector<XdmfCollection> xdmf_collections(const SnapshotIndex& index);

}  // namespace tiersim
