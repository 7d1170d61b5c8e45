#!/usr/bin/env python3
"""Regenerates every plot and every generated table from the runs of record.

  scripts/regenerate.py [--plots-only | --tables-only] [RESULTS_DIR ...]

For each results/<machine>/*.json (all of results/ when no folder is named):
  bench JSON    -> NAME.png beside it (scripts/plot.py: rate per rung and size)
  out-of-core   -> NAME.png beside it (scripts/out_of_core.py: a "bench --out-of-core" run's
                   rungs on host operands against in core, cublasXt and the model's bound)
  distributed   -> NAME.png beside it (scripts/distributed.py: a "bench --distributed" run's
                   strong and weak scaling over the GPUs, and host operands against cublasXt)
  mem.json      -> mem-EXPERIMENT.png, one per experiment (scripts/memlab.py plots)
  device.json   -> device.png (the measured ceilings)
  explain.json  -> explain.png (each rung against its roofline and the seeds' bound)
Then README.md and docs/*.md: the text between
  <!-- table:h100/ladder [sizes=4096,8192] -->   and   <!-- /table:h100/ladder -->
is replaced with the table of results/h100/ladder.json (scripts/out_of_core.py's table when
that run is a `bench --out-of-core` one, scripts/distributed.py's for `bench --distributed`), and between
  <!-- table:h100/mem:NAME -->   and   <!-- /table:h100/mem:NAME -->
with the memory lab's table NAME (scripts/memlab.py TABLES) from results/h100/. Numbers in
those tables are never typed by hand. Needs matplotlib for the plots (it re-runs itself
under the system python3 when the first python3 on PATH lacks it).
"""
import argparse
import glob
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import distributed  # noqa: E402
import memlab  # noqa: E402
import out_of_core  # noqa: E402
import plot  # noqa: E402

MARKER = re.compile(r"<!-- table:(?P<key>[\w./-]+(?::\w+)?)(?P<opts>[^>]*?) -->\n.*?<!-- /table:(?P=key) -->", re.S)


def ensure_matplotlib():
    plot.ensure_matplotlib(__file__)


