#!/usr/bin/env bash
# The stencil model split into z slabs over the ranks of a run (kernels/halo_exchange.hpp) takes the
# same steps as one process: for every equation, R = 1 and R = 4, periodic and fixed boundaries, a
# run on one process (no mpirun) and runs on 2 or 3 ranks (heat on both) (slabs of 11-12 and 7-8 of 23 planes,
# so the exchanged halos move values every step) write the same snapshots, every field of every
# snapshot bit for bit, and the same observables: min and max exactly, sums and means to a relative
# 1e-12 (the ranks add their slabs' sums in another order than one process adds the points).
# The runs on several ranks record their halo exchanges in telemetry. A NaN is found at the same
# global index on 1, 2 and 3 ranks. Each rank writes its slab to a part file of its own, which the
# step files and the checkpoint name (virtual datasets). A slab thinner than R, and --format vtk,
# are refused with one line, and nothing is written. `tiersim compare` runs on the ranks too;
# `tiersim info` lists each rank's GPU once, and `tiersim bench` is refused. CPU backend
# (TIERSIM_TEST_BACKEND=cuda: the CUDA engines, tests/integration/mpi.sh).
set -u
source "$(dirname "$0")/prologue.sh"
source "$(dirname "$0")/mpi.sh"
require_h5py
require_mpi
fail=0

compare() {  # compare DIR_ONE DIR_MANY: fields bit for bit, observables as said above
  $PY - "$1" "$2" <<'PYEOF'
import sys, h5py, numpy as np
one, many = sys.argv[1], sys.argv[2]
with h5py.File(one + "/snapshots.h5", "r") as a, h5py.File(many + "/snapshots.h5", "r") as b:
    if sorted(a["/fields"]) != sorted(b["/fields"]):
        sys.exit("fields %s, one rank %s" % (sorted(b["/fields"]), sorted(a["/fields"])))
    for name in a["/fields"]:
        fa, fb = a["/fields/" + name], b["/fields/" + name]
        if list(fa["step"][...]) != list(fb["step"][...]):
            sys.exit("%s: steps %s, one rank %s" % (name, list(fb["step"][...]), list(fa["step"][...])))
        va, vb = fa["value"][...], fb["value"][...]
        if va.shape != vb.shape or va.dtype != vb.dtype:
            sys.exit("%s: %s %s, one rank %s %s" % (name, vb.shape, vb.dtype, va.shape, va.dtype))
        for r, step in enumerate(fa["step"][...]):
            if va[r].tobytes() != vb[r].tobytes():
                bits = "u%d" % va.itemsize
                bad = np.argwhere(va[r].view(bits) != vb[r].view(bits))
                sys.exit("%s at step %d: %d values differ, the first at [z y x] = %s" % (name, step, len(bad), bad[0]))
        # The halos moved something: the last snapshot is not the first.
        if len(va) > 1 and np.array_equal(va[0], va[-1]):
            sys.exit("%s: the first and last snapshots are equal" % name)
    if sorted(a["/observables"]) != sorted(b["/observables"]):
        sys.exit("observables %s, one rank %s" % (sorted(b["/observables"]), sorted(a["/observables"])))
    for name in a["/observables"]:
        oa, ob = a["/observables/" + name], b["/observables/" + name]
        if list(oa["step"][...]) != list(ob["step"][...]):
            sys.exit("observable %s: steps differ" % name)
        xa, xb = oa["value"][...], ob["value"][...]
        if "min" in name or "max" in name:
            ok = np.array_equal(xa, xb)
        else:
            ok = np.all(np.abs(xa - xb) <= 1e-12 * np.maximum(np.abs(xa), np.abs(xb)))
        if not ok:
            sys.exit("observable %s: %s, one rank %s" % (name, list(xb), list(xa)))
PYEOF
}

