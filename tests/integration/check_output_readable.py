#!/usr/bin/python3
"""Checks that a run directory is readable as a reader would find it: snapshots.xmf parses,
every HDF5 file and dataset it names exists and reads whole, and the H5MD time series in
snapshots.h5 have consistent lengths and read through to the step files. Prints the snapshot steps. Exit 1 with the reason otherwise."""
import sys
import xml.etree.ElementTree as ET

import h5py
import numpy as np

run = sys.argv[1]
try:
    root = ET.parse(run + "/snapshots.xmf").getroot()
except Exception as e:  # noqa: BLE001
    sys.exit("snapshots.xmf does not parse: %s" % e)
for item in root.iter("DataItem"):
    if item.get("Format") != "HDF":
        continue
    fname, path = item.text.strip().split(":", 1)
    if not fname.startswith("snapshots.d/step_") or fname.endswith(".tmp"):
        sys.exit("snapshots.xmf names an unexpected file %s" % fname)
    try:
        with h5py.File(run + "/" + fname, "r") as s:
            if path not in s:
                sys.exit("snapshots.xmf names %s:%s, missing" % (fname, path))
            data = s[path][...]
    except OSError as e:
        sys.exit("snapshots.xmf names %s, unreadable: %s" % (fname, e))
    if data.dtype.kind == "f" and not np.all(np.isfinite(data)):
        sys.exit("%s:%s holds non-finite values" % (fname, path))
with h5py.File(run + "/snapshots.h5", "r") as f:
    steps = []
    if "/particles/all/position" in f:
        g = f["/particles/all/position"]
        steps = list(g["step"][...])
        if g["value"].shape[0] != len(steps) or len(g["time"]) != len(steps):
            sys.exit("position value/step/time lengths differ")
        if g["value"].shape[0] and not np.all(np.isfinite(g["value"][...])):
            sys.exit("position value holds non-finite values (a step file it maps onto is missing?)")
    for name, obs in f.get("/observables", {}).items():
        if obs["value"].shape[0] != obs["step"].shape[0]:
            sys.exit("observable %s value/step lengths differ" % name)
print(" ".join(str(s) for s in steps))
