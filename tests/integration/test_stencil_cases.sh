#!/usr/bin/env bash
# The stencil cases run from the CLI (CPU backend, reduced sizes) and write a grid time
# series: fields in snapshots.h5, read back through the HDF5 API (check_output_readable.py, and
# check_stencil_fields.py: shape, steps, times, origin/spacing, observables, index = step files),
# a 3DCoRectMesh temporal collection in snapshots.xmf, telemetry rows for the halo fill and the
# update kernel. An unstable dt is refused with the limit named. The state's parts: one per output
# step, named by the step file and the checkpoint, none left of replaced checkpoints.
set -eu
source "$(dirname "$0")/prologue.sh"
require_h5py

run() {  # run <case> <name> <args...>
  local c=$1 n=$2; shift 2
  "$TIERSIM" run "cases/$c.toml" --backend cpu --out "$WORK/$n" --quiet "$@"
  for f in snapshots.h5 snapshots.xmf telemetry.csv summary.json case.toml; do
    test -s "$WORK/$n/$f" || { echo "FAIL: $n: $f missing"; exit 1; }
  done
  grep -q 'CollectionType="Temporal"' "$WORK/$n/snapshots.xmf" || { echo "FAIL: $n: no temporal collection"; exit 1; }
  grep -q '3DCoRectMesh' "$WORK/$n/snapshots.xmf" || { echo "FAIL: $n: no 3DCoRectMesh"; exit 1; }
  $PY tests/integration/check_output_readable.py "$WORK/$n" >/dev/null || { echo "FAIL: $n: output unreadable"; exit 1; }
  echo "ok: $c"
}
# Unequal nx, ny, nz: the [T][nz][ny][nx] order is checked, not assumed.
run heat heat --set grid.nx=24 --set grid.ny=20 --set grid.nz=16 --set run.steps=10 --set run.snapshot_every=5 \
  --set run.dt=1e-4
$PY tests/integration/check_stencil_fields.py "$WORK/heat" heat 24 20 16 0.041666666666666667 1e-4 0 5 10
grep -q '/fields/u' "$WORK/heat/snapshots.xmf"
[ "$(grep -c '3DCoRectMesh' "$WORK/heat/snapshots.xmf")" -ge 3 ] || { echo "FAIL: heat: expected 3 time steps"; exit 1; }
grep -q 'stencil_heat_cpu' "$WORK/heat/telemetry.csv"
grep -q 'stencil_halo_cpu' "$WORK/heat/telemetry.csv"
run wave wave --set grid.nx=24 --set grid.ny=22 --set grid.nz=20 --set run.steps=20 --set run.snapshot_every=10
$PY tests/integration/check_stencil_fields.py "$WORK/wave" wave 24 22 20 0.041666666666666667 8e-4 0 10 20
grep -q '/fields/u' "$WORK/wave/snapshots.xmf"
run gray_scott gs --set grid.nx=16 --set grid.ny=12 --set grid.nz=10 --set grid.length=16.0 --set run.steps=20 \
  --set run.snapshot_every=10
$PY tests/integration/check_stencil_fields.py "$WORK/gs" gray-scott 16 12 10 1.0 0.5 0 10 20
grep -q '/fields/U' "$WORK/gs/snapshots.xmf"
grep -q '/fields/V' "$WORK/gs/snapshots.xmf"
run allen_cahn ac --set grid.nx=20 --set grid.ny=16 --set grid.nz=12 --set grid.length=0.3125 --set run.steps=20 \
  --set run.snapshot_every=10
$PY tests/integration/check_stencil_fields.py "$WORK/ac" allen-cahn 20 16 12 0.015625 0.04 0 10 20
grep -q '/fields/u' "$WORK/ac/snapshots.xmf"
grep -q 'stencil_allen_cahn_cpu' "$WORK/ac/telemetry.csv"

# Unstable dt: heat.toml's limit is 3.05176e-05 (n = 64, R = 2); 3.1e-5 is just above it. The command
# is refused on one line with the limit and writes nothing; the same command with stencil.force
# runs, with one warning on stderr naming the limit; a stable run does not warn.
unstable=(run cases/heat.toml --backend cpu --set run.dt=3.1e-5 --set run.steps=2 --quiet)
if out=$("$TIERSIM" "${unstable[@]}" --out "$WORK/bad" 2>&1); then
  echo "FAIL: unstable dt accepted: $out"; exit 1
fi
[[ "$out" == "tiersim: error: run.dt = 3.1e-05 exceeds the explicit stability limit 3.05176e-05 ("*"stencil.force = true" ]] ||
  { echo "FAIL: refusal message: $out"; exit 1; }
[ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || { echo "FAIL: refusal is not one line: $out"; exit 1; }
test ! -e "$WORK/bad" || { echo "FAIL: the refused run wrote $WORK/bad"; exit 1; }
err=$("$TIERSIM" "${unstable[@]}" --set stencil.force=true --out "$WORK/forced" 2>&1 >/dev/null) ||
  { echo "FAIL: forced run failed: $err"; exit 1; }
[[ "$err" == *"tiersim: warning: run.dt = 3.1e-05 exceeds the explicit stability limit 3.05176e-05 ("*"running anyway (stencil.force = true)"* ]] ||
  { echo "FAIL: forced run did not warn: $err"; exit 1; }
test -s "$WORK/forced/snapshots.h5" || { echo "FAIL: forced run wrote no output"; exit 1; }
err=$("$TIERSIM" run cases/heat.toml --backend cpu --set run.dt=3e-5 --set run.steps=2 --quiet --out "$WORK/stable" 2>&1 >/dev/null)
[[ "$err" != *"warning"* ]] || { echo "FAIL: stable run warned: $err"; exit 1; }

# The state is written once per output step, in a part the step file and the checkpoint both
# name: with a checkpoint every 3 steps and a snapshot every 10, the parts of the checkpoint-only
# steps go once a later checkpoint replaces theirs, during the run and after a restart; the parts
# of the snapshot steps stay, and the step files' fields are virtual datasets over them.
"$TIERSIM" run cases/heat.toml --backend cpu --set grid.n=16 --steps 12 --set run.snapshot_every=10 \
  --set run.checkpoint_every=3 -q --out "$WORK/parts" >/dev/null || { echo "FAIL: parts run"; exit 1; }
"$TIERSIM" run --restart "$WORK/parts" --steps 20 -q >/dev/null || { echo "FAIL: parts restart"; exit 1; }
got=$(cd "$WORK/parts/snapshots.d" && ls | tr '\n' ' ')
want="part_000000000000_r000000.h5 part_000000000010_r000000.h5 part_000000000012_r000000.h5 part_000000000020_r000000.h5 step_000000000000.h5 step_000000000010.h5 step_000000000012.h5 step_000000000020.h5 "
[ "$got" = "$want" ] || { echo "FAIL: snapshots.d holds: $got"; exit 1; }
$PY - "$WORK/parts" <<'PYEOF' || exit 1
import h5py, sys
d = sys.argv[1]
with h5py.File(d + "/snapshots.d/step_000000000020.h5", "r") as f, h5py.File(d + "/checkpoint.h5", "r") as c:
    u, s = f["/fields/u"], c["/state/field0"]
    if not (u.is_virtual and s.is_virtual) or [v.file_name for v in u.virtual_sources()] != ["part_000000000020_r000000.h5"]:
        sys.exit("FAIL: the step file's u and the checkpoint's field0 do not name the step's part")
    if (u[...].ravel() != s[...]).any():
        sys.exit("FAIL: the step file's u and the checkpoint's field0 differ")
PYEOF
echo "stencil cases ok"
