#!/usr/bin/env python3
"""Plot and table of `gemmlab bench --gpus N` runs (JSON "command": "bench --distributed"): one
GEMM spread over the GPUs of one host, against the same rung on one GPU (t1) and, on host
operands, against cublasXt over the same GPUs.

  scripts/distributed.py plot  RESULTS.json [MORE.json ...] --out distributed.png
      Three panels against size: strong-scaling efficiency t1 / (P tP) of each dtype and
      decomposition (operands on the devices); weak-scaling efficiency t1(m) / tP(P m); and
      TFLOP/s of gemmlab on host operands beside cublasXt at its default and at its best
      blockDim (f32). Several files (one per --dtype) share the panels. Square shapes sit at n,
      others at the cube root of m*n*k, labelled MxNxK.
  scripts/distributed.py table RESULTS.json [MORE.json ...]
      A Markdown table, one row per distributed run: grid, rate, t1, speedup and efficiency,
      bytes received and time waited per GPU, the model's time against the measured one, the
      ratio to cublasXt's best, verification.

scripts/regenerate.py calls both for every results JSON whose command is "bench --distributed".
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import results_common  # noqa: E402
from results_common import (annotate_block_dim, figure, load_run, shape, size_axis, size_label,  # noqa: E402
                            size_x, timed, verified_cell)

COMMAND = "bench --distributed"


def load(path):
    """The run and its records, each with its "distributed" figures."""
    return load_run(path, COMMAND)


def fig(r):
    return r.get("distributed", {})


def mode(r):
    return fig(r).get("mode")


def base_shape(r):
    """The single-GPU problem a record scales from: its own, or for weak scaling t1's."""
    t1 = fig(r).get("t1")
    if fig(r).get("scaling") == "weak" and t1:
        return t1["m"], t1["n"], t1["k"]
    return shape(r)


def passed(r):
    v = r.get("verification")
    return not v or v.get("passed", False)


def decomposition(r):
    """rows, summa, or "rows = summa" where both chose the same grid (run once)."""
    f = fig(r)
    names = [f.get("decomposition", "")] + list(f.get("same_grid_as", []))
    return " = ".join(n for n in names if n)


def cut(r):
    """How the work was cut, where the record says: ", stripe of 2304", ", slices", ", k-panels"."""
    f = fig(r)
    if "cut" not in f:
        return ""
    return f", stripe of {f['lead']}" if f["cut"] == "stripe" else f", {f['cut']}"


def runs(paths):
    """Every record of every file, with the file's dtype and GPU count beside it."""
    out = []
    for path in paths:
        doc = load(path)
        for r in doc["results"]:
            out.append((doc, r))
    return out


def plot(paths, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = runs(paths)
    docs = [load(p) for p in paths]
    has_host = any(mode(r) in ("host", "cublasxt") and timed(r) for _, r in records)
    panels = 3 if has_host else 2
    fig_, axes = plt.subplots(1, panels, figsize=(5.2 * panels, 4.6))
    colors = plt.get_cmap("tab10").colors
    series = {}  # (dtype, decomposition) -> colour
    drawn_shapes = set()

    def colour(key):
        if key not in series:
            series[key] = colors[len(series) % len(colors)]
        return series[key]

    for ax, scaling, title in ((axes[0], "strong", "strong scaling: t1 / (P·tP)"),
                               (axes[1], "weak", "weak scaling: t1(m) / tP(P·m)")):
        groups = {}
        for doc, r in records:
            f = fig(r)
            if mode(r) != "device" or f.get("scaling") != scaling or not timed(r) or "efficiency" not in f:
                continue
            groups.setdefault((r["dtype"], decomposition(r), f.get("gpus")), []).append(r)
        for (dtype, decomp, gpus), rs in sorted(groups.items()):
            rs = sorted(rs, key=lambda r: size_x(base_shape(r)))
            xs = [size_x(base_shape(r)) for r in rs]
            ys = [fig(r)["efficiency"] for r in rs]
            drawn_shapes.update(base_shape(r) for r in rs)
            ax.plot(xs, ys, "-o", color=colour((dtype, decomp)), markersize=4, linewidth=1.5,
                    label=f"{dtype}, {decomp}, P={gpus}")
            bad = [(x, y) for x, y, r in zip(xs, ys, rs) if not passed(r)]
            if bad:
                ax.plot([p[0] for p in bad], [p[1] for p in bad], "x", color="red", markersize=10,
                        markeredgewidth=2, label="verification failed")
        ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
        ax.set_title(title, fontsize=10)
        ax.set_ylabel("efficiency")
        ax.set_ylim(0, 1.15)
        ax.grid(True, alpha=0.3)
        if groups:
            ax.legend(fontsize=7, loc="lower right")
        else:
            ax.text(0.5, 0.5, "no runs", ha="center", va="center", transform=ax.transAxes, color="grey")

    if has_host:
        ax = axes[2]
        by_shape = {}
        for doc, r in records:
            if timed(r) and mode(r) in ("host", "cublasxt"):
                by_shape.setdefault((r["dtype"], shape(r)), []).append(r)
        host_points, best_points, default_points = [], [], []
        for (dtype, s), rs in sorted(by_shape.items(), key=lambda kv: size_x(kv[0][1])):
            x = size_x(s)
            drawn_shapes.add(s)
            for r in rs:
                if mode(r) == "host":
                    host_points.append((x, r["gflops"] * 1e-3, dtype))
            xt = [r for r in rs if mode(r) == "cublasxt"]
            if xt:
                best = max(xt, key=lambda r: r["gflops"])
                best_points.append((x, best["gflops"] * 1e-3, fig(best).get("block_dim")))
                for r in xt:
                    if fig(r).get("default_block_dim"):
                        default_points.append((x, r["gflops"] * 1e-3))
        for dtype in sorted({p[2] for p in host_points}):
            pts = [p for p in host_points if p[2] == dtype]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "-o", color=colour((dtype, "host")), markersize=4,
                    label=f"gemmlab, host operands ({dtype})")
        if best_points:
            ax.plot([p[0] for p in best_points], [p[1] for p in best_points], "-D", color="black", markersize=4,
                    label="cublasXt, best blockDim (f32)")
            for x, y, b in best_points:
                annotate_block_dim(ax, x, y, b)
        if default_points:
            ax.plot([p[0] for p in default_points], [p[1] for p in default_points], ":o", color="grey",
                    markersize=4, label="cublasXt, default blockDim")
        ax.set_title("host operands: gemmlab against cublasXt", fontsize=10)
        ax.set_ylabel("TFLOP/s")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="best")

    shapes = sorted(drawn_shapes, key=size_x)
    for ax in axes:
        size_axis(ax, shapes, fontsize=7)
        ax.set_xlabel("size of the single-GPU problem")
    gpu = docs[0]["device"].get("gpu", "") if docs else ""
    gpus = sorted({d["settings"].get("gpus") for d in docs if d["settings"].get("gpus")})
    link = docs[0].get("peer_link") if docs else None
    link_text = (f"; NCCL broadcast {link['broadcast_algorithm_bytes_per_second'] * 1e-9:.0f} GB/s received per GPU"
                 if link else "")
    fig_.suptitle(f"gemmlab bench --gpus {', '.join(map(str, gpus))}: {gpu}{link_text}", fontsize=10)
    fig_.tight_layout()
    fig_.savefig(out, dpi=110)
    plt.close(fig_)
    print(out)


