#!/bin/bash
# ParaView opens snapshots.xmf of an N-body run: default reader, XDMFReader, Xdmf3ReaderS and
# Xdmf3ReaderT; first and last time; points, cells, bounds, velocity/speed/mass/id ranges; a PNG.
source "$(dirname "$0")/paraview_common.sh" || { echo "FAIL: cannot source paraview_common.sh"; exit 1; }
require_paraview
rm -rf "$WORK"
run_tiersim plummer cases/plummer.toml --set run.steps=20 --set run.snapshot_every=5
check_in_paraview plummer particles snapshots.xmf
echo "PASS"