# "${args[@]}" on $1 ranks into dir=$WORK/$name-$1; a FAIL with tiersim's line where it fails.
on_ranks() {
  dir="$WORK/$name-$1"
  run_mpi "$1" "$TIERSIM" "${args[@]}" --transport "$TRANSPORT" --out "$dir" >"$dir.log" 2>&1 && return 0
  echo "FAIL: $name: $1 ranks: $(grep -m1 'tiersim' "$dir.log")"
  fail=1
  return 1
}
# The run in $dir ($1 ranks) against the one-process run in $WORK/$name-1 ($2: what else agreed).
against_one() {
  if why=$(compare "$WORK/$name-1" "$dir" 2>&1); then
    echo "ok: $name: $1 ranks: every snapshot bit for bit$2"
  else
    echo "FAIL: $name: $1 ranks against one process: $why"
    fail=1
  fi
}

# Rows of 24 points (whole 32-byte sectors in fp32 and fp64): on the CUDA engines the updates write
# the periodic x halos themselves.
GRID=(--set grid.nx=24 --set grid.ny=19 --set grid.nz=23)
# 12 steps, snapshots (and diagnostics) at 0, 4, 8, 12. The wave's source peaks at t = 0.005 (step 6.25)
# in the plane 11 of 23, which rank 1 holds on 2 and on 3 ranks.
STEPS=(--steps 12 --set run.snapshot_every=4 --set run.diagnostics_every=4)
for eq in heat wave gray_scott allen_cahn; do
  extra=()
  [ $eq = wave ] && extra=(--set wave.source_delay=0.005)
  for radius in 1 4; do
    for bc in periodic fixed; do
      name=$eq-r$radius-$bc
      args=(run "cases/$eq.toml" --backend "$BACKEND" "${GRID[@]}" "${STEPS[@]}" --set grid.radius=$radius
        --set "grid.boundary=\"$bc\"" "${extra[@]}" -q)
      OMP_NUM_THREADS=1 "$TIERSIM" "${args[@]}" --out "$WORK/$name-1" >"$WORK/$name-1.log" 2>&1 ||
        { echo "FAIL: $name: one process: $(tail -1 "$WORK/$name-1.log")"; fail=1; continue; }
      # Heat on 2 and 3 ranks; the other equations on 3 ranks with periodic boundaries (a middle
      # rank, the wrap across ranks) and on 2 with fixed ones (each rank one fixed face).
      nps="2 3"
      [ $eq != heat ] && { [ $bc = periodic ] && nps=3 || nps=2; }
      for np in $nps; do
        on_ranks $np || continue
        grep -Eq "^[0-9]*,halo_exchange_$EXCHANGE," "$dir/telemetry.csv" ||
          { echo "FAIL: $name: $np ranks: no halo exchange in telemetry.csv"; fail=1; }
        # summary.json: each rank's figures, in rank order, and their spread.
        $PY - "$dir/summary.json" "$np" <<'PYEOF' || fail=1
import json, sys
w, n = json.load(open(sys.argv[1]))["wall"], int(sys.argv[2])
for key in ("ranks_steady_seconds", "ranks_kernel_seconds", "ranks_communication_seconds",
            "ranks_communication_beside_kernels_seconds"):
    s = w[key]
    if len(s["each_rank"]) != n or min(s["each_rank"]) != s["min"] or max(s["each_rank"]) != s["max"]:
        sys.exit("FAIL: summary.json %s: %s for %d ranks" % (key, s, n))
comm = w["ranks_communication_seconds"]["max"] + w["ranks_communication_beside_kernels_seconds"]["max"]
if w["ranks"] != n or w["transport"] not in ("mpi", "nccl", "ipc") or comm <= 0:
    sys.exit("FAIL: summary.json: ranks %s, transport %s, communication %s s" % (w["ranks"], w["transport"], comm))
PYEOF
        # Each rank wrote its slab of every step to a part of its own: the step files' fields and the
        # checkpoint's arrays are virtual datasets over the ranks' parts.
        $PY - "$dir" "$np" <<'PYEOF' || fail=1
