#!/bin/bash
# The build in .carry (commit in .carry/commit) on an H100: each pass and single step with fixed and
# periodic boundaries from `tiersim run` (telemetry medians; the share of the pass's speedup fixed
# boundaries keep), then runs of 2,000 steps end to end, `--tiling shared` against `--tiling
# temporal` (its default steps).
set -u
B=/tmp/b; mkdir -p $B/bin $B/lib /tmp/e
tar -xJf .carry/lib.tar.xz -C $B/lib
xz -dc .carry/tiersim.xz > $B/bin/tiersim; chmod +x $B/bin/*
export LD_LIBRARY_PATH=$B/lib
T=$B/bin/tiersim
L=$OUT/shares_e2e.txt
med() {
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print("; ".join("%s x%d %.4f ms" % (k["kernel"], k["launches"], k["median_ms"]) for k in j["kernels"] if "stats" not in k["kernel"] and "halo" not in k["kernel"]))' "$1/summary.json"
}
{
echo "== commit $(cat .carry/commit)"; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
C="--backend cuda --set grid.n=512 --set run.diagnostics_every=1000 --no-snapshots"
HEAT="cases/heat.toml --set run.dt=3e-8"
WAVE="cases/wave.toml --set wave.initial=\"pulse\" --set run.dt=1e-4"
GS="cases/gray_scott.toml --set run.dt=0.005"
for spec in "heat 1 fp32 3" "heat 2 fp32 2" "heat 1 fp64 3" "wave 1 fp32 4" "wave 1 fp64 4" "wave 2 fp64 2" "wave 2 fp32 2" "heat 2 fp64 2" "gray-scott 1 fp32 2"; do
  set -- $spec
  case $1 in heat) CASE=$HEAT ;; wave) CASE=$WAVE ;; *) CASE=$GS ;; esac
  for bc in periodic fixed; do
    for til in temporal shared; do
      $T run $CASE $C --steps 400 --set grid.radius=$2 --precision $3 --set stencil.temporal_steps=$4 \
        --set grid.boundary="\"$bc\"" --tiling $til --out /tmp/e/r --force > /tmp/e/log 2>&1 || { tail -2 /tmp/e/log; continue; }
      echo "$1 R=$2 $3 $bc $til: $(med /tmp/e/r)"
    done
  done
done
echo "-- end to end, 2,000 steps, --tiling shared against --tiling temporal (its default steps)"
for spec in "heat 1 fp32" "heat 2 fp32" "heat 1 fp64" "wave 1 fp32" "wave 1 fp64" "gray-scott 1 fp32"; do
  set -- $spec
  case $1 in heat) CASE=$HEAT ;; wave) CASE=$WAVE ;; *) CASE=$GS ;; esac
  for bc in periodic fixed; do
    for til in shared temporal; do
      $T run $CASE $C --steps 2000 --set grid.radius=$2 --precision $3 --set grid.boundary="\"$bc\"" \
        --tiling $til --out /tmp/e/w --force 2>&1 | grep -E "finished|wall:|error|_temporal_r|_tma_r|_shared_r" | sed "s/  */ /g" | sed "s/^/$1 R=$2 $3 $bc $til: /"
    done
  done
done
} > $L 2>&1
cat $L