def markdown_table(paths, link_to=None):
    records = runs(paths)
    rows = ["| size | dtype | run | grid | TFLOP/s | t1 TFLOP/s | speedup | efficiency | GB received per GPU "
            "| waited ms (max) | model ms | × model | × best cublasXt | verified |",
            "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    order = {"device": 0, "host": 1}
    chosen = [(doc, r) for doc, r in records if mode(r) in order]
    chosen.sort(key=lambda dr: (size_x(base_shape(dr[1])), dr[1]["dtype"], order[mode(dr[1])],
                                fig(dr[1]).get("scaling", ""), decomposition(dr[1])))
    for doc, r in chosen:
        f = fig(r)
        name = (f"{decomposition(r)}{', weak' if f.get('scaling') == 'weak' else ''}{cut(r)}" if mode(r) == "device"
                else "host operands")
        head = f"| {size_label(shape(r))} | {r['dtype']} | {name} | {f.get('grid', '–')} |"
        if not timed(r):
            rows.append(f"{head} {r.get('status', '')}: {r.get('message', '')} |" + " – |" * 9)
            continue
        t1 = f.get("t1")
        model = f.get("model", {})
        received = f.get("bytes_received", {})
        wait = f.get("wait_seconds", {})
        # Weak scaling's t1 / tP is its efficiency: P times the work, not a speedup.
        speedup = t1["time_ms"] / r["time_ms"]["median"] if t1 and f.get("scaling") != "weak" else None
        cells = [f"{r['gflops'] * 1e-3:.1f}",
                 f"{t1['tflops']:.1f}" if t1 else "–",
                 figure(speedup) if speedup else "–",
                 figure(f["efficiency"]) if "efficiency" in f else "–",
                 figure(received["max"] * 1e-9) if received else "–",
                 f"{wait['max'] * 1e3:.2f}" if wait else "–",
                 f"{model['model_seconds'] * 1e3:.1f}" if model.get("model_seconds") else "–",
                 figure(model["measured_over_model"]) if model.get("measured_over_model") else "–",
                 f"{figure(f['ratio_to_best_cublasxt'])} (b{f.get('best_cublasxt_block_dim')})"
                 if "ratio_to_best_cublasxt" in f else "–",
                 verified_cell(r)]
        rows.append(f"{head} " + " | ".join(cells) + " |")
    rows.append("")
    docs = [load(p) for p in paths]
    gpu = docs[0]["device"].get("gpu", "") if docs else ""
    link = docs[0].get("peer_link") if docs else None
    sources = ", ".join(f"[{os.path.basename(p)}]({link_to or p})" for p in paths)
    text = (f"{gpu}, medians. Efficiency: t1 / (P·tP) with the operands on the devices (weak: the problem has "
            f"P× the rows, t1 / tP); × model: the measured time over the model's (compute per GPU at the rung's "
            f"measured rate against the panel bytes over the measured link)")
    if link:
        text += (f"; link: NCCL broadcast {link['broadcast_bus_bytes_per_second'] * 1e-9:.0f} GB/s bus, "
                 f"{link['broadcast_algorithm_bytes_per_second'] * 1e-9:.0f} GB/s received per GPU, peer copies "
                 f"{link['copy_bytes_per_second'] * 1e-9:.0f} GB/s")
    rows.append(f"{text}. From {sources}.")
    return "\n".join(rows)


def main():
    results_common.main(__file__, __doc__, plot, markdown_table, several=True)


if __name__ == "__main__":
    main()
