#!/usr/bin/python3
"""Checks that a run directory is readable as a reader would find it: snapshots.xmf parses,
every HDF5 dataset it names exists in snapshots.h5 and reads whole, and the H5MD time series
have consistent lengths. Prints the snapshot steps. Exit 1 with the reason otherwise."""
import sys
import xml.etree.ElementTree as ET

import h5py
import numpy as np

run = sys.argv[1]
try:
    root = ET.parse(run + "/snapshots.xmf").getroot()
except Exception as e:  # noqa: BLE001
    sys.exit("snapshots.xmf does not parse: %s" % e)
with h5py.File(run + "/snapshots.h5", "r") as f:
    for item in root.iter("DataItem"):
        if item.get("Format") != "HDF":
            continue
        fname, path = item.text.strip().split(":", 1)
        if fname != "snapshots.h5":
            sys.exit("unexpected file %s" % fname)
        if path not in f:
            sys.exit("snapshots.xmf names %s, missing in snapshots.h5" % path)
        data = f[path][...]
        if data.dtype.kind == "f" and not np.all(np.isfinite(data)):
            sys.exit("%s holds non-finite values" % path)
    steps = []
    if "/particles/all/position" in f:
        g = f["/particles/all/position"]
        steps = list(g["step"][...])
        if g["value"].shape[0] != len(steps) or len(g["time"]) != len(steps):
            sys.exit("position value/step/time lengths differ")
        g["value"][...]
    for name, obs in f.get("/observables", {}).items():
        if obs["value"].shape[0] != obs["step"].shape[0]:
            sys.exit("observable %s value/step lengths differ" % name)
print(" ".join(str(s) for s in steps))
