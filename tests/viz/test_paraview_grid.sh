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
# scripts/render: a frame per snapshot (and a movie where ffmpeg is); what it cannot render is said
# in one line with a non-zero exit (a missing field once, not retried; a bad size or rate before
# ParaView starts), and no movie is claimed that was not made.
"$SRC_DIR/scripts/render" "$WORK/heat" --size 320x240 --fps 5 >"$WORK/render.log" 2>&1 ||
  { cat "$WORK/render.log"; die "scripts/render failed"; }
[ "$(ls "$WORK/heat/frames"/u_*.png | wc -l)" -eq 3 ] || die "scripts/render: expected 3 frames: $(ls "$WORK/heat/frames")"
if command -v ffmpeg >/dev/null; then [ -s "$WORK/heat/frames/u.mp4" ] || die "scripts/render: no movie"; fi
for bad in "--field nosuch|scripts/render: no field 'nosuch'" "--size 640|scripts/render: --size '640'" \
  "--fps 0|scripts/render: --fps '0'" "--out|scripts/render: --out needs a value"; do
  args=${bad%%|*} expected=${bad#*|}
  # shellcheck disable=SC2086  # the options are words
  out=$("$SRC_DIR/scripts/render" "$WORK/heat" $args 2>&1) && die "scripts/render $args succeeded"
  [ "$(printf '%s\n' "$out" | grep -c .)" -eq 1 ] && [[ "$out" == "$expected"* ]] ||
    die "scripts/render $args: expected one line '$expected...', got: $out"
  echo "ok: scripts/render $args refused: $out"
done
# An Allen-Cahn run (its field u, values of both signs): the same checks.
run_tiersim allen_cahn cases/allen_cahn.toml --set run.steps=20 --set run.snapshot_every=10 \
  --set grid.nx=20 --set grid.ny=16 --set grid.nz=12 --set grid.length=0.3125 --set grid.hy=0.018 --set grid.hz=0.02
check_in_paraview allen_cahn fields snapshots.xmf
# A flat grid (nz = 1): read the same way, and rendered face-on (a slice across it is a line).
run_tiersim flat cases/heat.toml --set run.steps=20 --set run.snapshot_every=10 \
  --set grid.nx=24 --set grid.ny=16 --set grid.nz=1 --set grid.hy=0.04 --set grid.radius=1
check_in_paraview flat fields snapshots.xmf
echo "PASS"
