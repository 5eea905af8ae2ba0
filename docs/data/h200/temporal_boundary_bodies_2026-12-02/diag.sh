#!/bin/bash
# Fixed against periodic boundaries in the temporal pass of heat fp32: the pass and the single step
# on grids of the same points but other shapes (more or fewer tiles at the x and y ends), and
# Nsight Compute's spread of active cycles over the SMs. Build in .carry (tiersim.xz, lib.tar.xz).
set -u
B=/tmp/b; mkdir -p $B/bin $B/lib /tmp/e
tar -xJf .carry/lib.tar.xz -C $B/lib
xz -dc .carry/tiersim.xz > $B/bin/tiersim; chmod +x $B/bin/*
export LD_LIBRARY_PATH=$B/lib
TS=$B/bin/tiersim
L=$OUT/diag.txt
med() {  # kernel, launches and median ms of each kernel in a run's summary.json
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print("; ".join("%s x%d %.4f ms" % (k["kernel"], k["launches"], k["median_ms"]) for k in j["kernels"] if "stencil" in k["kernel"]))' "$1/summary.json"
}
{
echo "== build of $(cat .carry/commit)"; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
H="cases/heat.toml --backend cuda --set run.dt=2.5e-8 --set run.diagnostics_every=1000 --no-snapshots"
for R in 1 2; do
  TT="--set stencil.temporal_steps=$((R == 1 ? 3 : 2))"
  for G in "512 512 512" "1024 512 256" "2048 512 128"; do
    set -- $G
    for bc in periodic fixed; do
      for til in temporal shared; do
        $TS run $H --set grid.n=512 --set grid.nx=$1 --set grid.ny=$2 --set grid.nz=$3 --set grid.radius=$R \
          --set grid.boundary="\"$bc\"" --tiling $til $TT --steps 400 --out /tmp/e/r --force > /tmp/e/log 2>&1 || { tail -3 /tmp/e/log; continue; }
        echo "R=$R ${1}x${2}x${3} $bc $til: $(med /tmp/e/r)"
      done
    done
  done
done
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
M=gpu__time_duration.sum,sm__cycles_active.min,sm__cycles_active.avg,sm__cycles_active.max,smsp__inst_executed.sum,launch__grid_size
for R in 1 2; do
  TT="--set stencil.temporal_steps=$((R == 1 ? 3 : 2))"
  for bc in periodic fixed; do
    echo "-- ncu heat fp32 R = $R 512^3 $bc, one pass"
    $NCU --clock-control none --kernel-name regex:temporal --launch-skip 5 --launch-count 1 --metrics $M \
      $TS run $H --set grid.n=512 --set grid.radius=$R --set grid.boundary="\"$bc\"" --tiling temporal $TT --steps 40 \
      --out /tmp/e/n --force 2>&1 | grep -E "stencil_temporal|gpu__|sm__|smsp__|launch__|ERR|rror" | sed 's/  */ /g'
  done
done
} > $L 2>&1
CUO=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
$CUO -sass $B/bin/tiersim > /tmp/e/sass.txt 2>&1
for k in IfLi1ELi0ELi3ELi16ELi2ELi2E IfLi2ELi0ELi2ELi16ELi2ELi2E; do
  awk -v k="$k" '/Function : /{p = index($0, k) > 0} p' /tmp/e/sass.txt | xz > $OUT/sass_$k.txt.xz
done
cat $L
