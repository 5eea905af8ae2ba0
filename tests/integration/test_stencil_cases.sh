#!/usr/bin/env bash
# The three stencil cases run from the CLI (CPU backend, reduced sizes) and write a grid time
# series: fields in snapshots.h5, a 3DCoRectMesh temporal collection in snapshots.xmf, telemetry
# rows for the halo fill and the update kernel. An unstable dt is refused with the limit named.
set -eu
TIERSIM=$1
WORK=$2
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$(dirname "$0")/../.."

run() {  # run <case> <name> <args...>
  local c=$1 n=$2; shift 2
  "$TIERSIM" run "cases/$c.toml" --backend cpu --out "$WORK/$n" --quiet "$@"
  for f in snapshots.h5 snapshots.xmf telemetry.csv summary.json case.toml; do
    test -s "$WORK/$n/$f" || { echo "FAIL: $n: $f missing"; exit 1; }
  done
  grep -q 'CollectionType="Temporal"' "$WORK/$n/snapshots.xmf" || { echo "FAIL: $n: no temporal collection"; exit 1; }
  grep -q '3DCoRectMesh' "$WORK/$n/snapshots.xmf" || { echo "FAIL: $n: no 3DCoRectMesh"; exit 1; }
  echo "ok: $c"
}
run heat heat --set grid.n=24 --set run.steps=10 --set run.snapshot_every=5 --set run.dt=1e-4
grep -q '/fields/u' "$WORK/heat/snapshots.xmf"
[ "$(grep -c '3DCoRectMesh' "$WORK/heat/snapshots.xmf")" -ge 3 ] || { echo "FAIL: heat: expected 3 time steps"; exit 1; }
grep -q 'stencil_heat_cpu' "$WORK/heat/telemetry.csv"
grep -q 'stencil_halo_cpu' "$WORK/heat/telemetry.csv"
run wave wave --set grid.n=24 --set run.steps=20 --set run.snapshot_every=10
grep -q '/fields/u' "$WORK/wave/snapshots.xmf"
run gray_scott gs --set grid.n=16 --set run.steps=20 --set run.snapshot_every=10
grep -q '/fields/U' "$WORK/gs/snapshots.xmf"
grep -q '/fields/V' "$WORK/gs/snapshots.xmf"

# Unstable dt: refused on one line with the limit, accepted with stencil.force.
if out=$("$TIERSIM" run cases/heat.toml --backend cpu --set run.dt=1e-3 --out "$WORK/bad" 2>&1); then
  echo "FAIL: unstable dt accepted"; exit 1
fi
[[ "$out" == *"exceeds the explicit stability limit 3.05176e-05"* ]] || { echo "FAIL: message: $out"; exit 1; }
"$TIERSIM" run cases/heat.toml --backend cpu --set run.dt=3.1e-5 --set stencil.force=true --set grid.n=16 \
  --set run.steps=2 --out "$WORK/forced" --quiet
echo "stencil cases ok"