import glob, h5py, os, sys
d, n = sys.argv[1], int(sys.argv[2])
last = sorted(glob.glob(d + "/snapshots.d/step_*.h5"))[-1]
with h5py.File(last, "r") as f, h5py.File(d + "/checkpoint.h5", "r") as c:
    for ds in [f["/fields/" + k] for k in f["/fields"]] + [c["/state/" + k] for k in c["/state"]]:
        parts = sorted(os.path.basename(v.file_name) for v in ds.virtual_sources()) if ds.is_virtual else []
        if len(parts) != n or not all(p.startswith("part_") for p in parts):
            sys.exit("FAIL: %s %s: not the %d ranks' parts: %s" % (ds.file.filename, ds.name, n, parts))
PYEOF
        against_one $np ", observables"
      done
    done
  done
done

# --tiling temporal (CUDA engines only): a pass of T steps reads T R planes of each neighbour, which
# the ranks exchange before it (the planes that need none of them are updated meanwhile). Heat at
# R = 1, 2, 4 with T = 4, 3, 2 (12 steps with snapshots every 4: passes of 4, and of 3 then a single
# step), the wave from a pulse (a source keeps the steps single), Gray-Scott at R = 1; periodic and
# fixed; on 2 ranks (slabs of 11-12 planes: the planes beside the exchanged ones updated while it
# runs) and on 3 (7-8 planes: the whole slab after it) where T R fits: every snapshot bit for bit
# that of one process with the same tiling, and a slab thinner than T R refused with one line.
if [ "$BACKEND" = cuda ]; then
  for spec in heat:1:4 heat:2:3 heat:4:2 wave:1:4 wave:4:2 gray_scott:1:2; do
    IFS=: read -r eq radius T <<<"$spec"
    extra=()
    [ $eq = wave ] && extra=(--set 'wave.initial="pulse"')
    nps="2 3"
    [ $((T * radius)) -gt 7 ] && nps=2
    for bc in periodic fixed; do
      name=temporal-$eq-r$radius-t$T-$bc
      args=(run "cases/$eq.toml" --backend cuda --tiling temporal "${GRID[@]}" "${STEPS[@]}" --set grid.radius=$radius
        --set stencil.temporal_steps=$T --set "grid.boundary=\"$bc\"" "${extra[@]}" -q)
      "$TIERSIM" "${args[@]}" --out "$WORK/$name-1" >"$WORK/$name-1.log" 2>&1 ||
        { echo "FAIL: $name: one process: $(tail -1 "$WORK/$name-1.log")"; fail=1; continue; }
      for np in $nps; do
        on_ranks $np || continue
        grep -Eq "^[0-9]*,stencil_${eq}_temporal_r${radius}_t${T}[a-z0-9_]*," "$dir/telemetry.csv" ||
          { echo "FAIL: $name: $np ranks: no temporal pass in telemetry.csv"; fail=1; }
        against_one $np ""
      done
    done
  done
  out=$(run_mpi 3 "$TIERSIM" run cases/heat.toml --backend cuda --tiling temporal "${GRID[@]}" --set grid.radius=4 \
    --set stencil.temporal_steps=2 --steps 2 -q --out "$WORK/thin-temporal" 2>&1)
  rc=$?
  got=$(printf '%s\n' "$out" | grep '^tiersim')
  want="tiersim: error: --tiling temporal: grid.nz = 23 split over 3 ranks leaves slabs of 7 z planes, fewer than the 8"
  if [ $rc != 0 ] && [ "$(printf '%s\n' "$got" | wc -l)" = 1 ] && [[ "$got" == "$want"* ]] && [ ! -e "$WORK/thin-temporal" ]; then
    echo "ok: slabs thinner than T R refused: $got"
  else
    echo "FAIL: thin slabs under --tiling temporal: exit $rc: $out"
    fail=1
  fi
fi

