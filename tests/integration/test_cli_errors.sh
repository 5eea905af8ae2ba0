#!/usr/bin/env bash
# Bad input on the command line: each case gets one line "tiersim: error: ..." naming the
# problem, a non-zero exit, no stack trace, and no output directory left behind. Also a full
# disk during a run: one line, exit 1, and the output readable up to the last complete snapshot.
set -u
umount "$2/ro" "$2/full" 2>/dev/null  # left mounted by an interrupted run (cases below)
source "$(dirname "$0")/prologue.sh"
fail=0
have_h5py=0; /usr/bin/python3 -c "import h5py" 2>/dev/null && have_h5py=1

# expect_at <output dir> <expected substring> <args...>
expect_at() {
  local dir=$1 expected=$2; shift 2
  local out rc
  out=$("$TIERSIM" "$@" --out "$dir" 2>&1 >/dev/null); rc=$?
  local lines
  lines=$(printf '%s\n' "$out" | grep -c .)
  if [ $rc -eq 0 ] || [[ "$out" != *"$expected"* ]] || [ "$lines" -ne 1 ] || [ -e "$dir" ]; then
    echo "FAIL: tiersim $* --out $dir -> rc=$rc lines=$lines out-dir-exists=$([ -e "$dir" ] && echo yes || echo no)"
    echo "      expected: $expected"
    echo "      got:      $out"
    fail=1
    rm -rf "$dir"
  else
    echo "ok: $out"
  fi
}
# expect <expected substring> <args...>
expect() { expect_at "$WORK/out" "$@"; }

printf '[run]\nmodel = "nbody"\ndt = 0.01\n[nbody]\ncount = -5\n' > "$WORK/negative.toml"
printf '[run]\nmodel = "nbody"\ndt = 0.01\n[nbdy]\ncount = 5\n' > "$WORK/typo.toml"
printf '[run]\nmodel = "nbody\ndt = 0.01\n' > "$WORK/syntax.toml"
printf '[run]\nmodel = "nbody"\ndt = 0.01\n[nbody]\ncount = 2\nic = "kepler"\nsoftening = 0.0\n[kepler]\neccentricity = 1.5\n' > "$WORK/ecc.toml"
printf '[run]\nmodel = "nbody"\ndt = 0.01\n[nbody]\ncount = 2000000000\n[strategy]\nbackend = "cpu"\n' > "$WORK/huge.toml"

expect "cannot open case file" run "$WORK/missing.toml"
expect "nbody.count: -5 is out of range" run "$WORK/negative.toml"
expect "nbdy.count: unknown key" run "$WORK/typo.toml"
expect "syntax.toml:2: syntax error" run "$WORK/syntax.toml"
expect "kepler.eccentricity: 1.5 is out of range" run "$WORK/ecc.toml"
expect "of host memory" run "$WORK/huge.toml"
expect "20000x20000x20000 heat run (fp32, cpu; initial state, engine grids, staged outputs) needs" run cases/heat.toml --backend cpu --set grid.n=20000 --set stencil.force=true
# What the run takes (initial state in double, two grids, three staged copies: about 28 bytes a
# point at fp32) is checked, not one grid's 4 bytes a point: a grid of half the available memory
# passes the one-grid check and is refused before anything is allocated.
avail_kb=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
half_n=$(awk -v kb="$avail_kb" 'BEGIN { printf "%d", (kb * 1024 / 2 / 4) ^ (1 / 3) }')
expect "of host memory" run cases/heat.toml --backend cpu --set grid.n="$half_n" --set stencil.force=true
expect "--set nbody.cuont: unknown key (did you mean 'nbody.count'?)" run cases/plummer.toml --set nbody.cuont=3
expect "--set run.dt: 0 is out of range" run cases/plummer.toml --set run.dt=0
expect "--set run.dt: must be a finite number" run cases/plummer.toml --set run.dt=nan
expect "--layout" run cases/plummer.toml --layout zigzag
expect "nbody.softening: 0 is only allowed for the kepler binary" run cases/plummer.toml --set nbody.softening=0 --backend cpu

expect "The following argument was not expected: --frobnicate" run cases/plummer.toml --frobnicate
expect "unknown subcommand 'frobnicate'" frobnicate cases/plummer.toml
expect "cases: is a directory, not a case file" run cases
expect "--steps: must be >= 0, not -3" run cases/plummer.toml --steps -3
expect "--steps: 'x3' is not an integer" run cases/plummer.toml --steps x3

# An output directory that cannot be created, even by root: under /proc; below a read-only mount
# as root (for whom mode 500 stops nothing), below a directory of mode 500 otherwise.
expect_at /proc/tiersim-out/out "/proc/tiersim-out/out: cannot create output directory" run cases/plummer.toml --backend cpu
mkdir -p "$WORK/ro"
if [ "$(id -u)" -eq 0 ]; then
  if mount -t tmpfs -o ro,size=64k tmpfs "$WORK/ro" 2>/dev/null; then
    expect_at "$WORK/ro/out" "$WORK/ro/out: cannot create output directory: Read-only file system" run cases/plummer.toml --backend cpu
    umount "$WORK/ro"
  else
    echo "note: read-only output directory skipped (cannot mount a tmpfs here)"
  fi
else
  chmod 500 "$WORK/ro"
  expect_at "$WORK/ro/out" "$WORK/ro/out: cannot create output directory: Permission denied" run cases/plummer.toml --backend cpu
