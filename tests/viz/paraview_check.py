"""ParaView opens tiersim's output as a user would, and shows what tiersim wrote.

Run under pvbatch (xvfb-run -a pvbatch paraview_check.py ...) from the run directory:
  --data ./snapshots.xmf      the file to open (relative with ./: a bare name crashed Xdmf3)
  --also-absolute             also open it by its absolute path, as ParaView's GUI does
  --truth truth.json          what tiersim wrote (tests/viz/xdmf_truth.py, read with h5py)
  --kind particles|fields     which part of the truth to check
  --readers default,XDMFReader,Xdmf3ReaderS,Xdmf3ReaderT   ("default" = OpenDataFile's choice)
  --png out.png               rendered with the default reader at the last time
For each reader: time steps, then at the first and the last time the number of points and cells,
the bounds and the range of a data array, and (grids) the coordinates and values of two points
off every symmetry line, all against the truth. Exit 1 on any
mismatch, with one line per failure.
"""
import argparse
import json
import os
import sys

from paraview import servermanager
from paraview import simple as pv
from vtkmodules.vtkCommonDataModel import vtkCompositeDataSet, vtkDataObjectTreeIterator
from vtkmodules.vtkIOImage import vtkPNGReader

failures = []


def check(cond, msg):
    print(("ok    " if cond else "FAIL  ") + msg)
    if not cond:
        failures.append(msg)


def close(a, b, rel=1e-6):
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))


def leaves(d):
    """The data sets inside d (d itself if it is not composite), skipping empty blocks."""
    if d.IsA("vtkCompositeDataSet"):
        it = d.NewIterator()
        it.UnRegister(None)
        it.InitTraversal()
        out = []
        while not it.IsDoneWithTraversal():
            b = it.GetCurrentDataObject()
            if b is not None and b.GetNumberOfPoints() > 0:
                out.append(b)
            it.GoToNextItem()
        return out
    return [d] if d.GetNumberOfPoints() > 0 else []


def pick(blocks, kind):
    for b in blocks:
        is_grid = b.IsA("vtkImageData") or b.IsA("vtkStructuredGrid") or b.IsA("vtkRectilinearGrid")
        if (kind == "fields") == bool(is_grid):
            return b
    return None


def array_range(ds, name, comp=0):
    a = ds.GetPointData().GetArray(name)
    if a is None:
        return None
    return list(a.GetRange(comp))


def speed_range(ds):
    a = ds.GetPointData().GetArray("velocity")
    if a is None:
        return None
    return list(a.GetRange(-1))  # -1: magnitude


def open_with(reader, data):
    if reader == "default":
        r = pv.OpenDataFile(data)
    elif reader == "XDMFReader":
        r = pv.XDMFReader(FileNames=[data])
    else:
        r = getattr(pv, reader)(FileName=[data])
    if r is None:
        raise RuntimeError("no reader for " + data)
    return r