def plot_device(path, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    d = json.load(open(path))
    dev, c = d["device"], d["ceilings"]
    rows = [r for r in c["rows"] if r.get("unit") == "GB/s"]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.5), gridspec_kw={"width_ratios": [4, 1]})
    ax.barh(range(len(rows)), [r["value"] for r in rows], color="tab:blue")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r["name"] for r in rows], fontsize=7)
    ax.axvline(dev["theoretical_bandwidth_gbs"], color="black", linestyle="--", linewidth=1,
               label=f'theoretical {dev["theoretical_bandwidth_gbs"]:.0f} GB/s')
    ax.set_xlabel("GB/s")
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    bx.bar([0, 1], [c["fma_gflops"] / 1e3, c["sgemm_gflops"] / 1e3], color=["tab:orange", "tab:green"])
    bx.set_xticks([0, 1])
    bx.set_xticklabels(["FP32 FMA", "cuBLAS\nSGEMM"], fontsize=8)
    bx.set_ylabel("TFLOP/s")
    bx.grid(axis="y", alpha=0.3)
    fig.suptitle(f'gemmlab device: measured ceilings, {dev["name"]}', fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print(out)


def plot_explain(path, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    e = json.load(open(path))
    rs = e["results"]
    names = [r["variant"] for r in rs]
    measured = [r.get("gflops", 0) / 1e3 for r in rs]
    # The FMA line from the SIMT rungs' bound only: tensor-core rungs are bound by their type's
    # peak (roofline.compute_ceiling says which; runs before it had SIMT rooflines only).
    fma_bound = [r["explain"].get("roofline") for r in rs]
    roof = [b.get("compute_gflops", 0) / 1e3 if b and b.get("compute_ceiling", "FP32").startswith("FP32") else 0
            for b in fma_bound]
    # The seeds' bound: every load served by DRAM (bandwidth x CGMA / 4), capped by the FMA peak.
    seed = [min(r["explain"]["roofline"].get("seed_bound_gflops", 0), r["explain"]["roofline"].get("compute_gflops", 0)) / 1e3
            if r["explain"].get("roofline") and r["explain"].get("model", {}).get("cgma") else 0 for r in rs]
    fig, ax = plt.subplots(figsize=(9, 4.8))
    xs = range(len(rs))
    ax.bar([x - 0.2 for x in xs], measured, 0.4, color="tab:blue", label="measured")
    ax.bar([x + 0.2 for x in xs], seed, 0.4, color="tab:gray", alpha=0.6, label="seeds' bound (all loads from DRAM)")
    if any(roof):
        ax.axhline(max(roof), color="black", linestyle="--", linewidth=1, label=f"FP32 FMA peak {max(roof):.1f}")
    ax.set_xticks(list(xs))
    ax.set_xticklabels(names, rotation=40, ha="right", fontsize=8)
    ax.set_ylabel("TFLOP/s")
    m = rs[0]
    ax.set_title(f'gemmlab explain, {m["m"]}x{m["n"]}x{m["k"]} {m["trans"]}, {e["device"].get("gpu") or e["device"].get("name", "")}', fontsize=10)
    ax.legend(fontsize=7)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print(out)


def plots(directory):
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        doc = json.load(open(path))
        command = doc.get("command")
        base = os.path.splitext(path)[0]
        if command == "bench":
            plot.plot_bench([path], base + ".png")
        elif command == out_of_core.COMMAND:
            out_of_core.plot(path, base + ".png")
        elif command == distributed.COMMAND:
            distributed.plot([path], base + ".png")
        elif command == "mem":
            memlab.cmd_plots(argparse.Namespace(dir=directory, out=directory))
        elif command == "device":
            plot_device(path, base + ".png")
        elif command == "explain":
            plot_explain(path, base + ".png")
        else:
            print(f"{path}: no plot for command {command!r}", file=sys.stderr)


def table_for(key, opts, doc_path):
    """The Markdown of one marker; key is MACHINE/JOB or MACHINE/mem:NAME."""
    relative = lambda target: os.path.relpath(os.path.join(ROOT, target), os.path.dirname(os.path.abspath(doc_path)))
    if ":" in key:
        machine, name = key.split("/mem:")
        directory = os.path.join(ROOT, "results", machine)
        if name not in memlab.TABLES:
            sys.exit(f"{doc_path}: unknown memory-lab table {name!r} (one of {', '.join(memlab.TABLES)})")
        d, mem, explain = (memlab.load(directory, n) for n in ("device.json", "mem.json", "explain.json"))
        source = "explain.json" if name == "explain" else "device.json" if name == "device" else "mem.json"
        link = relative(f"results/{machine}/{source}")
        return memlab.TABLES[name](d, mem, explain) + f"\n\nFrom [{source}]({link})."
    path = os.path.join(ROOT, "results", key + ".json")
    if not os.path.exists(path):
        sys.exit(f"{doc_path}: table {key!r} names {path}, which does not exist")
    link = relative(f"results/{key}.json")
    with open(path) as f:
        command = json.load(f).get("command")
    if command == out_of_core.COMMAND:
        return out_of_core.markdown_table(path, link_to=link)
    if command == distributed.COMMAND:
        return distributed.markdown_table([path], link_to=link)
    sizes = re.search(r"sizes=([\d,]+)", opts)
    return plot.markdown_table(path, plot.parse_sizes(sizes.group(1)) if sizes else None,
                               link_to=link).replace(os.path.join(ROOT, ""), "")


def tables(doc_paths):
    for doc_path in doc_paths:
        text = open(doc_path).read()
        count = 0

        def fill(m):
            nonlocal count
            count += 1
            key, opts = m.group("key"), m.group("opts")
            return f"<!-- table:{key}{opts} -->\n{table_for(key, opts, doc_path)}\n<!-- /table:{key} -->"

        new = MARKER.sub(fill, text)
        if count:
            if new != text:
                open(doc_path, "w").write(new)
            print(f"{os.path.relpath(doc_path, ROOT)}: {count} table(s)")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dirs", nargs="*", help="results folders (default: every folder under results/)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--plots-only", action="store_true")
    g.add_argument("--tables-only", action="store_true")
    args = p.parse_args()
    dirs = args.dirs or sorted(d for d in glob.glob(os.path.join(ROOT, "results", "*")) if os.path.isdir(d))
    if not args.tables_only:
        ensure_matplotlib()
        for d in dirs:
            plots(d)
    if not args.plots_only:
        tables([os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))))


if __name__ == "__main__":
    main()
