#!/usr/bin/python3
"""What tiersim wrote, read from snapshots.h5 with h5py (the H5MD index, not the step files the .xmf names), as
JSON for tests/viz/paraview_check.py. Run with Debian's /usr/bin/python3 (python3-h5py)."""
import json
import sys

import h5py
import numpy as np


def rng(a):
    return [float(np.min(a)), float(np.max(a))]


def probe_points(a):
    """Grid points (i, j, k) whose values tell a transposed or mis-spaced grid apart: the extreme
    of a (its largest deviation from the median) and the strongest point beside it that lies on
    none of the axis lines through it. a is value[T] as stored: [z][y][x]."""
    dev = np.abs(a.astype(np.float64) - np.median(a))
    k0, j0, i0 = (int(x) for x in np.unravel_index(np.argmax(dev), a.shape))
    nz, ny, nx = a.shape
    kk, jj, ii = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")
    off = np.ones(a.shape, bool)
    for d, n in ((ii - i0, nx), (jj - j0, ny), (kk - k0, nz)):
        if n > 1:
            off &= d != 0
    points = [(i0, j0, k0)]
    if off.any() and dev.max() > 0:
        k, j, i = np.unravel_index(np.argmax(np.where(off, dev, -1.0)), a.shape)
        points.append((int(i), int(j), int(k)))
    else:  # a constant field: a fixed point off the diagonal
        points.append((nx * 2 // 3, ny // 3, nz // 5))
    return points


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
            o, h = flds["origin"], flds["spacing"]
            for key, row in (("first", 0), ("last", nt - 1)):
                values = {n: f["fields"][n]["value"][row] for n in names}
                probes = [{"ijk": [i, j, k], "xyz": [o[0] + i * h[0], o[1] + j * h[1], o[2] + k * h[2]],
                           "values": {n: float(values[n][k, j, i]) for n in names}}
                          for i, j, k in probe_points(values[names[0]])]
                flds[key] = {"time": float(g0["time"][row]),
                             "range": {n: rng(values[n]) for n in names}, "probes": probes}
            out["fields"] = flds
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main(sys.argv[1])
