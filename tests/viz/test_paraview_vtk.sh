#!/bin/bash
# --format xdmf,vtk: ParaView opens particles.pvd (.vtp per snapshot) and fields.pvd (.vti per
# snapshot) with its default reader; same checks as the XDMF tests against snapshots.h5.
source "$(dirname "$0")/paraview_common.sh" || { echo "FAIL: cannot source paraview_common.sh"; exit 1; }
require_paraview
rm -rf "$WORK"
mkdir -p "$WORK"
if ! "$TIERSIM" run "$SRC_DIR/cases/plummer.toml" --out "$WORK/probe" --force --quiet --set run.steps=1 \
     --format xdmf,vtk >"$WORK/probe.log" 2>&1; then
  grep -q "without VTK" "$WORK/probe.log" && skip "this tiersim was built without VTK: $(cat "$WORK/probe.log")"
  cat "$WORK/probe.log"
  die "tiersim run --format xdmf,vtk failed"
fi
[ -f "$WORK/probe/particles.pvd" ] ||
  die "--format xdmf,vtk was accepted but no particles.pvd was written (the run must pass parse_formats() into SnapshotOptions::formats)"
run_tiersim plummer cases/plummer.toml --set run.steps=20 --set run.snapshot_every=5 --format xdmf,vtk
check_in_paraview plummer particles particles.pvd --readers default
run_tiersim heat cases/heat.toml --set run.steps=20 --set run.snapshot_every=10 --set grid.n=24 --format xdmf,vtk
check_in_paraview heat fields fields.pvd --readers default
echo "PASS"
