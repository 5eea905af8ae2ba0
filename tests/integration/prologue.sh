# Sourced first by every integration test (tests/integration/test_*.sh TIERSIM WORK): TIERSIM is
# the binary, WORK a scratch directory made fresh, the working directory the repository root
# (cases/ and scripts/ by relative path), PY the system python3 (Debian's matplotlib and h5py;
# TIERSIM_TEST_PYTHON names another, such as a GPU node's python3 with h5py).
TIERSIM=$1
WORK=$2
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
PY=${TIERSIM_TEST_PYTHON:-/usr/bin/python3}
# Skip (ctest's exit 77) where the system python3 cannot read HDF5.
require_h5py() {
  $PY -c "import h5py" 2>/dev/null || { echo "SKIP: /usr/bin/python3 without h5py (scripts/setup installs python3-h5py)"; exit 77; }
}
