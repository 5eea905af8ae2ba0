#!/bin/bash
# GPU tests and memcheck over restarts, at the commit named in .carry/commit.
set -u
B=/tmp/b; mkdir -p $B/bin $B/lib /tmp/e
tar -xJf .carry/lib.tar.xz -C $B/lib
xz -dc .carry/tiersim.xz > $B/bin/tiersim; xz -dc .carry/tests.xz > $B/bin/tiersim_gpu_tests; chmod +x $B/bin/*
export LD_LIBRARY_PATH=$B/lib
T=$B/bin/tiersim
{
echo "== commit $(cat .carry/commit)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
$B/bin/tiersim_gpu_tests --gtest_brief=1 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED)|tests from .* ran|FAILED TEST|Failure"
for c in "cases/wave.toml --set grid.n=64" "cases/heat.toml --set grid.n=64 --precision fp64" "cases/plummer.toml --set nbody.count=4096"; do
  echo "memcheck, restart of: $c"
  rm -rf /tmp/e/m; $T run $c --backend cuda --steps 20 --set run.snapshot_every=10 --out /tmp/e/m -q
  compute-sanitizer --tool memcheck $T run --restart /tmp/e/m --steps 30 2>&1 | grep -E "ERROR SUMMARY|finished|start-up:"
done
} > $OUT/gpu_tests_37e3db2.txt 2>&1
cat $OUT/gpu_tests_37e3db2.txt
