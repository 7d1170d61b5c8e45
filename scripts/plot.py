#!/usr/bin/env python3
"""Plots and tables from gemmlab's JSON results (schema_version 1 or 2; 2 adds each
result's "dtype", and version 1 files are f32 throughout).

  scripts/plot.py plot  RESULTS.json [MORE.json ...] --out ladder.png [--title T]
      TFLOP/s (GFLOP/s for cpu) against size for every rung; the anchor is a dashed line.
      A run of shapes that are mostly not cubes (a shape set such as --shapes llm) plots each
      rung's ratio to the anchor per shape instead.
  scripts/plot.py table RESULTS.json [--sizes 4096,8192]
      A Markdown table: rung, technique, rate and ratio to the anchor per size.

scripts/regenerate.py calls both for every run of record: each results/<machine>/*.json gets
its plot beside it, and every generated table in README.md and docs/ is rewritten.
"""
import argparse
import json
import os
import sys

# 3 adds "run" (date, command line, host), per-result "noisy", "warnings", time_ms.capped and
# time_ms.samples; the fields read here mean what they did.
SCHEMA_VERSIONS = (1, 2, 3)


def ensure_matplotlib(script):
    """Re-runs `script` under a python3 that has matplotlib when this one lacks it (the first
    python3 on PATH may be a virtual environment or pyenv; install-deps.sh installs
    python3-matplotlib for the system one)."""
    try:
        import matplotlib  # noqa: F401
        return
    except ImportError:
        pass
    import shutil
    import subprocess
    for candidate in ("/usr/bin/python3", shutil.which("python3")):
        if candidate and os.path.realpath(candidate) != os.path.realpath(sys.executable) and \
                subprocess.run([candidate, "-c", "import matplotlib"], capture_output=True).returncode == 0:
            os.execv(candidate, [candidate, os.path.abspath(script)] + sys.argv[1:])
    sys.exit(f"{os.path.basename(script)}: no python3 with matplotlib "
             "(scripts/install-deps.sh installs python3-matplotlib)")


def load(paths, cubes_only=True):
    records, docs = [], []
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        for run in doc.get("runs", [doc]):
            if run.get("schema_version") not in SCHEMA_VERSIONS:
                sys.exit(f"{path}: unsupported schema_version {run.get('schema_version')}")
            docs.append(run)
            for r in run["results"]:
                r.setdefault("dtype", "f32")
                if r.get("status") == "ok" and "gflops" in r and (r["m"] == r["n"] == r["k"] or not cubes_only):
                    records.append(r)
    return docs, records


def unit(records):
    cuda = any(r["backend"] == "cuda" for r in records)
    return (1e-3, "TFLOP/s") if cuda else (1.0, "GFLOP/s")


def plot_shapes(ax, records):
    """Each rung's ratio to the anchor of its shape, shapes in the run's order, a bar a rung."""
    shapes = []
    for r in records:
        if (r["m"], r["n"], r["k"]) not in shapes:
            shapes.append((r["m"], r["n"], r["k"]))
    rungs = []
    for r in records:
        if not r.get("anchor") and r.get("ratio_to_anchor") is not None and r["variant"] not in rungs:
            rungs.append(r["variant"])
    anchors = sorted({r["variant"] for r in records if r.get("anchor")})
    by = {(r["variant"], (r["m"], r["n"], r["k"])): r for r in records}
    import matplotlib.pyplot as plt
    colors = plt.get_cmap("tab10").colors
    width = 0.8 / max(1, len(rungs))
    for i, name in enumerate(rungs):
        xs = [j + (i - (len(rungs) - 1) / 2) * width for j, s in enumerate(shapes) if (name, s) in by]
        ys = [by[(name, s)]["ratio_to_anchor"] for s in shapes if (name, s) in by]
        ax.bar(xs, ys, width, color=colors[i % len(colors)], label=name)
    ax.axhline(1.0, color="black", linestyle="--", linewidth=1, label=" / ".join(anchors) or "anchor")
    ax.set_xticks(range(len(shapes)))
    ax.set_xticklabels([f"{m}×{n}×{k}" for m, n, k in shapes], rotation=60, ha="right", fontsize=7)
    ax.set_xlabel("M × N × K")
    ax.set_ylabel("rate ÷ the anchor's, same run")
    ax.legend(fontsize=7, ncol=3)


