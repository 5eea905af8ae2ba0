#!/bin/bash
# Runs on several ranks open in ParaView as one dataset: a grid split into z slabs over 3 ranks
# and a particle set split over 2, checked as the one-rank runs are (points, cells, bounds, ranges,
# values at points off the symmetry lines against snapshots.h5).
source "$(dirname "$0")/paraview_common.sh" || { echo "FAIL: cannot source paraview_common.sh"; exit 1; }
require_paraview
rm -rf "$WORK"
run_tiersim_ranks 3 heat cases/heat.toml --backend cpu --set run.steps=20 --set run.snapshot_every=10 \
  --set grid.nx=20 --set grid.ny=16 --set grid.nz=13 --set grid.hy=0.03 --set grid.hz=0.07
check_in_paraview heat fields snapshots.xmf
run_tiersim_ranks 2 plummer cases/plummer.toml --backend cpu --set run.steps=20 --set run.snapshot_every=5
check_in_paraview plummer particles snapshots.xmf
echo "PASS"
