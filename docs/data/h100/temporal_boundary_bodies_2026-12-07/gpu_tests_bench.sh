#!/bin/bash
# The build in .carry (commit in .carry/commit) on an H100: tiersim_gpu_tests;
# tiersim bench stencil at 512^3, the single step and the pass side by side, and Gray-Scott's
# single step at R = 1..4; then compute-sanitizer memcheck over the temporal tests, racecheck and
# synccheck over small runs of the passes (periodic and fixed, cut by diagnostics every 7 steps).
set -u
B=/tmp/b; mkdir -p $B/bin $B/lib /tmp/e
tar -xJf .carry/lib.tar.xz -C $B/lib
xz -dc .carry/tiersim.xz > $B/bin/tiersim; xz -dc .carry/tests.xz > $B/bin/tiersim_gpu_tests; chmod +x $B/bin/*
export LD_LIBRARY_PATH=$B/lib
T=$B/bin/tiersim
L=$OUT/gpu_tests_bench.txt
{
echo "== commit $(cat .carry/commit)"; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "start $(date +%T)"; $B/bin/tiersim_gpu_tests --gtest_brief=1 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED)|tests from .* ran|FAILED TEST|Failure" | head -40
echo "-- tiersim bench stencil, 512^3 (periodic)"
for spec in "heat fp32 1 " "heat fp32 2,3,4 --temporal-steps 2" "wave fp32 1 " "wave fp32 2,3,4 --temporal-steps 2" \
            "heat fp64 1 " "heat fp64 2,3,4 --temporal-steps 2" "wave fp64 1 " "wave fp64 2,3,4 --temporal-steps 2" \
            "gray-scott fp32 1 " "gray-scott fp32 2,3,4 --tilings shared"; do
  set -- $spec
  TIL="--tilings shared,temporal"; [ "${4:-}" = "--tilings" ] && TIL=""
  echo "-- bench stencil --equation $1 --precision $2 --sizes 512 --radii $3 $TIL ${4:-} ${5:-} --coeffs constant"
  $T bench stencil --equation $1 --precision $2 --sizes 512 --radii $3 $TIL ${4:-} ${5:-} --coeffs constant 2>&1 |
    grep -E "copy|temporal|shared|tma|rror" | sed "s/  */ /g"
done
echo "-- compute-sanitizer memcheck: tiersim_gpu_tests --gtest_filter='*Temporal*'"
compute-sanitizer --tool memcheck $B/bin/tiersim_gpu_tests --gtest_brief=1 --gtest_filter='*Temporal*' 2>&1 |
  grep -E "^\[  (PASSED|FAILED|SKIPPED)|ERROR SUMMARY|FAILED TEST" | head -20
S="--backend cuda --set grid.n=64 --set grid.ny=32 --set grid.nz=24 --tiling temporal --set run.diagnostics_every=7 --steps 10 --no-snapshots --out /tmp/e/s --force"
for spec in "heat 1 fp32 3 periodic" "heat 1 fp32 3 fixed" "heat 2 fp32 2 fixed" "wave 1 fp64 4 fixed" "wave 1 fp64 4 periodic" "wave 2 fp32 2 fixed" "wave 1 fp32 3 fixed" "gray-scott 1 fp32 2 fixed"; do
  set -- $spec
  case $1 in heat) CASE="cases/heat.toml --set run.dt=1e-5" ;; wave) CASE="cases/wave.toml --set wave.initial=\"pulse\"" ;; *) CASE="cases/gray_scott.toml --set run.dt=0.2" ;; esac
  for tool in racecheck synccheck; do
    echo "-- compute-sanitizer $tool: tiersim run $1 R = $2 $3, 64x32x24, $5, passes of $4 cut every 7 steps, 10 steps"
    compute-sanitizer --tool $tool $T run $CASE $S --set grid.radius=$2 --precision $3 --set stencil.temporal_steps=$4 \
      --set grid.boundary="\"$5\"" 2>&1 | grep -E "SUMMARY|rror|_temporal_r" | sed "s/  */ /g"
  done
done
echo "end $(date +%T)"
} > $L 2>&1
cat $L
