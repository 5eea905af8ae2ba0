#!/bin/bash
# ParaView opens snapshots.xmf of a stencil run (3DCoRectMesh): default reader, XDMFReader,
# Xdmf3ReaderS and Xdmf3ReaderT, by ./snapshots.xmf and by its absolute path; first and last time;
# points, cells, bounds, field ranges, and the coordinates and values of points off every symmetry
# line against snapshots.h5; a PNG. nx, ny, nz and the spacings all differ, so an exchange of two
# axes in the dimensions, spacing or data cannot pass. Also a flat grid (nz = 1), whose PNG must
# show the plane face-on.
source "$(dirname "$0")/paraview_common.sh" || { echo "FAIL: cannot source paraview_common.sh"; exit 1; }
require_paraview
rm -rf "$WORK"
run_tiersim heat cases/heat.toml --set run.steps=20 --set run.snapshot_every=10 \
  --set grid.nx=20 --set grid.ny=16 --set grid.nz=12 --set grid.hy=0.03 --set grid.hz=0.07
check_in_paraview heat fields snapshots.xmf
# An Allen-Cahn run (its field u, values of both signs): the same checks.
run_tiersim allen_cahn cases/allen_cahn.toml --set run.steps=20 --set run.snapshot_every=10 \
  --set grid.nx=20 --set grid.ny=16 --set grid.nz=12 --set grid.length=0.3125 --set grid.hy=0.018 --set grid.hz=0.02
check_in_paraview allen_cahn fields snapshots.xmf
# A flat grid (nz = 1): read the same way, and rendered face-on (a slice across it is a line).
run_tiersim flat cases/heat.toml --set run.steps=20 --set run.snapshot_every=10 \
  --set grid.nx=24 --set grid.ny=16 --set grid.nz=1 --set grid.hy=0.04 --set grid.radius=1
check_in_paraview flat fields snapshots.xmf
echo "PASS"