def plot_bench(paths, out, title=None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    docs, records = load(paths)
    everything = load(paths, cubes_only=False)[1]
    scale, label = unit(records)
    order = []
    for r in records:
        if r["variant"] not in order:
            order.append(r["variant"])
    sizes = sorted({r["m"] for r in records})
    device = docs[0]["device"].get("gpu") or docs[0]["device"].get("cpu", "")
    # "bf16", or "bf16, C in bf16" where C is stored in another type than float32 (out_dtype).
    dtypes = "/".join(sorted({r["dtype"] + (f", C in {r['out_dtype']}" if r.get("out_dtype", "f32") != "f32" else "")
                              for r in records}))
    colors = plt.get_cmap("tab20").colors
    if 2 * len(records) < len(everything):
        fig, ax = plt.subplots(figsize=(12, 5.5))
        plot_shapes(ax, everything)
        records = everything
    elif len(sizes) <= 4:
        # Few sizes: one group of bars per rung, one bar per size, the anchor hatched.
        by = {(r["variant"], r["m"]): r for r in records}
        fig, ax = plt.subplots(figsize=(min(12, max(7, 0.6 * len(order) * len(sizes) ** 0.5 + 2)), 4.8))
        width = 0.8 / len(sizes)
        for i, size in enumerate(sizes):
            xs = [j + (i - (len(sizes) - 1) / 2) * width for j, name in enumerate(order) if (name, size) in by]
            rs = [by[(name, size)] for name in order if (name, size) in by]
            ax.bar(xs, [r["gflops"] * scale for r in rs], width, color=colors[(2 * i) % len(colors)],
                   hatch=None, label=f"{size}³")
            for x, r in zip(xs, rs):
                if r.get("anchor"):
                    ax.bar([x], [r["gflops"] * scale], width, color="none", edgecolor="black", hatch="//")
        ax.set_xticks(range(len(order)))
        ax.set_xticklabels(order, rotation=40, ha="right", fontsize=8)
        ax.set_ylabel(label)
        ax.legend(fontsize=8, title="m = n = k (anchor hatched)", title_fontsize=7)
    else:
        fig, ax = plt.subplots(figsize=(9, 5.5))
        for index, name in enumerate(order):
            points = sorted({r["m"]: r for r in records if r["variant"] == name}.values(), key=lambda r: r["m"])
            anchor = points[0]["anchor"]
            color = "black" if anchor else colors[index % len(colors)]
            # Powers of two make the line; other sizes (1000, 4095 ...) are unconnected rings.
            line = [r for r in points if r["m"] & (r["m"] - 1) == 0]
            odd = [r for r in points if r["m"] & (r["m"] - 1) != 0]
            ax.plot([r["m"] for r in line], [r["gflops"] * scale for r in line], "--" if anchor else "-o",
                    color=color, label=name, linewidth=2 if anchor else 1.2, markersize=3)
            ax.plot([r["m"] for r in odd], [r["gflops"] * scale for r in odd], "o", color=color,
                    markerfacecolor="none", markersize=6)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("m = n = k")
        ax.set_ylabel(label)
        ax.legend(fontsize=8, ncol=2, title="rings: sizes that are not powers of two", title_fontsize=7)
    ax.set_title(title or f"gemmlab bench ({dtypes}), {device}", fontsize=10)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print(out)


def cmd_plot(args):
    plot_bench(args.results, args.out, args.title)


# Dense multiply-add rate per SM and clock (flops), by compute capability and input type: the
# peak a rung is held against is this x SMs x the maximum SM clock the run recorded. 3xTF32
# runs three tf32 passes, so its peak is the tf32 one over three. Runs that record their
# device's peaks (device.peak_fp32_gflops and the like, from gemmlab's table for every
# architecture it knows) use those; this table serves the runs made before.
FLOPS_PER_SM_CLOCK = {
    "9.0": {"f32": 256, "tf32": 2048, "bf16": 4096, "f16": 4096},
}


def peak_gflops(doc, record):
    dev = doc["device"]
    dtype = "tf32" if "3xtf32" in record["variant"] else record["dtype"]
    name = {"f32": "fp32", "e4m3": "fp8", "e5m2": "fp8"}.get(dtype, dtype)  # the device's field for the type
    recorded = dev.get(f"peak_{name}_gflops")
    if recorded:
        peak = float(recorded)
    else:
        per = FLOPS_PER_SM_CLOCK.get(dev.get("compute_capability", ""), {})
        if dtype not in per or not dev.get("sm_count") or not dev.get("sm_clock_max_mhz"):
            return None
        peak = per[dtype] * int(dev["sm_count"]) * int(dev["sm_clock_max_mhz"]) * 1e-3
    return peak / 3 if "3xtf32" in record["variant"] else peak


def markdown_table(path, sizes, link_to=None):
    docs, records = load([path])
    d = docs[0]
    scale, label = unit(records)
    sizes = sizes or sorted({r["m"] for r in records})
    by = {(r["variant"], r["m"]): r for r in records}
    order = []
    for r in records:
        if r["variant"] not in order:
            order.append(r["variant"])
    with_peak = any(peak_gflops(d, r) for r in records)
    per_size = ["TFLOP/s" if scale < 1 else "GFLOP/s", "× anchor"] + (["% peak"] if with_peak else [])
    head = "| rung | technique | CGMA | " + " | ".join(f"{s}³ {c}" for s in sizes for c in per_size) + " |"
    rule = "|---|---|---:|" + "---:|" * (len(per_size) * len(sizes))
    rows = [head, rule]
    for name in order:
        cells = []
        for s in sizes:
            r = by.get((name, s))
            if r is None:
                cells += [""] * len(per_size)
                continue
            ratio = r.get("ratio_to_anchor")
            cells += [f"{r['gflops'] * scale:.2f}", f"{ratio:.3f}" if ratio is not None else ""]
            if with_peak:
                peak = peak_gflops(d, r)
                cells.append(f"{100 * r['gflops'] / peak:.1f}" if peak else "")
        mine = [by[(name, s)] for s in sizes if (name, s) in by]
        cgmas = sorted({round(r["model"]["cgma"]) for r in mine if r.get("model", {}).get("cgma")})
        cgma = "–" if not cgmas else (f"{cgmas[0]}" if len(cgmas) == 1 else f"{cgmas[0]}–{cgmas[-1]}")
        if any(r.get("anchor") for r in mine):
            cgma = "–"  # the anchor's tiles are not ours to model
        tech = next(r["technique"] for r in records if r["variant"] == name)
        rows.append(f"| `{name}` | {tech} | {cgma} | " + " | ".join(cells) + " |")
    device = d["device"].get("gpu") or d["device"].get("cpu", "")
    clock = d["device"].get("sm_clock_now_mhz") or d["device"].get("cpu_mhz_now", "")
    shown = [r for r in records if r["m"] in sizes]
    passed = sum(1 for r in shown if r.get("verification", {}).get("passed"))
    verdict = "every result verified" if passed == len(shown) else f"{passed} of {len(shown)} results verified"
    link = link_to or path
    rows.append("")
    rows.append(f"{device}, clock {clock} MHz when the run started, {d['build']['build_type']} build, "
                f"{d['settings'].get('trans', 'NN')} {d['settings'].get('layout', 'row')}-major"
                + (f", L2 flush `{d['settings'].get('l2_flush', 'write')}`" if d["device"].get("gpu") else "")
                + f"; medians, {verdict}, anchor measured "
                f"in the same run ([{os.path.basename(path)}]({link})).")
    return "\n".join(rows)


def parse_sizes(text):
    return [int(s) for s in text.split(",")] if text else None


def cmd_table(args):
    print(markdown_table(args.results, parse_sizes(args.sizes)))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    a = sub.add_parser("plot")
    a.add_argument("results", nargs="+")
    a.add_argument("--out", required=True)
    a.add_argument("--title")
    a.set_defaults(func=cmd_plot)
    t = sub.add_parser("table")
    t.add_argument("results")
    t.add_argument("--sizes")
    t.set_defaults(func=cmd_table)
    args = p.parse_args()
    if args.command == "plot":
        ensure_matplotlib(__file__)
    args.func(args)


if __name__ == "__main__":
    main()
