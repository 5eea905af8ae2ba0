"""pvbatch part of scripts/render (run from the run directory, under xvfb-run)."""
import argparse
import os
import re
import shutil
import sys
import tempfile
import xml.etree.ElementTree as ET

import numpy as np
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from safe_write import write_bytes  # noqa: E402
from paraview import servermanager
from vtkmodules.util.numpy_support import vtk_to_numpy
from paraview import simple as pv


def collections(xmf):
    """Names of the temporal collections in the .xmf and, for grids, their attribute names."""
    root = ET.parse(xmf).getroot()
    out = {}
    for g in root.find("Domain").findall("Grid"):
        steps = g.findall("Grid")
        if not steps:
            continue
        topo = steps[0].find("Topology").get("TopologyType")
        attrs = [a.get("Name") for a in steps[0].findall("Attribute")]
        out[g.get("Name")] = {"particles": topo == "Polyvertex", "attributes": attrs}
    return out


def block(reader, name):
    """The data of one collection at the reader's current time (the reader may give a multiblock)."""
    d = servermanager.Fetch(reader)
    if not d.IsA("vtkCompositeDataSet"):
        return d
    it = d.NewIterator()
    it.UnRegister(None)
    it.InitTraversal()
    first = None
    while not it.IsDoneWithTraversal():
        b = it.GetCurrentDataObject()
        if b is not None and b.GetNumberOfPoints() > 0:
            label = it.GetCurrentMetaData().Get(d.NAME()) if it.HasCurrentMetaData() else ""
            if label == name:
                return b
            first = first or b
        it.GoToNextItem()
    return first


def visible_colour_map(lut, preset="Plasma (matplotlib)", start=0.38):
    """The preset from `start` up: its darkest part vanishes on the dark background, so the slowest
    bodies did (Inferno's low end is black). From 0.38, Plasma (magenta to yellow) has at least 3:1
    luminance contrast against the background everywhere."""
    lut.ApplyPreset(preset, True)
    pts = np.array(lut.RGBPoints, dtype=np.float64).reshape(-1, 4)
    x = (pts[:, 0] - pts[0, 0]) / (pts[-1, 0] - pts[0, 0])
    s = np.linspace(start, 1.0, 64)
    rgb = np.stack([np.interp(s, x, pts[:, c]) for c in (1, 2, 3)], axis=1)
    lut.ColorSpace = "RGB"
    lut.RGBPoints = np.column_stack([np.linspace(0.0, 1.0, len(s)), rgb]).ravel().tolist()


def make_view(size):
    view = pv.CreateView("RenderView")
    view.ViewSize = size
    view.OrientationAxesVisibility = 0
    try:
        view.UseColorPaletteForBackground = 0
    except AttributeError:
        pass
    view.Background = [0.08, 0.08, 0.1]
    return view


def frames(view, times, out, stem, size):
    # ParaView writes a screenshot by name, following a link: each goes to a private directory
    # first and into the run's frames/ the way tiersim writes (scripts/safe_write.py).
    private = tempfile.mkdtemp(prefix="tiersim-render-")
    try:
        for k, t in enumerate(times):
            view.ViewTime = t
            pv.Render(view)
            name = "%s_%05d.png" % (stem, k)
            pv.SaveScreenshot(os.path.join(private, name), view, ImageResolution=size)
            with open(os.path.join(private, name), "rb") as f:
                write_bytes(os.path.join(out, name), f.read())
    finally:
        shutil.rmtree(private, ignore_errors=True)
    print("frames: %s/%s_00000.png .. %s_%05d.png (%d)" % (out, stem, stem, len(times) - 1, len(times)))


