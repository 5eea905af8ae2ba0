#!/bin/bash
# The build in .carry (commit in .carry/commit) on an H100: Nsight Compute over one pass of the wave
# fp32 at R = 2, 512^3, periodic, fusing 2 steps (16 x 2, the default) and 3 (12 x 2), and over one
# single step: time, DRAM bytes and throughput, issue activity, instructions, warps resident.
set -u
B=/tmp/b; mkdir -p $B/bin $B/lib /tmp/e
tar -xJf .carry/lib.tar.xz -C $B/lib
xz -dc .carry/tiersim.xz > $B/bin/tiersim; chmod +x $B/bin/*
export LD_LIBRARY_PATH=$B/lib
T=$B/bin/tiersim
L=$OUT/ncu_wave_r2.txt
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__warps_active.avg.per_cycle_active,launch__registers_per_thread
{
echo "== commit $(cat .carry/commit)"; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
C="run cases/wave.toml --backend cuda --set grid.n=512 --set grid.radius=2 --set wave.initial=\"pulse\" --set run.dt=1e-4 --set grid.boundary=\"periodic\" --set run.diagnostics_every=1000 --steps 40 --no-snapshots --out /tmp/e/n --force"
for spec in "temporal 2 regex:temporal" "temporal 3 regex:temporal" "shared 0 regex:stencil_wave_tma"; do
  set -- $spec
  echo "-- ncu --clock-control none --kernel-name $3 --launch-skip 5 --launch-count 1 --metrics ... tiersim $C --tiling $1 --set stencil.temporal_steps=$2"
  ncu --clock-control none --kernel-name $3 --launch-skip 5 --launch-count 1 --metrics $M $T $C --tiling $1 --set stencil.temporal_steps=$2 2>&1 |
    grep -E "stencil_|gpu__|dram__|lts__|sm__|smsp__|launch__|rror" | sed "s/  */ /g"
done
} > $L 2>&1
cat $L
