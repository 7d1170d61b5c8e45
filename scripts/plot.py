#!/usr/bin/env python3
"""Plots and tables from gemmlab's JSON results (schema_version 1 or 2; 2 adds each
result's "dtype", and version 1 files are f32 throughout).

  scripts/plot.py plot  RESULTS.json [MORE.json ...] --out ladder.png [--title T]
      TFLOP/s (GFLOP/s for cpu) against size for every rung; the anchor is a dashed line.
  scripts/plot.py table RESULTS.json [--sizes 4096,8192]
      A Markdown table: rung, technique, rate and ratio to the anchor per size.
  scripts/plot.py readme README.md NAME RESULTS.json [--sizes ...]
      Replaces the text between <!-- NAME:begin --> and <!-- NAME:end --> in README.md
      with that table, so README figures always come from committed results.
  scripts/plot.py merge OUT.json RESULTS.json [MORE.json ...]
      One file holding several runs ({"runs": [...]}, each run as gemmlab wrote it);
      every command above reads it like the files it came from.
"""
import argparse
import json
import re
import sys

SCHEMA_VERSIONS = (1, 2)


def load(paths):
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
                if r.get("status") == "ok" and "gflops" in r and r["m"] == r["n"] == r["k"]:
                    records.append(r)
    return docs, records


def unit(records):
    cuda = any(r["backend"] == "cuda" for r in records)
    return (1e-3, "TFLOP/s") if cuda else (1.0, "GFLOP/s")


def cmd_plot(args):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    docs, records = load(args.results)
    scale, label = unit(records)
    order = []
    for r in records:
        if r["variant"] not in order:
            order.append(r["variant"])
    fig, ax = plt.subplots(figsize=(9, 5.5))
    colors = plt.get_cmap("tab20").colors
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
    device = docs[0]["device"].get("gpu") or docs[0]["device"].get("cpu", "")
    dtypes = "/".join(sorted({r["dtype"] for r in records}))
    ax.set_title(args.title or f"gemmlab ladder ({dtypes}), {device}, commit {docs[0]['build']['commit']}")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, ncol=2, title="rings: sizes that are not powers of two", title_fontsize=7)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


def markdown_table(path, sizes):
    docs, records = load([path])
    scale, label = unit(records)
    sizes = sizes or sorted({r["m"] for r in records})
    by = {(r["variant"], r["m"]): r for r in records}
    order = []
    for r in records:
        if r["variant"] not in order:
            order.append(r["variant"])
    head = "| rung | technique | " + " | ".join(f"{s}³ {label} | × anchor" for s in sizes) + " |"
    rule = "|---|---|" + "---:|---:|" * len(sizes)
    rows = [head, rule]
    for name in order:
        cells = []
        for s in sizes:
            r = by.get((name, s))
            if r is None:
                cells += ["", ""]
                continue
            ratio = r.get("ratio_to_anchor")
            cells += [f"{r['gflops'] * scale:.2f}", f"{ratio:.3f}" if ratio is not None else ""]
        tech = next(r["technique"] for r in records if r["variant"] == name)
        rows.append(f"| `{name}` | {tech} | " + " | ".join(cells) + " |")
    d = docs[0]
    device = d["device"].get("gpu") or d["device"].get("cpu", "")
    clock = d["device"].get("sm_clock_now_mhz") or d["device"].get("cpu_mhz_now", "")
    rows.append("")
    rows.append(f"{device}, clock {clock} MHz when the run started, commit `{d['build']['commit']}`, "
                f"{d['build']['build_type']}; medians, anchor measured in the same run (`{path}`).")
    return "\n".join(rows)


def parse_sizes(text):
    return [int(s) for s in text.split(",")] if text else None


def cmd_table(args):
    print(markdown_table(args.results, parse_sizes(args.sizes)))


def cmd_readme(args):
    text = open(args.readme).read()
    begin, end = f"<!-- {args.name}:begin -->", f"<!-- {args.name}:end -->"
    if begin not in text or end not in text:
        sys.exit(f"{args.readme}: markers {begin} / {end} not found")
    table = markdown_table(args.results, parse_sizes(args.sizes))
    text = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: f"{begin}\n{table}\n{end}", text, flags=re.S)
    open(args.readme, "w").write(text)
    print(f"updated {args.name} in {args.readme}")


def cmd_merge(args):
    runs = []
    for path in args.results:
        with open(path) as f:
            doc = json.load(f)
        runs.extend(doc.get("runs", [doc]))
    with open(args.out, "w") as f:
        json.dump({"runs": runs, "merged_from": args.results}, f, indent=1)
    print(f"wrote {args.out}: {len(runs)} runs")


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
    r = sub.add_parser("readme")
    r.add_argument("readme")
    r.add_argument("name")
    r.add_argument("results")
    r.add_argument("--sizes")
    r.set_defaults(func=cmd_readme)
    m = sub.add_parser("merge")
    m.add_argument("out")
    m.add_argument("results", nargs="+")
    m.set_defaults(func=cmd_merge)
    args = p.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
