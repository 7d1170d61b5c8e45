#!/usr/bin/env python3
"""Plot and table of a `gemmlab bench --out-of-core` run: GEMMs whose operands live in host
memory, streamed through the GPU in tiles of C (records ooc_<rung>), beside the same rung on
device copies of the operands (in core) and cuBLAS's own out-of-core layer, cublasXt.

  scripts/out_of_core.py plot  RESULTS.json --out ooc.png
      TFLOP/s against size: each ooc rung (solid) and its in-core rung (dashed, same colour),
      the model's bound for each ooc rung (faint band), cublasXt at its default blockDim (grey
      dotted) and at the best blockDim of each size (black). Square shapes sit at n; others at
      the cube root of m*n*k, labelled MxNxK.
  scripts/out_of_core.py table RESULTS.json
      A Markdown table, one row per shape and ooc rung: rate, ratios to the in-core rung, to
      the best cublasXt and to the model's bound, overlap, tiles, device memory, verification.

scripts/regenerate.py calls both for every results JSON whose command is "bench --out-of-core".
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import results_common  # noqa: E402
from results_common import (annotate_block_dim, figure, load_run, shape, size_axis, size_label,  # noqa: E402
                            size_x, timed, verified_cell)

COMMAND = "bench --out-of-core"


def load(path):
    """The run and its timed, successful results."""
    doc = load_run(path, COMMAND)
    return doc, [r for r in doc["results"] if timed(r)]


def mode(r):
    return r.get("out_of_core", {}).get("mode")


def rung_of(r):
    """The in-core rung an out-of-core record ran its tiles with (or an in-core record's own)."""
    if mode(r) == "out_of_core":
        return r["out_of_core"].get("plan", {}).get("in_core_variant") or r["variant"].removeprefix("ooc_")
    return r["variant"]


def tflops(r):
    return r["gflops"] * 1e-3


def bound_tflops(r):
    """The model's bound as a rate: the work over the longest of compute, copies up, copies down."""
    bound_ms = r["out_of_core"].get("model", {}).get("bound_ms")
    if not bound_ms:
        return None
    flops = r.get("model", {}).get("flops") or 2.0 * r["m"] * r["n"] * r["k"]
    return flops / (bound_ms * 1e-3) * 1e-12


def gb(nbytes):
    return figure(nbytes * 1e-9)


def device_memory(f):
    """The plan's device bytes in GB, with the limit it was held to."""
    if "plan" not in f:
        return "–"
    limit = f.get("device_memory_limit")
    return gb(f["plan"]["device_bytes"]) + (f" ({gb(limit)})" if limit else "")


def block_dim(r):
    return r["out_of_core"].get("block_dim", r.get("configuration", ""))


class Run:
    """A run's records sorted out: the ooc rungs in run order, the in-core records by (rung,
    shape), cublasXt at its default blockDim and at its fastest, per shape."""

    def __init__(self, path):
        self.doc, self.timed = load(path)
        self.ooc = [r for r in self.doc["results"] if mode(r) == "out_of_core"]
        self.rungs = []
        for r in [r for r in self.timed if mode(r) in ("out_of_core", "in_core")]:
            if rung_of(r) not in self.rungs:
                self.rungs.append(rung_of(r))
        self.in_core = {(r["variant"], shape(r)): r for r in self.timed if mode(r) == "in_core"}
        xt = [r for r in self.timed if mode(r) == "cublasxt"]
        self.xt_default = {shape(r): r for r in xt if r["out_of_core"].get("default_block_dim")}
        self.xt_best = {}
        for r in xt:
            if shape(r) not in self.xt_best or r["gflops"] > self.xt_best[shape(r)]["gflops"]:
                self.xt_best[shape(r)] = r

    def memory_limit(self):
        """The device memory limit as the command line gave it: a share of A, B and C, or bytes."""
        given = re.search(r"--device-memory-limit[ =](\S+)", self.doc.get("run", {}).get("command_line", ""))
        limits = sorted({r["out_of_core"].get("device_memory_limit", 0) for r in self.ooc})
        in_bytes = ", ".join(f"{gb(b)} GB" for b in limits if b)
        if given and given.group(1).endswith("%"):
            return f"{given.group(1)} of A, B and C" + (f" ({in_bytes})" if len(limits) == 1 and in_bytes else "")
        return in_bytes or "none (all the device's free memory)"

    def context(self):
        """One line on the machine and the settings the numbers hold for."""
        dev, link, s = self.doc["device"], self.doc.get("host_link", {}), self.doc["settings"]
        text = f"{dev.get('gpu', '')}, {s.get('dtype', '')} {s.get('trans', 'NN')}, device memory limit {self.memory_limit()}"
        if link:
            text += (f"; host link {link['h2d_bytes_per_second'] * 1e-9:.1f} GB/s up, "
                     f"{link['d2h_bytes_per_second'] * 1e-9:.1f} down alone, "
                     f"{link['both_h2d_bytes_per_second'] * 1e-9:.1f} and "
                     f"{link['both_d2h_bytes_per_second'] * 1e-9:.1f} at once")
        return text


def plot_series(ax, records, y, style, **kwargs):
    """One line through records in order of size; returns the points it drew."""
    points = sorted(((size_x(shape(r)), y(r), r) for r in records if y(r) is not None), key=lambda p: p[0])
    if points:
        ax.plot([p[0] for p in points], [p[1] for p in points], style, **kwargs)
    return points


def plot(path, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    run = Run(path)
    colors = plt.get_cmap("tab10").colors
    fig, ax = plt.subplots(figsize=(9.5, 5.8))
    drawn = []
    for i, rung in enumerate(run.rungs):
        color = colors[i % len(colors)]
        ooc = [r for r in run.timed if mode(r) == "out_of_core" and rung_of(r) == rung]
        name = ooc[0]["variant"] if ooc else f"ooc_{rung}"
        drawn += plot_series(ax, ooc, tflops, "-o", color=color, linewidth=1.8, markersize=5, label=name)
        plot_series(ax, ooc, bound_tflops, "-", color=color, alpha=0.25, linewidth=6,
                    solid_capstyle="round", label=f"{name}: model's bound")
        plot_series(ax, ooc, bound_tflops, "_", color=color, alpha=0.6, markersize=14)
        drawn += plot_series(ax, [r for r in run.timed if mode(r) == "in_core" and r["variant"] == rung], tflops,
                             "--s", color=color, linewidth=1.2, markersize=4, label=f"{rung} (in core)")
    defaults = list(run.xt_default.values())
    dims = sorted({block_dim(r) for r in defaults})
    drawn += plot_series(ax, defaults, tflops, ":o", color="grey", linewidth=1.5, markersize=4,
                         label="cublasXt, default blockDim" + (f" ({dims[0]})" if len(dims) == 1 else ""))
    best = plot_series(ax, list(run.xt_best.values()), tflops, "-D", color="black", linewidth=1.5, markersize=4,
                       label="cublasXt, best blockDim")
    for x, y, r in best:
        annotate_block_dim(ax, x, y, block_dim(r))
    drawn += best
    failed = [(x, y) for x, y, r in drawn if not r.get("verification", {}).get("passed", True)]
    if failed:
        ax.plot([p[0] for p in failed], [p[1] for p in failed], "x", color="red", markersize=10,
                markeredgewidth=2, label="verification failed")
    shapes = sorted({shape(r) for r in run.timed}, key=size_x)
    size_axis(ax, shapes, fontsize=8)
    ax.set_xlabel("m = n = k; other shapes at (m·n·k)^⅓, labelled m×n×k")
    ax.set_ylabel("TFLOP/s")
    ax.set_ylim(bottom=0)
    dev, dtype = run.doc["device"], run.doc["settings"].get("dtype", "")
    ax.set_title(f"gemmlab bench --out-of-core ({dtype}), {dev.get('gpu', '')}: operands in host memory\n"
                 f"device memory limit {run.memory_limit()}; faint bands: the model's bound", fontsize=10)
    ax.legend(fontsize=7, ncol=2, loc="best")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print(out)


def residency(plan):
    """Which operand stays on the device while the tiles that reuse it run."""
    if plan.get("a_resident"):
        return "A resident"
    # With K in one block one operand stays (older records carry no b_resident).
    if plan.get("b_resident", plan.get("blocks_k") == 1):
        return "B resident"
    return "A and B streamed"


def markdown_table(path, link_to=None):
    run = Run(path)
    rows = ["| size | rung | TFLOP/s | × in core | × best cublasXt | bound TFLOP/s | × bound | overlap "
            "| tiles of C, block of K | device GB (limit) | verified |",
            "|---|---|---:|---:|---:|---:|---:|---:|---|---:|---|"]
    order = {rung: i for i, rung in enumerate(run.rungs)}
    for r in sorted(run.ooc, key=lambda r: (size_x(shape(r)), shape(r), order.get(rung_of(r), len(order)))):
        head = f"| {size_label(shape(r))} | `{r['variant']}` |"
        if not timed(r):
            rows.append(f"{head} {r.get('status', '')} |" + " – |" * 8)
            continue
        f = r["out_of_core"]
        plan = f.get("plan", {})
        core = run.in_core.get((rung_of(r), shape(r)))
        xt = run.xt_best.get(shape(r))
        bound = bound_tflops(r)
        cells = [f"{tflops(r):.1f}",
                 figure(r["gflops"] / core["gflops"]) if core else "–",
                 f"{figure(r['gflops'] / xt['gflops'])} (b{block_dim(xt)})" if xt else "–",
                 f"{bound:.1f}" if bound else "–",
                 figure(tflops(r) / bound) if bound else "–",
                 f"{100 * f['overlap']:.0f}%" if f.get("overlap") is not None else "–",
                 f"{plan['tile_m']}×{plan['tile_n']}×{plan['tile_k']}, " + residency(plan) if plan else "–",
                 device_memory(f),
                 verified_cell(r)]
        rows.append(f"{head} " + " | ".join(cells) + " |")
    rows.append("")
    rows.append(f"{run.context()}; medians. × bound: the measured rate over the model's bound (the work "
                f"over the longest of compute, copies up and copies down); overlap: the share of the "
                f"overlappable time the schedule hid. From [{os.path.basename(path)}]({link_to or path}).")
    return "\n".join(rows)


def main():
    results_common.main(__file__, __doc__, plot, markdown_table, several=False)


if __name__ == "__main__":
    main()
