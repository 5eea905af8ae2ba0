#!/usr/bin/python3
"""Reads a stencil run's snapshots.h5 back through the HDF5 API (h5py) and checks it against what
the command asked for, given on the command line (not read from the run's own case):

  check_stencil_fields.py DIR EQUATION NX NY NZ SPACING DT STEP...

- /fields/<name>/value is [T][nz][ny][nx] (heat, wave, allen-cahn: u; gray-scott: U and V), finite;
- /fields/<name>/step holds the STEPs, /fields/<name>/time = step * DT;
- attributes origin = (0, 0, 0), spacing = (SPACING,) * 3, shape = (NX, NY, NZ);
- /observables holds exactly the equation's names, each with value, step, time of one length;
- the index's value is an HDF5 virtual dataset whose row r maps, whole, onto
  snapshots.d/step_<step r>.h5:/fields/<name>, and reads back equal to that file's data.
Exit 1 with the reason otherwise."""
import sys

import h5py
import numpy as np

FIELDS = {"heat": ["u"], "wave": ["u"], "gray-scott": ["U", "V"], "allen-cahn": ["u"]}
OBSERVABLES = {
    "heat": {"total_heat", "min", "max"},
    "wave": {"energy", "min", "max"},
    "gray-scott": {"u_mean", "v_mean", "u_min", "u_max", "v_min", "v_max"},
    "allen-cahn": {"u_mean", "u_min", "u_max"},
}


def fail(msg):
    sys.exit("%s: %s" % (run, msg))


run, equation = sys.argv[1], sys.argv[2]
nx, ny, nz = (int(a) for a in sys.argv[3:6])
spacing, dt = float(sys.argv[6]), float(sys.argv[7])
steps = [int(a) for a in sys.argv[8:]]

with h5py.File(run + "/snapshots.h5", "r") as f:
    names = sorted(f["/fields"].keys())
    if names != sorted(FIELDS[equation]):
        fail("fields %s, expected %s" % (names, FIELDS[equation]))
    for name in names:
        g = f["/fields/" + name]
        value = g["value"]
        if value.shape != (len(steps), nz, ny, nx):
            fail("%s/value shape %s, expected %s" % (name, value.shape, (len(steps), nz, ny, nx)))
        if list(g["step"][...]) != steps:
            fail("%s/step %s, expected %s" % (name, list(g["step"][...]), steps))
        if not np.allclose(g["time"][...], np.array(steps) * dt, rtol=1e-12, atol=0):
            fail("%s/time %s, expected step * %g" % (name, list(g["time"][...]), dt))
        if not np.array_equal(g.attrs["origin"], [0.0, 0.0, 0.0]):
            fail("%s origin %s" % (name, g.attrs["origin"]))
        if not np.allclose(g.attrs["spacing"], [spacing] * 3, rtol=1e-12, atol=0):
            fail("%s spacing %s, expected %g" % (name, g.attrs["spacing"], spacing))
        if list(g.attrs["shape"]) != [nx, ny, nz]:
            fail("%s shape attribute %s, expected %s" % (name, list(g.attrs["shape"]), [nx, ny, nz]))
        if not value.is_virtual:
            fail("%s/value is not a virtual dataset" % name)
        rows = {}
        for src in value.virtual_sources():
            lo, hi = src.vspace.get_select_bounds()
            if lo[0] != hi[0] or tuple(lo[1:]) != (0, 0, 0) or tuple(hi[1:]) != (nz - 1, ny - 1, nx - 1):
                fail("%s/value maps %s..%s onto %s, not one whole row" % (name, lo, hi, src.file_name))
            rows[lo[0]] = (src.file_name, src.dset_name)
        expected = {r: ("snapshots.d/step_%012d.h5" % st, "/fields/" + name) for r, st in enumerate(steps)}
        if rows != expected:
            fail("%s/value maps rows onto %s, expected %s" % (name, rows, expected))
        data = value[...]
        if not np.all(np.isfinite(data)):
            fail("%s/value holds non-finite values" % name)
        for r, step in enumerate(steps):
            with h5py.File("%s/snapshots.d/step_%012d.h5" % (run, step), "r") as s:
                if not np.array_equal(s["/fields/" + name][...], data[r]):
                    fail("%s/value[%d] differs from step file %d" % (name, r, step))
        # Not all one value: the first and last snapshots differ (the equation ran).
        if len(steps) > 1 and np.array_equal(data[0], data[-1]):
            fail("%s: first and last snapshots are equal" % name)
    obs = f["/observables"]
    if set(obs.keys()) != OBSERVABLES[equation]:
        fail("observables %s, expected %s" % (sorted(obs.keys()), sorted(OBSERVABLES[equation])))
    for name in obs:
        o = obs[name]
        n = o["value"].shape[0]
        if n == 0 or o["step"].shape[0] != n or o["time"].shape[0] != n:
            fail("observable %s: value/step/time lengths %d/%d/%d" % (name, n, o["step"].shape[0], o["time"].shape[0]))
        if not np.all(np.isfinite(o["value"][...])):
            fail("observable %s holds non-finite values" % name)
print("%s: %s fields %s, %d snapshots, observables ok" % (run, equation, names, len(steps)))
