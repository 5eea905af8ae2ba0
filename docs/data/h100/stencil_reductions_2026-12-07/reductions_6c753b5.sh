#!/bin/bash
# The build in .carry (commit in .carry/commit; tiersim_old: 56fd49e, the kernels of b82d4cb) on
# one GPU: tiersim_gpu_tests; compute-sanitizer over the reductions' test; then the runs as
# shipped at 512^3, the old build and the new alternating (the diagnostics' passes: the wave's
# energy and every field's statistics); tiersim compare of heat as shipped; the whole step and
# the passes of every equation (tiersim bench stencil).
set -u
B=/tmp/b; mkdir -p $B/bin $B/lib /tmp/e
tar -xJf .carry/lib.tar.xz -C $B/lib
tar -xJf .carry/bins.tar.xz -C $B/bin; chmod +x $B/bin/*
export LD_LIBRARY_PATH=$B/lib
T=$B/bin/tiersim
L=$OUT/reductions.txt
runs() {  # label, binary, args...
  local lab=$1 bin=$2; shift 2
  $bin run "$@" --out /tmp/e/r --force 2>&1 | grep -E "finished|wall:|steady state:|stencil_wave_energy|stencil_stats|rror" | sed "s/  */ /g" | sed "s/^/$lab: /"
}
{
echo "== commit $(cat .carry/commit) (old: 56fd49e)"; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "start $(date +%T)"; $B/bin/tiersim_gpu_tests --gtest_brief=1 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED)|tests from .* ran|FAILED TEST|Failure|Expected|Which is|actual" | head -40
for tool in memcheck; do
  echo "-- compute-sanitizer $tool: tiersim_gpu_tests --gtest_filter='*EnergyAndStatistics*:*StatisticsCount*:*QueuedReductions*'"
  compute-sanitizer --tool $tool $B/bin/tiersim_gpu_tests --gtest_brief=1 --gtest_filter='*EnergyAndStatistics*:*StatisticsCount*:*QueuedReductions*' 2>&1 |
    grep -E "^\[  (PASSED|FAILED|SKIPPED)|SUMMARY|FAILED TEST" | head -8
done
echo "-- the wave as shipped at 512^3 (R = 4, point source, diagnostics every 25), 500 steps, --no-snapshots"
W="cases/wave.toml --backend cuda --set grid.n=512 --no-snapshots"
for i in 1 2; do for b in old new; do BIN=$T; [ $b = old ] && BIN=$B/bin/tiersim_old
  runs "wave shipped $b shared" $BIN $W --tiling shared; done; done
for b in old new; do BIN=$T; [ $b = old ] && BIN=$B/bin/tiersim_old
  runs "wave shipped fp64 $b shared" $BIN $W --tiling shared --precision fp64; done
echo "-- the wave R = 1 pulse, diagnostics every 25, 2,000 steps"
for b in old new; do BIN=$T; [ $b = old ] && BIN=$B/bin/tiersim_old
  for til in shared temporal; do
  runs "wave R1 $b $til" $BIN $W --set grid.radius=1 --set wave.initial='"pulse"' --set run.dt=1e-4 --set run.diagnostics_every=25 --steps 2000 --tiling $til; done; done
echo "-- heat as shipped at 512^3 (R = 2, diagnostics every 5), 2,000 steps, --no-snapshots"
H="cases/heat.toml --backend cuda --set grid.n=512 --set run.dt=4e-7 --steps 2000 --no-snapshots"
for i in 1 2; do for b in old new; do BIN=$T; [ $b = old ] && BIN=$B/bin/tiersim_old
  for til in shared temporal; do runs "heat shipped $b $til" $BIN $H --tiling $til; done; done; done
echo "-- tiersim compare cases/heat.toml --backend cuda --tiling none,shared,temporal --set grid.n=512 --set run.dt=4e-7 --steps 20"
$T compare cases/heat.toml --backend cuda --tiling none,shared,temporal --set grid.n=512 --set run.dt=4e-7 --steps 20 --out /tmp/e/c --force 2>&1 | sed -n '/^stencil_heat/,$p' | sed "s/  */ /g"
cp /tmp/e/c/compare.csv $OUT/compare_heat.csv 2>/dev/null
for tool in racecheck synccheck; do
  echo "-- compute-sanitizer $tool: tiersim_gpu_tests --gtest_filter='*EnergyAndStatistics*:*StatisticsCount*:*QueuedReductions*'"
  compute-sanitizer --tool $tool $B/bin/tiersim_gpu_tests --gtest_brief=1 --gtest_filter='*EnergyAndStatistics*:*StatisticsCount*:*QueuedReductions*' 2>&1 |
    grep -E "^\[  (PASSED|FAILED|SKIPPED)|SUMMARY|FAILED TEST" | head -8
done
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
echo "end $(date +%T)"
} > $L 2>&1
cat $L
