#!/usr/bin/env bash
# Runs under mpirun killed with SIGKILL (rank 0, the rank that writes, at random moments; the
# launcher then ends the others) leave a readable run, and `mpirun ... tiersim run --restart`
# finishes it with the same final state, bit for bit, as a one-rank run never interrupted: on 2
# ranks, and continued on 3 (the run directory holds the global state, whatever the rank count).
# CPU backend, a heat and an N-body case.
set -u
source "$(dirname "$0")/prologue.sh"
source "$(dirname "$0")/mpi.sh"
require_h5py
require_mpi
fail=0

final() {  # the last frame of every array of snapshots.h5, as a digest with its step
  $PY - "$1" <<'PYEOF'
import sys, h5py, hashlib
h = hashlib.sha256()
step = None
with h5py.File(sys.argv[1] + "/snapshots.h5", "r") as f:
    def visit(name, obj):
        global step
        if isinstance(obj, h5py.Dataset) and name.endswith("/value") and not name.startswith("observables"):
            h.update(name.encode() + obj[-1].tobytes())
            step = int(f[name[:-len("value")] + "step"][-1])
    f.visititems(visit)
print(step, h.hexdigest())
PYEOF
}

for model in heat nbody; do
  if [ $model = heat ]; then
    ARGS=(cases/heat.toml --backend cpu --set grid.nx=20 --set grid.ny=18 --set grid.nz=17 --set grid.radius=2
      --steps 120 --set run.snapshot_every=10 --set run.diagnostics_every=10 -q)
  else
    ARGS=(cases/plummer.toml --backend cpu --set nbody.count=301 --steps 120 --set run.snapshot_every=10
      --set run.diagnostics_every=10 -q)
  fi
  "$TIERSIM" run "${ARGS[@]}" --out "$WORK/$model-reference" >/dev/null || { echo "FAIL: $model reference run"; exit 1; }
  ref=$(final "$WORK/$model-reference")
  interrupted=0 trial=0
  while [ $interrupted -lt 3 ] && [ $trial -lt 10 ]; do
    trial=$((trial + 1))
    dir="$WORK/$model-t$trial"
    run_mpi 2 "$TIERSIM" run "${ARGS[@]}" --out "$dir" >"$dir.log" 2>&1 &
    launcher=$!
    # Killed once k snapshots (1..8 of 12) are complete, a random moment later.
    k=$((RANDOM % 8 + 1))
    while [ "$(ls "$dir/snapshots.d" 2>/dev/null | grep -c '\.h5$')" -le $k ] && kill -0 $launcher 2>/dev/null; do
      sleep 0.005
    done
    sleep "0.0$((RANDOM % 10))"
    # Rank 0: the tiersim process whose working directory's run it writes (the first one started).
    victim=$(pgrep -f -- "--out $dir" | while read -r p; do
      [ "$(cat /proc/$p/comm 2>/dev/null)" = tiersim ] && grep -qa "OMPI_COMM_WORLD_RANK=0" /proc/$p/environ && echo $p
    done | head -1)
    [ -n "$victim" ] && kill -9 "$victim" 2>/dev/null
    wait $launcher 2>/dev/null
    if [ ! -f "$dir/checkpoint.h5" ] || [ -z "$victim" ]; then continue; fi
    $PY tests/integration/check_output_readable.py "$dir" >/dev/null ||
      { echo "FAIL: $model trial $trial: output not readable after kill -9 of rank 0"; fail=1; continue; }
    got=$(final "$dir")
    if [ "${got%% *}" = "${ref%% *}" ]; then continue; fi  # it had finished: nothing to continue
    interrupted=$((interrupted + 1))
    ranks=$((2 + interrupted % 2))  # continued on 3 ranks, then 2, then 3
    run_mpi $ranks "$TIERSIM" run --restart "$dir" -q >>"$dir.log" 2>&1 ||
      { echo "FAIL: $model trial $trial: restart on $ranks ranks failed"; tail -3 "$dir.log"; fail=1; continue; }
    got=$(final "$dir")
    if [ "$got" != "$ref" ]; then
      echo "FAIL: $model trial $trial (killed after snapshot $k, continued on $ranks ranks): final $got, reference $ref"
      fail=1
    else
      echo "ok: $model trial $trial: killed after snapshot $k, continued on $ranks ranks, final state bit for bit"
    fi
  done
  [ $interrupted -ge 3 ] || { echo "FAIL: $model: only $interrupted of $trial runs were killed part-way"; fail=1; }
done
[ $fail = 0 ] && echo PASS
exit $fail
