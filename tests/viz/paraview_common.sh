# Sourced by tests/viz/test_paraview_*.sh: finds ParaView, runs tiersim, checks a run in pvbatch.
# Usage of a test: bash test_paraview_X.sh <path-to-tiersim> <workdir>; exit 77 = skipped (a failure
# instead when TIERSIM_REQUIRE_VIZ=1).
set -u
TIERSIM=${1:?usage: $0 <tiersim> <workdir>}
WORK=${2:?usage: $0 <tiersim> <workdir>}
VIZ_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC_DIR=$(cd "$VIZ_DIR/../.." && pwd)
PY=/usr/bin/python3  # Debian's python with python3-h5py; `python3` on PATH may be another build

# TIERSIM_REQUIRE_VIZ=1 (set by .ci/run): a reason to skip is a failure, so CI cannot lose
# ParaView or VTK silently.
skip() {
  if [ "${TIERSIM_REQUIRE_VIZ:-0}" = 1 ]; then
    echo "FAIL: would skip, but TIERSIM_REQUIRE_VIZ=1: $*"
    exit 1
  fi
  echo "SKIP: $*"
  exit 77
}
die() { echo "FAIL: $*"; exit 1; }

require_paraview() {
  command -v pvbatch >/dev/null 2>&1 || skip "pvbatch not found: ParaView is not installed (scripts/setup installs paraview, python3-paraview and xvfb)"
  command -v xvfb-run >/dev/null 2>&1 || die "pvbatch exists but xvfb-run does not: Debian's ParaView renders only with an X server (apt-get install xvfb)"
  [ -x "$PY" ] && "$PY" -c "import h5py, numpy" 2>/dev/null || die "$PY cannot import h5py/numpy (apt-get install python3-h5py python3-numpy)"
  # pvbatch without ParaView's Python modules (python3-paraview is only a Recommends of paraview)
  # cannot run any script: that is a broken install, not a missing ParaView.
  echo 'import paraview.simple' >"${TMPDIR:-/tmp}/tiersim_pv_probe_$$.py"
  xvfb_pvbatch "${TMPDIR:-/tmp}/tiersim_pv_probe_$$.py" >"${TMPDIR:-/tmp}/tiersim_pv_probe_$$.log" 2>&1 ||
    { tail -3 "${TMPDIR:-/tmp}/tiersim_pv_probe_$$.log"; die "pvbatch cannot import paraview.simple (apt-get install python3-paraview)"; }
  rm -f "${TMPDIR:-/tmp}/tiersim_pv_probe_$$.py" "${TMPDIR:-/tmp}/tiersim_pv_probe_$$.log"
  echo "pvbatch: $(command -v pvbatch) ($(pvbatch --version 2>/dev/null | head -1))"
}

# xvfb-run -a picks a free display number, but two runs starting at once can pick the same one
# ("bad X server connection"), and pvbatch under Xvfb sometimes aborts while creating its
# window on a loaded machine: retry a run that failed without a check failing (at most 3 tries).
xvfb_pvbatch() {
  local log=${TMPDIR:-/tmp}/tiersim_xvfb_$$.log try
  for try in 1 2 3; do
    xvfb-run -a -s "-screen 0 1024x768x24" pvbatch "$@" >"$log" 2>&1
    local rc=$?
    if [ $rc -ne 0 ] && ! grep -q "^FAIL " "$log" && [ $try -lt 3 ]; then
      echo "(pvbatch exited with $rc before any check failed: retrying)" >&2
      sleep $((RANDOM % 3 + 1)); continue
    fi
    cat "$log"; rm -f "$log"
    return $rc
  done
}

# run_tiersim NAME CASE [args...]: runs the real CLI into $WORK/NAME.
run_tiersim() {
  local name=$1 case=$2
  shift 2
  mkdir -p "$WORK"
  echo "+ tiersim run $case --out $WORK/$name $*"
  "$TIERSIM" run "$SRC_DIR/$case" --out "$WORK/$name" --force --quiet "$@" || die "tiersim run $case failed"
  [ -f "$WORK/$name/snapshots.h5" ] || die "$WORK/$name/snapshots.h5 missing"
}

# run_tiersim_ranks N NAME CASE [args...]: the same on N ranks under mpirun (skips where tiersim
# has no MPI or mpirun is missing, as the integration tests do).
run_tiersim_ranks() {
  local n=$1 name=$2 case=$3
  shift 3
  source "$VIZ_DIR/../integration/mpi.sh"
  require_mpi
  mkdir -p "$WORK"
  echo "+ mpirun -np $n tiersim run $case --out $WORK/$name $*"
  run_mpi "$n" "$TIERSIM" run "$SRC_DIR/$case" --out "$WORK/$name" --force --quiet "$@" || die "tiersim run $case on $n ranks failed"
  [ -f "$WORK/$name/snapshots.h5" ] || die "$WORK/$name/snapshots.h5 missing"
}

# check_in_paraview NAME KIND DATAFILE: truth from the .h5 (h5py), then pvbatch opens ./DATAFILE and
# /abs/path/DATAFILE.
check_in_paraview() {
  local name=$1 kind=$2 data=$3
  shift 3
  local dir="$WORK/$name"
  "$PY" "$VIZ_DIR/xdmf_truth.py" "$dir/snapshots.h5" >"$dir/truth.json" || die "cannot read $dir/snapshots.h5 with h5py"
  # Open as ./snapshots.xmf from the run directory (a bare relative name crashed Xdmf3), and by its
  # absolute path, as ParaView's GUI opens a file.
  (cd "$dir" && xvfb_pvbatch "$VIZ_DIR/paraview_check.py" \
      --data "./$data" --also-absolute --truth truth.json --kind "$kind" --png "paraview_$kind.png" "$@") \
    >"$dir/paraview_check.log" 2>&1
  local rc=$?
  grep -E '^(ok|FAIL) |failure' "$dir/paraview_check.log"
  if [ $rc -ne 0 ]; then
    echo "--- pvbatch log ($dir/paraview_check.log), last lines:"
    tail -20 "$dir/paraview_check.log"
    die "ParaView check of $dir/$data ($kind) failed (rc $rc)"
  fi
  echo "PNG: $dir/paraview_$kind.png"
}
