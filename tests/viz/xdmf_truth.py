#!/usr/bin/python3
"""What tiersim wrote, read from snapshots.h5 with h5py (the H5MD index, not the step files the .xmf names), as
JSON for tests/viz/paraview_check.py. Run with Debian's /usr/bin/python3 (python3-h5py)."""
import json
import sys

import h5py
import numpy as np


def rng(a):
    return [float(np.min(a)), float(np.max(a))]


def main(path):
    out = {}
    with h5py.File(path, "r", locking=False) as f:
        if "particles/all/position" in f:
            pos = f["particles/all/position"]
            vel = f["particles/all/velocity/value"]
            steps = pos["step"][:]
            times = pos["time"][:]
            n = pos["value"].shape[1]
            p = {"n": int(n), "steps": steps.tolist(), "times": times.tolist(),
                 "mass": rng(f["particles/all/mass"][:]), "id": rng(f["particles/all/id"][:])}
            for key, row in (("first", 0), ("last", len(steps) - 1)):
                x = pos["value"][row]
                v = vel[row]
                speed = np.sqrt((v.astype(np.float64) ** 2).sum(axis=1))
                p[key] = {"step": int(steps[row]), "time": float(times[row]),
                          "bounds": [float(b) for k in range(3) for b in rng(x[:, k])],
                          "velocity_x": rng(v[:, 0]), "speed": rng(speed)}
            out["particles"] = p
        if "fields" in f:
            names = sorted(f["fields"].keys())
            g0 = f["fields"][names[0]]
            nt, nz, ny, nx = g0["value"].shape
            flds = {"names": names, "dims": [int(nx), int(ny), int(nz)],
                    "origin": [float(x) for x in g0.attrs["origin"]],
                    "spacing": [float(x) for x in g0.attrs["spacing"]],
                    "steps": g0["step"][:].tolist(), "times": g0["time"][:].tolist()}
            for key, row in (("first", 0), ("last", nt - 1)):
                flds[key] = {"time": float(g0["time"][row]),
                             "range": {n: rng(f["fields"][n]["value"][row]) for n in names}}
            out["fields"] = flds
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main(sys.argv[1])
