#!/usr/bin/env bash
# The N-body cases on 2 and 3 ranks (mpirun) against one process started alone, CPU backend
# (TIERSIM_TEST_BACKEND=cuda: the CUDA engines, tests/integration/mpi.sh):
# every snapshot's particle arrays and the checkpoint's state bit for bit (each rank sums the
# force on its bodies over all j in the order one process does), the observables to rounding
# (each rank's sums over its bodies, added over the ranks). An odd body count (1001: ranges of
# 320, 352 and 329 bodies on 3 ranks, 512 and 489 on 2), every layout, fp32 and fp64, a Kepler
# binary on 2 ranks (one owns no body), the exchange in the telemetry, and a NaN found by the
# same message as with one process. Each rank writes its bodies to a part of its own, which the
# step files and the checkpoint name (virtual datasets).
set -u
source "$(dirname "$0")/prologue.sh"
source "$(dirname "$0")/mpi.sh"
require_h5py
require_mpi
fail=0

# Bit for bit: the arrays under particles/ of every step file and the checkpoint's state/.
# Observables (step files and snapshots.h5): within 1e-13 x max(1, |value|). Their sums over
# bodies are, under several ranks, the ranks' partial sums (each compensated, in double) added
# in double: they differ from one process's in the last bits of the partial sums. The largest
# difference is printed; measured 3.5e-18 (Plummer, fp32), 2.3e-16 (Plummer, fp64), 2.8e-16
# (galaxy), 3.6e-16 (collision), 0 (Kepler). The bound is a few hundred times that, and far below
# what a step changes (dE/E0 moves by about 5e-6 a step in these Plummer runs).
compare() {  # compare <one-process run> <mpi run> <label> <ranks>
  $PY - "$1" "$2" "$3" "$4" <<'PYEOF'
import glob, os, sys
import h5py, numpy as np
a, b, label, ranks = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

def arrays(path, under):
    out = {}
    with h5py.File(path, "r") as f:
        if under not in f:
            return out
        f[under].visititems(lambda n, o: out.__setitem__(under + "/" + n, o[...]) if isinstance(o, h5py.Dataset) else None)
    return out

def same_bits(x, y):
    return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()

bad, worst, checked = [], 0.0, 0
def close(name, x, y):
    global worst
    if x.shape != y.shape:
        bad.append("%s: shape %s, one process %s" % (name, y.shape, x.shape))
        return
    if x.dtype.kind != "f":
        if not np.array_equal(x, y):
            bad.append("%s differs" % name)
        return
    d = np.abs(x - y) / np.maximum(1.0, np.abs(x))
    worst = max(worst, float(np.max(d, initial=0.0)))
    if not np.all(d <= 1e-13):
        bad.append("%s: %.3g relative to max(1, |value|)" % (name, float(np.max(d))))

steps_a = sorted(os.path.basename(p) for p in glob.glob(a + "/snapshots.d/step_*.h5"))
steps_b = sorted(os.path.basename(p) for p in glob.glob(b + "/snapshots.d/step_*.h5"))
if not steps_a or steps_a != steps_b:
    sys.exit("FAIL: %s: step files %s, one process %s" % (label, steps_b, steps_a))
for s in steps_a:
    pa, pb = arrays(a + "/snapshots.d/" + s, "particles"), arrays(b + "/snapshots.d/" + s, "particles")
    if not pa or pa.keys() != pb.keys():
        bad.append("%s: particle arrays %s, one process %s" % (s, sorted(pb), sorted(pa)))
    for k in pa:
        checked += 1
        if k in pb and not same_bits(pa[k], pb[k]):
            bad.append("%s:%s not bit for bit" % (s, k))
    oa, ob = arrays(a + "/snapshots.d/" + s, "observables"), arrays(b + "/snapshots.d/" + s, "observables")
    for k in oa:
        close(s + ":" + k, oa[k], ob.get(k, np.array([])))
ca, cb = arrays(a + "/checkpoint.h5", "state"), arrays(b + "/checkpoint.h5", "state")
if not ca or ca.keys() != cb.keys():
    bad.append("checkpoint state %s, one process %s" % (sorted(cb), sorted(ca)))
for k in ca:
    checked += 1
    if k in cb and not same_bits(ca[k], cb[k]):
        bad.append("checkpoint.h5:%s not bit for bit" % k)
oa, ob = arrays(a + "/snapshots.h5", "observables"), arrays(b + "/snapshots.h5", "observables")
if not oa:
    bad.append("no observables in snapshots.h5")
for k in oa:
    close("snapshots.h5:" + k, oa[k], ob.get(k, np.array([])))
# Each rank wrote its own bodies (nothing gathered): the step files' and the checkpoint's arrays
# are virtual datasets over the parts of the ranks that own bodies (ranges start at multiples of
# 32 bodies, as BodyPartition::even makes them), each part the rank's rows.
def owners(n):
    blocks = (n + 31) // 32
    first = [min(n, 32 * (r * blocks // ranks)) for r in range(ranks)] + [n]
    return {r: (first[r], first[r + 1]) for r in range(ranks) if first[r] < first[r + 1]}
def check_parts(path, name, step, per_body):
    with h5py.File(path, "r") as f:
        d = f[name]
        if not d.is_virtual:
            bad.append("%s:%s is not a virtual dataset over the ranks' parts" % (os.path.basename(path), name))
            return
        per_row = per_body if d.ndim == 1 else 1  # a checkpoint's flat array: per_body values a body
        n = d.shape[0] // per_row
        got = {}
        for v in d.virtual_sources():
            lo, hi = v.vspace.get_select_bounds()
            got[os.path.basename(v.file_name)] = (lo[0] // per_row, (hi[0] + 1) // per_row)
        want = {"part_%012d_r%06d.h5" % (step, r): lohi for r, lohi in owners(n).items()}
        if got != want:
            bad.append("%s:%s maps %s, not %s" % (os.path.basename(path), name, got, want))
for s in steps_b:
    step = int(s[5:17])
    for name in ("particles/position", "particles/velocity"):
        check_parts(b + "/snapshots.d/" + s, name, step, 3)
with h5py.File(b + "/checkpoint.h5", "r") as f:
    ckpt_step = int(f.attrs["step"])
for name, per in (("state/position", 3), ("state/velocity", 3), ("state/acceleration", 3), ("state/mass", 1)):
    check_parts(b + "/checkpoint.h5", name, ckpt_step, per)
if bad:
    sys.exit("FAIL: %s: %s" % (label, "; ".join(bad[:5])))
print("ok: %s: %d step files, %d arrays bit for bit, each over its ranks' parts, observables within %.2g" %
      (label, len(steps_a), checked, worst))
PYEOF
}

# check <name> <ranks...> -- <tiersim run arguments>: one process, then each rank count.
check() {
  local name=$1
  shift
  local counts=()
  while [ "$1" != -- ]; do counts+=("$1"); shift; done
  shift
  OMP_NUM_THREADS=1 "$TIERSIM" run "$@" --backend "$BACKEND" -q --out "$WORK/$name-1" >"$WORK/$name-1.log" 2>&1 ||
    { echo "FAIL: $name: one process: $(tail -2 "$WORK/$name-1.log")"; fail=1; return; }
  for p in "${counts[@]}"; do
    run_mpi "$p" "$TIERSIM" run "$@" --backend "$BACKEND" --transport "$TRANSPORT" -q --out "$WORK/$name-$p" >"$WORK/$name-$p.log" 2>&1 ||
      { echo "FAIL: $name: $p ranks: $(tail -2 "$WORK/$name-$p.log")"; fail=1; continue; }
    compare "$WORK/$name-1" "$WORK/$name-$p" "$name on $p ranks" "$p" || fail=1
  done
}

PLUMMER=(cases/plummer.toml --set nbody.count=1001 --steps 20 --set run.snapshot_every=5)
for layout in aos soa; do
  for precision in fp32 fp64; do
    check "plummer-$layout-$precision" 2 3 -- "${PLUMMER[@]}" --layout $layout --precision $precision
  done
done
check plummer-aosoa-fp32 3 -- "${PLUMMER[@]}" --layout aosoa --precision fp32
check plummer-float4-fp64 3 -- "${PLUMMER[@]}" --layout float4 --precision fp64
check galaxy 3 -- cases/galaxy.toml --set nbody.count=700 --steps 20 --set run.snapshot_every=10
check collision 2 -- cases/collision.toml --set nbody.count=600 --steps 20 --set run.snapshot_every=10
# Two bodies on two ranks: rank 0 owns none (ranges start at multiples of 32 bodies).
check kepler 2 -- cases/kepler.toml --steps 200

# The banner names the ranks; each step's exchange is a telemetry row: SoA fp32 sends x, y and z
# (12 bytes a body); on 3 ranks a rank sends its part to 2 others and receives theirs, rank 0's
# 320 bodies: 2 x 320 x 12 + (1001 - 320) x 12 = 15852 bytes.
run_mpi 3 "$TIERSIM" run "${PLUMMER[@]}" --layout soa --precision fp32 --backend "$BACKEND" --out "$WORK/banner" \
  >"$WORK/banner.log" 2>&1 || { echo "FAIL: banner run: $(tail -2 "$WORK/banner.log")"; fail=1; }
grep -q "1001 bodies, Plummer sphere, 3 ranks" "$WORK/banner.log" ||
  { echo "FAIL: the banner does not name the ranks: $(head -1 "$WORK/banner.log")"; fail=1; }
rows=$(grep -Ec "^[0-9]*,position_exchange_$EXCHANGE,$BACKEND/soa/fp32[^,]*,[^,]*,15852,15852," "$WORK/banner/telemetry.csv")
[ "$rows" = 20 ] || { echo "FAIL: $rows position exchange rows of 15852 bytes in telemetry.csv, not 20"; fail=1; }
[ $fail = 0 ] && echo "ok: banner and 20 position exchange rows"

# A NaN in a velocity of a body rank 2 owns (before step 71, body 70 of 100; rank 2 owns 64 to 99):
# the run stops after step 71 (the last, diagnosed) with the message of one process. By then the
# NaN position of body 70 has made every acceleration, and through the kick every velocity, NaN;
# the first NaN position is body 70's, found on rank 2.
NAN=(cases/plummer.toml --set nbody.count=100 --steps 71 --set run.snapshot_every=0 --backend "$BACKEND" -q)
one=$(TIERSIM_INJECT_NAN_AT_STEP=70 OMP_NUM_THREADS=1 "$TIERSIM" run "${NAN[@]}" --out "$WORK/nan-1" 2>&1) &&
  { echo "FAIL: one process ran on with a NaN"; fail=1; }
three=$(run_mpi 3 env TIERSIM_INJECT_NAN_AT_STEP=70 "$TIERSIM" run "${NAN[@]}" --out "$WORK/nan-3" 2>&1) &&
  { echo "FAIL: 3 ranks ran on with a NaN"; fail=1; }
msg=$(printf '%s\n' "$one" | grep "non-finite")
if [[ "$msg" != *"position[70] (kernel nbody_drift)"* ]] || ! printf '%s\n' "$three" | grep -qF -- "$msg"; then
  echo "FAIL: NaN message on 3 ranks: $(printf '%s\n' "$three" | grep -m1 error), one process: $msg"
  fail=1
else
  echo "ok: NaN found on 3 ranks as by one process: $msg"
fi

[ $fail = 0 ] && echo PASS
exit $fail