fi
# An output path that is a file.
touch "$WORK/afile"
out=$("$TIERSIM" run cases/plummer.toml --backend cpu --out "$WORK/afile" 2>&1); rc=$?
if [ $rc -eq 0 ] || [[ "$out" != *"exists and is not a directory"* ]]; then echo "FAIL: file as out dir: $out"; fail=1; else echo "ok: file as out dir"; fi

# A damaged checkpoint: 8 bytes overwritten inside the data of an array (in the part of the state
# the checkpoint names) stop a restart with one line naming the file and the array (the restart went
# on silently from the damaged values before).
if [ $have_h5py -eq 1 ]; then
  "$TIERSIM" run cases/plummer.toml --backend cpu --set nbody.count=64 --steps 10 -q --out "$WORK/ckpt" >/dev/null 2>&1
  /usr/bin/python3 - "$WORK/ckpt/checkpoint.h5" <<'PYEOF'
import os, sys, h5py
path, name = sys.argv[1], "/state/velocity"
with h5py.File(path, "r") as f:
    if f[name].is_virtual:
        source = f[name].virtual_sources()[0]
        path, name = os.path.join(os.path.dirname(path), source.file_name), source.dset_name
with h5py.File(path, "r") as f:
    d = f[name]
    at = d.id.get_offset()  # contiguous data; None when chunked
    if at is None:
        at = d.id.get_chunk_info(0).byte_offset
with open(path, "r+b") as f:
    f.seek(at + 64)
    f.write(b"\x01" * 8)
PYEOF
  out=$("$TIERSIM" run --restart "$WORK/ckpt" --steps 20 -q 2>&1 >/dev/null); rc=$?
  if [ $rc -eq 0 ] || [ "$(printf '%s\n' "$out" | grep -c .)" -ne 1 ] || [[ "$out" != *"$WORK/ckpt/checkpoint.h5: "*"/state/velocity"* ]]; then
    echo "FAIL: damaged checkpoint: rc=$rc: $out"; fail=1
  else
    echo "ok: damaged checkpoint: $out"
  fi
else
  echo "SKIP: damaged checkpoint (/usr/bin/python3 without h5py)"
fi

# A damaged telemetry.csv (a row whose step is not a number): the restart names the file and line.
"$TIERSIM" run cases/plummer.toml --backend cpu --set nbody.count=64 --steps 10 -q --out "$WORK/tele" >/dev/null 2>&1
sed -i '3s/^[0-9]*/x/' "$WORK/tele/telemetry.csv"
out=$("$TIERSIM" run --restart "$WORK/tele" --steps 20 -q 2>&1 >/dev/null); rc=$?
if [ $rc -eq 0 ] || [ "$(printf '%s\n' "$out" | grep -c .)" -ne 1 ] || [[ "$out" != *"$WORK/tele/telemetry.csv:3: not a telemetry row"* ]]; then
  echo "FAIL: damaged telemetry.csv: rc=$rc: $out"; fail=1
else
  echo "ok: damaged telemetry.csv: $out"
fi

# A full disk, ENOSPC on a 256 kB tmpfs (as root) and EFBIG under `ulimit -f` with SIGXFSZ ignored
# (anyone): one line naming the file, exit 1 (HDF5 1.10's exit handler used to crash on the file
# whose close had failed: 139), and what was complete before stays readable.
# $1: how ("tmpfs" or "ulimit"); the run writes into $2.
disk_full() {
  local how=$1 out=$2 err rc steps
  # tmpfs: 500 bodies fill 256 kB after a few snapshots (the index or a step file fails);
  # ulimit: 2000 bodies' checkpoint (160 kB) passes 100 kB after the first snapshot.
  local n=500; [ "$how" = ulimit ] && n=2000
  local args=(run cases/plummer.toml --backend cpu --set nbody.count=$n --steps 100000 --set run.snapshot_every=5
              --set run.diagnostics_every=5 -q --out "$out")
  if [ "$how" = ulimit ]; then
    err=$( (trap '' XFSZ; ulimit -f 100; exec "$TIERSIM" "${args[@]}") 2>&1 >/dev/null); rc=$?
  else
    err=$("$TIERSIM" "${args[@]}" 2>&1 >/dev/null); rc=$?
  fi
  if [ $rc -ne 1 ] || [ "$(printf '%s\n' "$err" | grep -c .)" -ne 1 ] || [[ "$err" != "tiersim: error: $out/"* ]]; then
    echo "FAIL: disk full ($how): rc=$rc (expected 1), stderr:"; printf '%s\n' "$err" | sed 's/^/      /'; fail=1; return
  fi
  if [ $have_h5py -eq 0 ]; then
    echo "ok: disk full ($how): $err (output not checked: /usr/bin/python3 without h5py)"; return
  fi
  if ! steps=$(/usr/bin/python3 tests/integration/check_output_readable.py "$out" 2>&1) || [ -z "$steps" ]; then
    echo "FAIL: disk full ($how): output not readable after the error: $steps"; fail=1; return
  fi
  echo "ok: disk full ($how): $err; snapshots $steps readable"
}
mkdir -p "$WORK/full"
if [ "$(id -u)" -eq 0 ] && mount -t tmpfs -o size=256k tmpfs "$WORK/full" 2>/dev/null; then
  trap 'umount "$WORK/full" 2>/dev/null' EXIT
  disk_full tmpfs "$WORK/full/out"
  umount "$WORK/full"; trap - EXIT
else
  echo "note: disk full on a tmpfs skipped (cannot mount one as $(id -un))"
fi
if (ulimit -f 100) 2>/dev/null; then
  disk_full ulimit "$WORK/full/out-ulimit"
else
  echo "SKIP: disk full under ulimit -f (cannot lower the file size limit)"
fi

exit $fail
