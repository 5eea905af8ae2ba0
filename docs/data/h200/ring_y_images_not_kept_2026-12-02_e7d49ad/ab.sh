#!/bin/bash
# A/B: the build of 62c555b (base) against the y halo rows written by the ring kernels (new):
# every equation and precision at 512^3 (shared), two rounds alternating; runs of 2,000 steps of
# the configurations whose fill goes; resource usage of both builds' ring kernels.
set -u
B=/tmp/b; mkdir -p $B/bin $B/lib /tmp/e
tar -xJf .carry/lib.tar.xz -C $B/lib
xz -dc .carry/base_tiersim.xz > $B/bin/base; xz -dc .carry/tiersim.xz > $B/bin/new; chmod +x $B/bin/*
export LD_LIBRARY_PATH=$B/lib
L=$OUT/ab_bench.txt
{
echo "== base: 62c555b; new: $(cat .carry/commit)"; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for round in 1 2; do
for bin in base new; do
  for ep in "heat fp32" "heat fp64" "wave fp32" "wave fp64" "gray-scott fp32"; do
    set -- $ep
    echo "-- $bin round $round $1 $2"
    $B/bin/$bin bench stencil --equation $1 --precision $2 --sizes 512 --tilings shared --coeffs constant 2>&1 | grep -E "^ +512|copy bandwidth|error"
  done
done
done
} > $L 2>&1
E=$OUT/ab_runs.txt
{
echo "== base: 62c555b; new: $(cat .carry/commit)"
H="cases/heat.toml --set grid.n=512 --set run.dt=3e-7 --set run.diagnostics_every=1000"
W="cases/wave.toml --set grid.n=512 --set wave.initial=\"pulse\" --set run.dt=1e-4 --set run.diagnostics_every=1000"
G="cases/gray_scott.toml --set grid.n=512 --set run.dt=0.005 --set run.diagnostics_every=1000"
for round in 1 2; do
for bin in base new; do
  for c in "W --set grid.radius=4" "W --set grid.radius=3 --precision fp64" "G --set grid.radius=4" "H --set grid.radius=4 --precision fp64" "H --set grid.radius=4"; do
    set -- $c; v=${!1}; shift
    echo "-- $bin round $round $c"
    $B/bin/$bin run $v "$@" --backend cuda --tiling shared --steps 2000 --no-snapshots --out /tmp/e/r --force 2>&1 | grep -E "finished|start-up:|steady|stencil_|error"
  done
done
done
} > $E 2>&1
command -v cuobjdump >/dev/null && for bin in base new; do cuobjdump -res-usage $B/bin/$bin 2>&1 | grep -A1 "Function" | grep -B1 -E "REG" | paste -d' ' - - | grep -E "ring|prefetch" | sed -E 's/^.*Function ([^ :]+).*REG:([0-9]+) STACK:([0-9]+) SHARED:[0-9]+ LOCAL:([0-9]+).*/\1 REG:\2 STACK:\3 LOCAL:\4/' | sort > $OUT/res_$bin.txt; done
diff $OUT/res_base.txt $OUT/res_new.txt > $OUT/res_diff.txt
wc -l $OUT/res_*.txt
cat $L; cat $E | grep -v "^ *stencil_"; grep -c . $OUT/res_diff.txt
