#!/bin/bash
# ParaView opens snapshots.xmf of a stencil run (3DCoRectMesh): default reader, XDMFReader,
# Xdmf3ReaderS and Xdmf3ReaderT; first and last time; points, cells, bounds, field ranges; a PNG.
source "$(dirname "$0")/paraview_common.sh" || { echo "FAIL: cannot source paraview_common.sh"; exit 1; }
require_paraview
rm -rf "$WORK"
run_tiersim heat cases/heat.toml --set run.steps=20 --set run.snapshot_every=10 --set grid.n=24
check_in_paraview heat fields snapshots.xmf
echo "PASS"
