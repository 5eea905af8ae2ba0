#!/bin/bash
# A/B: the temporal passes with fixed and periodic boundaries, the build of 24eb46b (base) against
# the commit in .carry/commit (new: fix_rows only at the steps and threads that hold points
# outside), alternating, two rounds; then Nsight Compute's instructions and time of one pass.
set -u
B=/tmp/b; mkdir -p $B/bin $B/lib /tmp/e
tar -xJf .carry/lib.tar.xz -C $B/lib
xz -dc .carry/base_tiersim.xz > $B/bin/base; xz -dc .carry/tiersim.xz > $B/bin/new; chmod +x $B/bin/*
export LD_LIBRARY_PATH=$B/lib
L=$OUT/ab.txt
med() {
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print("; ".join("%s x%d %.4f ms" % (k["kernel"], k["launches"], k["median_ms"]) for k in j["kernels"] if "temporal" in k["kernel"] or "shared" in k["kernel"] or "tma" in k["kernel"]))' "$1/summary.json"
}
{
echo "== base: 24eb46b; new: $(cat .carry/commit)"; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
C="--backend cuda --set grid.n=512 --set run.diagnostics_every=1000 --no-snapshots --steps 400"
HEAT="cases/heat.toml --set run.dt=3e-8"
WAVE="cases/wave.toml --set wave.initial=\"pulse\" --set run.dt=1e-4"
GS="cases/gray_scott.toml --set run.dt=0.005"
for round in 1 2; do
  for bin in base new; do
    for spec in "heat 1 fp32 3" "heat 2 fp32 2" "heat 1 fp64 3" "wave 1 fp32 3" "wave 1 fp64 4" "wave 2 fp32 2" "gray-scott 1 fp32 2"; do
      set -- $spec
      case $1 in heat) CASE=$HEAT ;; wave) CASE=$WAVE ;; *) CASE=$GS ;; esac
      for bc in periodic fixed; do
        $B/bin/$bin run $CASE $C --set grid.radius=$2 --precision $3 --set stencil.temporal_steps=$4 \
          --set grid.boundary="\"$bc\"" --tiling temporal --out /tmp/e/r --force > /tmp/e/log 2>&1 || { tail -2 /tmp/e/log; continue; }
        echo "$bin round $round $1 R=$2 $3 $bc: $(med /tmp/e/r)"
      done
    done
  done
done
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
M=gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_active.max,smsp__inst_executed.sum
for bin in base new; do
  for R in 1 2; do
    for bc in periodic fixed; do
      echo "-- ncu $bin heat fp32 R = $R 512^3 $bc, one pass"
      $NCU --clock-control none --kernel-name regex:temporal --launch-skip 5 --launch-count 1 --metrics $M \
        $B/bin/$bin run $HEAT --backend cuda --set grid.n=512 --set grid.radius=$R --set grid.boundary="\"$bc\"" \
        --tiling temporal --set stencil.temporal_steps=$((R == 1 ? 3 : 2)) --steps 40 --no-snapshots \
        --out /tmp/e/n --force 2>&1 | grep -E "gpu__|sm__|smsp__|ERR|rror" | sed 's/  */ /g'
    done
  done
done
} > $L 2>&1
cat $L