def check_reader(reader, args, truth):
    t = truth[args.kind]
    try:
        r = open_with(reader, args.data)
    except Exception as e:  # noqa: BLE001 - reported as a failure line
        check(False, f"{reader}: cannot open {args.data}: {e}")
        return None
    name = r.GetXMLName()
    times = list(r.TimestepValues) if r.TimestepValues else []
    check(len(times) == len(t["times"]) and all(close(a, b, 1e-12) for a, b in zip(times, t["times"])),
          f"{reader} ({name}) opening {args.data}: {len(times)} time steps {times[:2]}..{times[-1:]} == {len(t['times'])} written")
    for key in ("first", "last"):
        tt = t[key]["time"]
        r.UpdatePipeline(tt)
        d = servermanager.Fetch(r)
        b = pick(leaves(d), args.kind)
        if b is None:
            check(False, f"{reader} ({name}) t={tt}: no {args.kind} data set in the output ({d.GetClassName()})")
            continue
        where = f"{reader} ({name}) t={tt} [{b.GetClassName()}]"
        if args.kind == "particles":
            n = t["n"]
            check(b.GetNumberOfPoints() == n, f"{where}: {b.GetNumberOfPoints()} points == {n}")
            check(b.GetNumberOfCells() == n, f"{where}: {b.GetNumberOfCells()} cells == {n}")
            types = {b.GetCellType(c) for c in range(0, b.GetNumberOfCells(), max(1, n // 97))}
            check(types <= {1, 2}, f"{where}: cell types {sorted(types)} are vertex/polyvertex")
            bounds = list(b.GetBounds())
            check(all(close(a, c) for a, c in zip(bounds, t[key]["bounds"])),
                  f"{where}: bounds {['%.6g' % x for x in bounds]} == written")
            vx = array_range(b, "velocity", 0)
            check(vx is not None and all(close(a, c) for a, c in zip(vx, t[key]["velocity_x"])),
                  f"{where}: velocity x range {vx} == {t[key]['velocity_x']}")
            sp = speed_range(b)
            check(sp is not None and all(close(a, c, 1e-5) for a, c in zip(sp, t[key]["speed"])),
                  f"{where}: speed range {sp} == {t[key]['speed']}")
            m = array_range(b, "mass")
            check(m is not None and all(close(a, c) for a, c in zip(m, t["mass"])), f"{where}: mass range {m} == {t['mass']}")
            i = array_range(b, "id")
            check(i == t["id"], f"{where}: id range {i} == {t['id']}")
        else:
            nx, ny, nz = t["dims"]
            cells = max(nx - 1, 1) * max(ny - 1, 1) * max(nz - 1, 1)
            check(b.GetNumberOfPoints() == nx * ny * nz, f"{where}: {b.GetNumberOfPoints()} points == {nx}x{ny}x{nz}")
            check(b.GetNumberOfCells() == cells, f"{where}: {b.GetNumberOfCells()} cells == {cells}")
            bounds = list(b.GetBounds())
            want = []
            for k, nk in enumerate((nx, ny, nz)):
                want += [t["origin"][k], t["origin"][k] + (nk - 1) * t["spacing"][k]]
            check(all(close(a, c) for a, c in zip(bounds, want)), f"{where}: bounds {bounds} == {want}")
            for fname, want_range in t[key]["range"].items():
                got = array_range(b, fname)
                check(got is not None and all(close(a, c) for a, c in zip(got, want_range)),
                      f"{where}: {fname} range {got} == {want_range}")
            # Values at points off every symmetry line (xdmf_truth.probe_points), found by their
            # coordinates as a user's probe would: an exchange of axes in the dimensions, origin,
            # spacing or data lands elsewhere.
            scale = max(abs(x) for x in want) or 1.0
            for p in t[key].get("probes", []):
                pid = b.FindPoint(p["xyz"])
                at = list(b.GetPoint(pid)) if pid >= 0 else None
                check(at is not None and all(abs(a - c) <= 1e-9 * scale for a, c in zip(at, p["xyz"])),
                      f"{where}: grid point (i,j,k)={p['ijk']} at {p['xyz']}: ParaView's nearest point {at}")
                if at is None:
                    continue
                for fname, want_v in p["values"].items():
                    arr = b.GetPointData().GetArray(fname)
                    got = arr.GetComponent(pid, 0) if arr is not None else None
                    check(got is not None and close(got, want_v),
                          f"{where}: {fname} at (i,j,k)={p['ijk']} {got} == {want_v} (snapshots.h5)")
    return r


def render(r, args, truth):
    view = pv.CreateView("RenderView")
    view.ViewSize = [480, 360]
    view.OrientationAxesVisibility = 0
    try:
        view.UseColorPaletteForBackground = 0
    except AttributeError:
        pass
    view.Background = [0.0, 0.0, 0.0]
    t = truth[args.kind]
    view.ViewTime = t["last"]["time"]
    src = r
    flat = None
    if args.kind == "fields":
        field = t["names"][0]
        dims = t["dims"]
        flat = next((a for a in (2, 1, 0) if dims[a] == 1), None)
        if flat is None:
            # A 3D grid: the slice through the middle, normal z.
            src = pv.Slice(Input=r)
            src.SliceType = "Plane"
            o, h = t["origin"], t["spacing"]
            src.SliceType.Origin = [o[a] + 0.5 * (dims[a] - 1) * h[a] for a in range(3)]
            src.SliceType.Normal = [0, 0, 1]
        # A flat grid (one point along an axis) is shown as it is: a slice across it is a line.
        disp = pv.Show(src, view)
        pv.ColorBy(disp, ("POINTS", field))
    else:
        disp = pv.Show(src, view)
        disp.SetRepresentationType("Points")
        disp.PointSize = 3
        pv.ColorBy(disp, ("POINTS", "velocity", "Magnitude"))
    disp.RescaleTransferFunctionToDataRange(True, False)
    if flat is not None:
        # Look along the flat axis, so the picture is the plane itself.
        pv.Render(view)
        c = [0.0, 0.0, 0.0]
        c[flat] = 1.0
        view.CameraFocalPoint = [0.0, 0.0, 0.0]
        view.CameraPosition = c
        view.CameraViewUp = [0, 1, 0] if flat == 2 else [0, 0, 1]
        view.CameraParallelProjection = 1
    view.ResetCamera()
    pv.Render(view)
    pv.SaveScreenshot(args.png, view, ImageResolution=[480, 360])
    png = vtkPNGReader()
    png.SetFileName(args.png)
    png.Update()
    img = png.GetOutput()
    sc = img.GetPointData().GetScalars()
    ncomp = sc.GetNumberOfComponents()
    total = img.GetNumberOfPoints()
    lit = 0
    for i in range(total):
        if any(sc.GetComponent(i, c) > 8 for c in range(min(ncomp, 3))):
            lit += 1
    # A grid is drawn face-on (a slice, or a flat grid itself) and fills much of the picture: a
    # few lit pixels there mean a line or a dot, not the field.
    need = total // 20 if args.kind == "fields" else total // 1000
    check(lit > need, f"render {args.png}: {lit} of {total} pixels are not background (> {need})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--truth", required=True)
    ap.add_argument("--kind", choices=["particles", "fields"], required=True)
    ap.add_argument("--readers", default="default,XDMFReader,Xdmf3ReaderS,Xdmf3ReaderT")
    ap.add_argument("--png", default="")
    ap.add_argument("--also-absolute", action="store_true",
                    help="check with every reader again, the file opened by its absolute path (as the GUI does)")
    args = ap.parse_args()
    with open(args.truth) as f:
        truth = json.load(f)
    if args.kind not in truth:
        print(f"FAIL  {args.truth}: tiersim wrote no {args.kind}")
        return 1
    first = None
    datas = [args.data]
    if args.also_absolute:
        datas.append(os.path.abspath(args.data))
    for data in datas:
        args.data = data
        for reader in args.readers.split(","):
            r = check_reader(reader, args, truth)
            if reader == "default" and first is None:
                first = r
    if args.png and first is not None:
        render(first, args, truth)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip ParaView's teardown: under Xvfb it can end in "X Error ... GLXBadContext", exiting 1
    # after every check passed.
    os._exit(code)
