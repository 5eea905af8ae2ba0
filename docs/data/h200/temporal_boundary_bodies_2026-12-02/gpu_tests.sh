#!/bin/bash
# GPU tests of the commit in .carry/commit, then compute-sanitizer over the temporal passes: memcheck
# over the temporal tests, racecheck and synccheck over small runs (periodic and fixed boundaries,
# passes cut short by the diagnostics every 7 steps).
set -u
B=/tmp/b; mkdir -p $B/bin $B/lib /tmp/e
tar -xJf .carry/lib.tar.xz -C $B/lib
xz -dc .carry/tiersim.xz > $B/bin/tiersim; ln -sf tiersim $B/bin/new; xz -dc .carry/tests.xz > $B/bin/tiersim_gpu_tests; chmod +x $B/bin/*
export LD_LIBRARY_PATH=$B/lib
T=$B/bin/tiersim
L=$OUT/gpu_tests.txt
{
echo "== commit $(cat .carry/commit)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
$B/bin/tiersim_gpu_tests --gtest_brief=1 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED)|tests from .* ran|FAILED TEST|Failure" | head -40
echo "-- compute-sanitizer memcheck: tiersim_gpu_tests --gtest_filter='*Temporal*'"
compute-sanitizer --tool memcheck $B/bin/tiersim_gpu_tests --gtest_brief=1 --gtest_filter='*Temporal*' 2>&1 |
  grep -E "^\[  (PASSED|FAILED|SKIPPED)|ERROR SUMMARY|FAILED TEST" | head -20
S="--backend cuda --set grid.n=64 --set grid.ny=32 --set grid.nz=24 --tiling temporal --set run.diagnostics_every=7 --steps 10 --no-snapshots --out /tmp/e/s --force"
for spec in "heat 2 fp32 2" "wave 1 fp32 3" "wave 1 fp64 4" "gray-scott 1 fp32 2"; do
  set -- $spec
  case $1 in heat) CASE="cases/heat.toml --set run.dt=1e-5" ;; wave) CASE="cases/wave.toml" ;; *) CASE="cases/gray_scott.toml --set run.dt=0.2" ;; esac
  for bc in fixed periodic; do
    [ $bc = periodic ] && [ $1 != heat ] && continue  # periodic: heat only
    for tool in racecheck synccheck; do
      echo "-- compute-sanitizer $tool: tiersim run $1 R = $2 $3, 64x32x24, $bc, passes of $4 cut every 7 steps, 10 steps"
      compute-sanitizer --tool $tool $T run $CASE $S --set grid.radius=$2 --precision $3 --set stencil.temporal_steps=$4 \
        --set grid.boundary="\"$bc\"" 2>&1 | grep -E "SUMMARY|rror|_temporal_r" | sed "s/  */ /g"
    done
  done
done
} > $L 2>&1
cat $L