# tiersim info under mpirun: the build once, then every rank's GPU in rank order.
out=$(run_mpi 2 "$TIERSIM" info 2>&1)
if [ "$(printf '%s\n' "$out" | grep -c '^build: ')" = 1 ] && [ "$(printf '%s\n' "$out" | grep -c '^rank ')" = 2 ] &&
   printf '%s\n' "$out" | grep '^rank ' | head -1 | grep -q '^rank 0 (' &&
   printf '%s\n' "$out" | grep '^rank ' | tail -1 | grep -q '^rank 1 ('; then
  echo "ok: info under mpirun: the build once, each rank's GPU"
else
  echo "FAIL: info under mpirun: $out"; fail=1
fi
# tiersim bench under mpirun: one line from one rank, before anything is measured.
out=$(run_mpi 2 "$TIERSIM" bench stencil --backend cpu --sizes 8 --radii 1 --reps 1 --csv "$WORK/bench.csv" 2>&1); rc=$?
got=$(printf '%s\n' "$out" | grep '^tiersim')
if [ $rc != 0 ] && [ "$got" = "tiersim: error: tiersim bench runs in one process (it measures one GPU, or this host); run it without mpirun (here 2 ranks)" ] &&
   ! printf '%s\n' "$out" | grep -q '^backend' && [ ! -e "$WORK/bench.csv" ]; then
  echo "ok: bench under mpirun refused in one line"
else
  echo "FAIL: bench under mpirun: exit $rc: $out"; fail=1
fi

# A NaN put at global index 300 (plane 4 of 8, held by rank 1 on 2 and on 3 ranks) at step 300 has
# reached index 236 (plane 3: rank 0's on 2 ranks, rank 1's on 3) one step later: the non-finite
# check names the same array and index as one process, from whichever rank holds it.
nan=(run cases/heat.toml --backend "$BACKEND" --set grid.n=8 --set grid.radius=1 --steps 301 --set run.diagnostics_every=1000
  --set run.snapshot_every=1000 -q)
for np in 1 2 3; do
  if [ $np = 1 ]; then
    got=$(TIERSIM_INJECT_NAN_AT_STEP=300 OMP_NUM_THREADS=1 "$TIERSIM" "${nan[@]}" --out "$WORK/nan-1" 2>&1)
  else
    got=$(TIERSIM_INJECT_NAN_AT_STEP=300 run_mpi $np -x TIERSIM_INJECT_NAN_AT_STEP "$TIERSIM" "${nan[@]}" \
      --out "$WORK/nan-$np" 2>&1)
  fi
  got=$(printf '%s\n' "$got" | grep '^tiersim')
  if [[ "$got" == "tiersim: error: step 301: non-finite values in u[236] (kernel stencil_heat_"* ]]; then
    echo "ok: NaN found on $np rank(s) at its global index"
  else
    echo "FAIL: NaN on $np rank(s): $got"
    fail=1
  fi
done

# 5 planes over 3 ranks: slabs of 1 plane, fewer than R = 2. One line from tiersim, a non-zero
# exit, no run directory.
out=$(run_mpi 3 "$TIERSIM" run cases/heat.toml --backend "$BACKEND" --set grid.n=8 --set grid.nz=5 --set grid.radius=2 \
  --steps 2 -q --out "$WORK/thin" 2>&1)
rc=$?
lines=$(printf '%s\n' "$out" | grep -c '^tiersim')
want="tiersim: error: grid.nz = 5 split over 3 ranks leaves slabs of 1 z plane, fewer than grid.radius = 2"
if [ $rc = 0 ] || [ "$lines" != 1 ] || [[ "$(printf '%s\n' "$out" | grep '^tiersim')" != "$want"* ]]; then
  echo "FAIL: thin slabs: exit $rc, $lines lines from tiersim: $out"
  fail=1
elif [ -e "$WORK/thin" ]; then
  echo "FAIL: thin slabs: the refused run wrote $WORK/thin"
  fail=1
