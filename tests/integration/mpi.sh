# Sourced by the integration tests that run tiersim under MPI, after prologue.sh (TIERSIM set).
# require_mpi: skip (exit 77) with the reason where tiersim was built without MPI or mpirun is
# missing. run_mpi N CMD...: CMD on N ranks, on however many cores there are (oversubscribed; CI
# runs as root, which Open MPI refuses unless told), one OpenMP thread per rank, and no
# single-copy shared-memory transfers (containers often forbid the ptrace access they need).
# BACKEND: the backend the MPI tests run (TIERSIM_TEST_BACKEND, default cpu: CI has no GPU; on a GPU
# node `TIERSIM_TEST_BACKEND=cuda` runs the same comparisons on the CUDA engines, the ranks on GPUs
# of their own or sharing them). TRANSPORT: --transport for the runs on several ranks
# (TIERSIM_TEST_TRANSPORT, default auto). EXCHANGE: the telemetry rows' exchange names (a regex).
BACKEND=${TIERSIM_TEST_BACKEND:-cpu}
TRANSPORT=${TIERSIM_TEST_TRANSPORT:-auto}
EXCHANGE='(mpi|nccl|ipc)'
require_mpi() {
  command -v mpirun >/dev/null 2>&1 || { echo "SKIP: mpirun not found (scripts/setup installs openmpi-bin)"; exit 77; }
  "$TIERSIM" info 2>/dev/null | grep -q "^ranks: MPI" ||
    { echo "SKIP: tiersim was built without MPI (scripts/setup installs libopenmpi-dev; configure again)"; exit 77; }
}
run_mpi() {
  local n=$1
  shift
  local root_flag=()
  [ "$(id -u)" = 0 ] && root_flag=(--allow-run-as-root)
  mpirun "${root_flag[@]}" --oversubscribe -np "$n" --mca btl_vader_single_copy_mechanism none \
    -x OMP_NUM_THREADS=1 -x NCCL_NVLS_ENABLE=0 "$@"
}
