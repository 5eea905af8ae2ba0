#!/usr/bin/env bash
# Someone with write access to a run directory replaces the files tiersim writes, their .tmp
# names, or its subdirectories with symbolic links to files elsewhere: a restart, and the scripts
# that write into a run (scripts/plot), must never write through them. Every file outside the
# run stays byte for byte as it was; a link where tiersim reads its input is refused in one line.
set -u
source "$(dirname "$0")/prologue.sh"
require_h5py
fail=0
NB=(cases/plummer.toml --backend cpu --set nbody.count=32 --set run.snapshot_every=2 --set run.diagnostics_every=2 -q)

# Files outside any run: what the links point at.
mkdir -p "$WORK/outside/data"
for v in a b c d e f g h i j k l m n; do echo "precious $v" > "$WORK/outside/$v.txt"; done
echo "precious data" > "$WORK/outside/data/precious.txt"
outside_hash() { (cd "$WORK/outside" && find . -printf '%p %y %s\n' | LC_ALL=C sort; find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum; }
before=$(outside_hash)
check_outside() {  # check_outside <label>
  if [ "$(outside_hash)" != "$before" ]; then
    echo "FAIL: $1: a file outside the run was changed or removed:"; (cd "$WORK/outside" && ls -la . data; head -c 200 ./*.txt) | head -30
    fail=1; before=$(outside_hash)
  else
    echo "ok: $1: nothing outside the run changed"
  fi
}
# regular <dir> <names...>: each is now a regular file of the run, not a link.
regular() {
  local dir=$1; shift
  for f in "$@"; do
    if [ -L "$dir/$f" ] || [ ! -f "$dir/$f" ]; then echo "FAIL: $dir/$f is not a regular file after the run"; fail=1; fi
  done
}

# ---- Outputs replaced by links: a restart replaces the links, never writes through them ---------
"$TIERSIM" run "${NB[@]}" --steps 4 --format xdmf,vtk --out "$WORK/r" >/dev/null 2>&1 ||
  "$TIERSIM" run "${NB[@]}" --steps 4 --out "$WORK/r" >/dev/null || { echo "FAIL: first run"; exit 1; }
vtk=0; [ -d "$WORK/r/vtk" ] && vtk=1
ln -sf "$WORK/outside/a.txt" "$WORK/r/summary.json"
ln -sf "$WORK/outside/b.txt" "$WORK/r/case.toml"
ln -sf "$WORK/outside/c.txt" "$WORK/r/snapshots.xmf"
# ... and the .tmp names every write goes through, for files that exist and files still to come.
ln -sf "$WORK/outside/e.txt" "$WORK/r/summary.json.tmp"
ln -sf "$WORK/outside/f.txt" "$WORK/r/case.toml.tmp"
ln -sf "$WORK/outside/g.txt" "$WORK/r/snapshots.h5.tmp"
ln -sf "$WORK/outside/h.txt" "$WORK/r/snapshots.xmf.tmp"
ln -sf "$WORK/outside/i.txt" "$WORK/r/checkpoint.h5.tmp"
ln -sf "$WORK/outside/j.txt" "$WORK/r/snapshots.d/step_000000000006.h5.tmp"
ln -sf "$WORK/outside/k.txt" "$WORK/r/telemetry.csv.tmp"
if [ $vtk = 1 ]; then
  ln -sf "$WORK/outside/l.txt" "$WORK/r/particles.pvd"
  ln -sf "$WORK/outside/m.txt" "$WORK/r/vtk/particles_000000000006.vtp.tmp"
  ln -sf "$WORK/outside/n.txt" "$WORK/r/particles.pvd.tmp"
fi
fmt=(); [ $vtk = 1 ] && fmt=(--format xdmf,vtk)
out=$("$TIERSIM" run --restart "$WORK/r" --steps 8 "${fmt[@]}" -q 2>&1); rc=$?
echo "restart with links in place: rc=$rc $out"
check_outside "outputs and .tmp names replaced by links, then --restart"
[ $rc -eq 0 ] || { echo "FAIL: the restart with links in place failed"; fail=1; }
[ $rc -eq 0 ] && regular "$WORK/r" summary.json case.toml snapshots.xmf snapshots.h5 checkpoint.h5 snapshots.d/step_000000000006.h5
[ $rc -eq 0 ] && [ $vtk = 1 ] && regular "$WORK/r" particles.pvd vtk/particles_000000000006.vtp

# ---- Inputs a restart reads: a link there is refused, before anything is written ----------------
"$TIERSIM" run "${NB[@]}" --steps 4 --out "$WORK/in" >/dev/null || { echo "FAIL: run 'in'"; fail=1; }
refused_link() {  # refused_link <label> <file in the run> <expected>
  rm -rf "$WORK/in2"; cp -a "$WORK/in" "$WORK/in2"
  cp "$WORK/in2/$2" "$WORK/outside/data/copy"; rm "$WORK/in2/$2"; ln -s "$WORK/outside/data/copy" "$WORK/in2/$2"
  before=$(outside_hash)
  out=$("$TIERSIM" run --restart "$WORK/in2" --steps 8 -q 2>&1); rc=$?
  if [ $rc -eq 0 ] || [[ "$out" != *"$3"* ]] || [ "$(printf '%s\n' "$out" | grep -c .)" -ne 1 ]; then
    echo "FAIL: $1: rc=$rc: $out"; fail=1
  else
    echo "ok: $1: $out"
  fi
  check_outside "$1"
  rm -f "$WORK/outside/data/copy"; before=$(outside_hash)
}
refused_link "telemetry.csv a link" telemetry.csv "telemetry.csv: is a symbolic link"
refused_link "checkpoint.h5 a link" checkpoint.h5 "checkpoint.h5: is a symbolic link"

# ---- snapshots.d/ a link to another directory: its files are neither written nor deleted --------
"$TIERSIM" run "${NB[@]}" --steps 8 --set run.checkpoint_every=4 --out "$WORK/sd" >/dev/null || { echo "FAIL: run 'sd'"; fail=1; }
cp -a "$WORK/sd/snapshots.d/." "$WORK/outside/data/"
rm -rf "$WORK/sd/snapshots.d"; ln -s "$WORK/outside/data" "$WORK/sd/snapshots.d"
# A restart from the checkpoint of step 8 would write the step files of steps 10 and 12 there, and
# remove what no index names (precious.txt) from the directory the link points at.
"$PY" - "$WORK/sd/checkpoint.h5" <<'PYEOF'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    assert int(f.attrs["step"]) == 8
PYEOF
before=$(outside_hash)
out=$("$TIERSIM" run --restart "$WORK/sd" --steps 12 -q 2>&1); rc=$?
if [ $rc -eq 0 ] || [[ "$out" != *"snapshots.d: is a symbolic link"* ]]; then
  echo "FAIL: snapshots.d a link: rc=$rc: $out"; fail=1
else
  echo "ok: snapshots.d a link: $out"
fi
check_outside "snapshots.d a link, then --restart"

# ---- scripts/plot writes its charts beside telemetry.csv: not through links -------------------
if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  "$TIERSIM" run "${NB[@]}" --steps 4 --out "$WORK/plot" >/dev/null
  ln -sf "$WORK/outside/a.txt" "$WORK/plot/bandwidth.png"
  ln -sf "$WORK/outside/b.txt" "$WORK/plot/roofline.png.tmp"
  before=$(outside_hash)
  scripts/plot telemetry "$WORK/plot/telemetry.csv" >/dev/null 2>&1 || { echo "FAIL: scripts/plot failed"; fail=1; }
  check_outside "scripts/plot with bandwidth.png a link"
  regular "$WORK/plot" bandwidth.png roofline.png
else
  echo "note: scripts/plot skipped (no matplotlib)"
fi
exit $fail