else
  echo "ok: thin slabs refused: $(printf '%s\n' "$out" | grep '^tiersim')"
fi
# --format vtk on several ranks (VTK files hold whole grids; each rank writes its slab): one line,
# no run directory.
out=$(run_mpi 2 "$TIERSIM" run cases/heat.toml --backend "$BACKEND" --set grid.n=8 --steps 2 --format xdmf,vtk -q \
  --out "$WORK/vtk-ranks" 2>&1)
rc=$?
got=$(printf '%s\n' "$out" | grep '^tiersim')
if [ $rc != 0 ] && [ "$(printf '%s\n' "$got" | wc -l)" = 1 ] && [ ! -e "$WORK/vtk-ranks" ] &&
  [[ "$got" == "tiersim: error: --format vtk: "* ]]; then  # (or: this tiersim was built without VTK)
  echo "ok: --format vtk refused on several ranks: $got"
else
  echo "FAIL: --format vtk on 2 ranks: exit $rc: $out"
  fail=1
fi
# --transport nccl or ipc on the CPU backend: one line naming the problem, no run directory.
if [ "$BACKEND" = cpu ]; then
  for tr in nccl ipc; do
    out=$(run_mpi 2 "$TIERSIM" run cases/heat.toml --backend cpu --transport $tr --set grid.n=8 --steps 2 -q \
      --out "$WORK/$tr-cpu" 2>&1)
    rc=$?
    got=$(printf '%s\n' "$out" | grep '^tiersim')
    if [ $rc != 0 ] && [ "$(printf '%s\n' "$got" | wc -l)" = 1 ] && [ ! -e "$WORK/$tr-cpu" ] &&
      [[ "$got" == "tiersim: error: --transport $tr: the CPU backend exchanges through MPI"* ]]; then
      echo "ok: --transport $tr refused on the CPU backend: $got"
    else
      echo "FAIL: --transport $tr on the CPU backend: exit $rc: $out"
      fail=1
    fi
  done
fi
# tiersim compare on 2 ranks: every combination runs on both (rank 0 makes the directories and
# reports, once); an existing directory is refused in one line.
out=$(run_mpi 2 "$TIERSIM" compare cases/heat.toml --backend "$BACKEND" --precision fp32,fp64 --set grid.n=16 \
  --steps 2 --warmup 1 --no-chart --out "$WORK/cmp" 2>&1)
rc=$?
if [ $rc = 0 ] && [ "$(grep -c ',stencil_heat' "$WORK/cmp/compare.csv" 2>/dev/null)" = 2 ] &&
  [ "$(printf '%s\n' "$out" | grep -c "^compare: backend=$BACKEND precision=fp32 \.\.\.$")" = 1 ] &&
  [ "$(printf '%s\n' "$out" | grep -c '^whole step')" = 1 ] &&
  grep -Eq "halo_exchange_$EXCHANGE" "$WORK/cmp/compare.csv"; then
  echo "ok: compare on 2 ranks ran both precisions, reported once"
else
  echo "FAIL: compare on 2 ranks: exit $rc: $out"
  cat "$WORK/cmp/compare.csv" 2>/dev/null
  fail=1
fi
out=$(run_mpi 2 "$TIERSIM" compare cases/heat.toml --backend "$BACKEND" --set grid.n=16 --steps 1 --no-chart \
  --out "$WORK/cmp" 2>&1)
rc=$?
got=$(printf '%s\n' "$out" | grep '^tiersim')
if [ $rc != 0 ] && [ "$got" = "tiersim: error: $WORK/cmp: output directory exists and is not empty (use --force to replace it)" ]; then
  echo "ok: compare on 2 ranks refuses an existing directory in one line"
else
  echo "FAIL: compare on 2 ranks into an existing directory: exit $rc: $out"
  fail=1
fi
[ $fail = 0 ] && echo PASS
exit $fail
