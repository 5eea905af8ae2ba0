#!/bin/bash
# The build in .carry on one GPU. tiersim / tiersim_gpu_tests: the commit in .carry/commit (the
# previous level's register queue one helper, PreviousLevelQueue); tiersim_prev: e05c600 (the
# energy a column a thread, 6c753b5's kernels); tiersim_old: 56fd49e (the diagnostics' passes
# before 6c753b5). Any GPU: the GPU tests, memcheck over the wave's, the wave's single steps.
# On an H200 also: compute-sanitizer over the reductions' tests; the wave at 512^3, the builds
# alternating; heat as shipped, tiersim compare and tiersim bench stencil of every equation;
# Nsight Compute over the energy pass.
set -u
B=/tmp/b; mkdir -p $B/bin $B/lib /tmp/e
tar -xJf .carry/lib.tar.xz -C $B/lib
tar -xJf .carry/bins.tar.xz -C $B/bin; chmod +x $B/bin/*
export LD_LIBRARY_PATH=$B/lib
T=$B/bin/tiersim
L=$OUT/run3.txt
F='*EnergyAndStatistics*:*StatisticsCount*:*QueuedReductions*'
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
runs() {  # label, binary, args...
  local lab=$1 bin=$2; shift 2
  $bin run "$@" --out /tmp/e/r --force 2>&1 | grep -E "finished|wall:|steady state:|stencil_wave_energy|stencil_stats|rror" | sed "s/  */ /g" | sed "s/^/$lab: /"
}
bin() { case $1 in new) echo $T;; *) echo $B/bin/tiersim_$1;; esac; }
{
echo "== commit $(cat .carry/commit) (prev: e05c600, old: 56fd49e)"; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "start $(date +%T)"
[[ -n "${H200_ONLY:-}" && "$GPU" != *H200* ]] && { echo "not an H200 (H200_ONLY): nothing run"; exit 0; }
echo "-- tiersim_gpu_tests"
$B/bin/tiersim_gpu_tests --gtest_brief=1 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED)|tests from .* ran|FAILED TEST|Failure|Expected|Which is|actual" | head -40
echo "-- compute-sanitizer --tool memcheck tiersim_gpu_tests --gtest_filter='*StencilGpuVsCpu*shared*'"
timeout 150 compute-sanitizer --tool memcheck $B/bin/tiersim_gpu_tests --gtest_brief=1 --gtest_filter='*StencilGpuVsCpu*shared*' 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED)|SUMMARY|FAILED TEST" | head -8
for p in fp32 fp64; do for b in new; do
  echo "-- $b: bench stencil --equation wave --precision $p --sizes 512 --radii 1,2,3,4 --tilings shared --coeffs constant"
  $(bin $b) bench stencil --equation wave --precision $p --sizes 512 --radii 1,2,3,4 --tilings shared --coeffs constant 2>&1 | grep -E "copy|shared|tma|rror" | sed "s/  */ /g"
done; done
[[ "$GPU" == *H200* ]] || { echo "not an H200: no more"; echo "end $(date +%T)"; exit 0; }
for tool in memcheck racecheck synccheck; do
  echo "-- compute-sanitizer --tool $tool tiersim_gpu_tests --gtest_filter='$F'"
  compute-sanitizer --tool $tool $B/bin/tiersim_gpu_tests --gtest_brief=1 --gtest_filter="$F" 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED)|SUMMARY|FAILED TEST" | head -8
done
echo "-- the wave as shipped at 512^3 (R = 4, point source, diagnostics every 25), 500 steps, --no-snapshots --tiling shared"
W="cases/wave.toml --backend cuda --set grid.n=512 --no-snapshots"
for i in 1 2; do for b in old prev new; do runs "wave shipped $b" $(bin $b) $W --tiling shared; done; done
for b in old prev new; do runs "wave shipped fp64 $b" $(bin $b) $W --tiling shared --precision fp64; done
echo "-- the wave R = 1 pulse, diagnostics every 25, 2,000 steps"
for b in old prev new; do for til in shared temporal; do
  runs "wave R1 $b $til" $(bin $b) $W --set grid.radius=1 --set wave.initial='"pulse"' --set run.dt=1e-4 --set run.diagnostics_every=25 --steps 2000 --tiling $til; done; done
if [[ "$GPU" == *H200* ]]; then
echo "-- heat as shipped at 512^3 (R = 2, diagnostics every 5), 2,000 steps, --no-snapshots"
H="cases/heat.toml --backend cuda --set grid.n=512 --set run.dt=4e-7 --steps 2000 --no-snapshots"
for i in 1 2; do for b in old new; do for til in shared temporal; do runs "heat shipped $b $til" $(bin $b) $H --tiling $til; done; done; done
echo "-- tiersim compare cases/heat.toml --backend cuda --tiling none,shared,temporal --set grid.n=512 --set run.dt=4e-7 --steps 20"
$T compare cases/heat.toml --backend cuda --tiling none,shared,temporal --set grid.n=512 --set run.dt=4e-7 --steps 20 --out /tmp/e/c --force 2>&1 | sed -n '/^stencil_heat/,$p' | sed "s/  */ /g"
cp /tmp/e/c/compare.csv $OUT/compare_heat.csv 2>/dev/null
echo "-- tiersim bench stencil, 512^3 (periodic)"
for spec in "heat fp32 1 " "heat fp32 2,3,4 --temporal-steps 2" "wave fp32 1 " "wave fp32 2,3,4 --temporal-steps 2" \
            "heat fp64 1 " "heat fp64 2,3,4 --temporal-steps 2" "wave fp64 1 " "wave fp64 2,3,4 --temporal-steps 2" \
            "gray-scott fp32 1 " "gray-scott fp32 2,3,4 --tilings shared" "allen-cahn fp32 1,2,3,4 --tilings shared"; do
  set -- $spec
  TIL="--tilings shared,temporal"; [ "${4:-}" = "--tilings" ] && TIL=""
  echo "-- bench stencil --equation $1 --precision $2 --sizes 512 --radii $3 $TIL ${4:-} ${5:-} --coeffs constant"
  $T bench stencil --equation $1 --precision $2 --sizes 512 --radii $3 $TIL ${4:-} ${5:-} --coeffs constant 2>&1 |
    grep -E "copy|temporal|shared|tma|rror" | sed "s/  */ /g"
done
fi
echo "-- ncu over one energy pass (the wave at 512^3, R = 4, fp32 then fp64)"
for p in fp32 fp64; do
  echo "-- $p: ncu --clock-control none --kernel-name regex:wave_energy --launch-skip 2 --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats --section InstructionStats tiersim run $W --precision $p --tiling shared --steps 100"
  ncu --clock-control none --kernel-name regex:wave_energy --launch-skip 2 --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats --section InstructionStats $T run $W --precision $p --tiling shared --steps 100 --out /tmp/e/n --force 2>&1 |
    grep -E "wave_energy|Duration|DRAM Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit Reg|Grid Size|Warp Cycles Per Issued|L2 Hit|Mem Busy|Compute \(SM\)|Executed Instructions|Issue Slots Busy|Stall" | sed "s/  */ /g"
done
echo "end $(date +%T)"
} > $L 2>&1
cat $L