# The exit status of a request that cannot be rendered (no snapshots, no such field): scripts/render
# says why and does not try again, as it does after a crash of pvbatch.
REFUSED = 3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--field", default="")
    ap.add_argument("--size", default="960x720")
    args = ap.parse_args()
    size = [int(x) for x in re.split("[x,]", args.size)]
    cols = collections(args.data)
    if not cols:
        print("render: %s has no snapshots" % args.data, file=sys.stderr)
        return REFUSED
    reader = pv.OpenDataFile(args.data)
    times = list(reader.TimestepValues) if reader.TimestepValues else [0.0]
    reader.UpdatePipeline(times[0])
    for name, c in cols.items():
        view = make_view(size)
        if c["particles"]:
            src = pv.Calculator(Input=reader)
            src.ResultArrayName = "speed"
            src.Function = "mag(velocity)"
            disp = pv.Show(src, view)
            disp.SetRepresentationType("Points")
            disp.PointSize = 2
            pv.ColorBy(disp, ("POINTS", "speed"))
            lut = pv.GetColorTransferFunction("speed")
            visible_colour_map(lut)
            # One range over every snapshot, so frames compare and bodies that speed up later are not
            # all clipped to the top colour: the slowest speed to the 99.5th percentile of all speeds
            # (a few escapers would otherwise squeeze everyone else into the bottom colours).
            speeds = []
            for t in times:
                src.UpdatePipeline(t)
                speeds.append(vtk_to_numpy(block(src, name).GetPointData().GetArray("speed")).astype("float64"))
            speeds = np.concatenate(speeds)
            lo, hi = float(speeds.min()), float(np.percentile(speeds, 99.5))
            lut.RescaleTransferFunction(lo, hi if hi > lo else lo + 1)
            src.UpdatePipeline(times[0])
            b = block(src, name)
            bar = pv.GetScalarBar(lut, view)
            bar.Title = "speed"
            bar.ComponentTitle = ""
            # Frame the bulk of the bodies, not the bounds: a few escapers would shrink the cloud to a dot.
            pv.Render(view)  # the first render resets the camera: set ours after it
            pts = vtk_to_numpy(b.GetPoints().GetData()).astype("float64")
            centre = np.median(pts, axis=0)
            r90 = float(np.percentile(np.linalg.norm(pts - centre, axis=1), 90)) or 1.0
            view.CameraFocalPoint = centre.tolist()
            view.CameraPosition = (centre + np.array([0.0, -3.2 * r90, 1.6 * r90])).tolist()
            view.CameraViewUp = [0, 0, 1]
            view.CameraViewAngle = 30
            frames(view, times, args.out, "particles", size)
        else:
            field = args.field or c["attributes"][0]
            if field not in c["attributes"]:
                print("render: no field '%s' in %s (fields: %s)" % (field, name, ", ".join(c["attributes"])), file=sys.stderr)
                return REFUSED
            b = block(reader, name)
            bounds = b.GetBounds()
            centre = [0.5 * (bounds[2 * k] + bounds[2 * k + 1]) for k in range(3)]
            # A flat grid (one point along an axis, e.g. grid.nz = 1) is drawn as it is, seen along
            # that axis: a slice across it would be a line. A 3D grid: the slice normal to z.
            flat = next((a for a in (2, 1, 0) if bounds[2 * a + 1] - bounds[2 * a] <= 0), None)
            if flat is None:
                src = pv.Slice(Input=reader)
                src.SliceType = "Plane"
                src.SliceType.Origin = centre
                src.SliceType.Normal = [0, 0, 1]
            else:
                src = reader
            disp = pv.Show(src, view)
            pv.ColorBy(disp, ("POINTS", field))
            lut = pv.GetColorTransferFunction(field)
            # One range over every snapshot of the slice, so frames compare and a field that starts
            # at zero (a wave from a point source) is not clipped; a field of both signs gets a
            # diverging map centred on zero.
            # A point source makes a spike far above the wave it sends out: the diverging range is the
            # 99.5th percentile of |value| rather than the extreme.
            values = []
            for t in times:
                src.UpdatePipeline(t)
                values.append(vtk_to_numpy(block(src, name).GetPointData().GetArray(field)).astype("float64").ravel())
            values = np.concatenate(values)
            lo, hi = float(values.min()), float(values.max())
            if lo < 0 < hi:
                m = float(np.percentile(np.abs(values), 99.5)) or max(-lo, hi)
                lo, hi = -m, m
                lut.ApplyPreset("Cool to Warm", True)
            else:
                lut.ApplyPreset("Viridis (matplotlib)", True)
            lut.RescaleTransferFunction(lo, hi if hi > lo else lo + 1)
            bar = pv.GetScalarBar(lut, view)
            bar.Title = field
            bar.ComponentTitle = ""
            outline = pv.Show(pv.Outline(Input=reader), view)
            outline.DiffuseColor = [0.8, 0.8, 0.8]
            pv.Render(view)
            if flat is None:
                view.CameraPosition = [centre[0], centre[1] - 2.2 * (bounds[3] - bounds[2]), centre[2] + 1.6 * (bounds[5] - bounds[4])]
                view.CameraViewUp = [0, 0, 1]
            else:
                eye = list(centre)
                eye[flat] += 1.0
                view.CameraPosition = eye
                view.CameraViewUp = [0, 1, 0] if flat == 2 else [0, 0, 1]
                view.CameraParallelProjection = 1
            view.CameraFocalPoint = centre
            view.ResetCamera()
            frames(view, times, args.out, field, size)
        pv.Delete(view)
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)  # skip ParaView's teardown (GLXBadContext under Xvfb)
