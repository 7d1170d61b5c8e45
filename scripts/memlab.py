#!/usr/bin/env python3
"""The memory lab's plots and tables, from the JSON of `gemmlab device`, `gemmlab mem` and
`gemmlab explain` (scripts/mem-check.sh writes all three; schema_version 1 or 2).

  scripts/memlab.py plots  DIR [--out DIR]
      One PNG per experiment of DIR/mem.json (mem-EXPERIMENT.png).

The tables (TABLES below: device, coalescing, aos_soa, alignment, pitch, transpose, constant,
transfer, explain, then80) are written into README.md and docs/ by scripts/regenerate.py,
between <!-- table:DIR/mem:NAME --> and <!-- /table:DIR/mem:NAME --> markers.
"""
import argparse
import json
import os
import sys

# The seeds' G80-era figures (seed 001 and seed 003), for the then-and-now table.
SEED = {
    "bandwidth_gbs": 86.4,          # GeForce 8800 GTX global memory (seed 001, 003)
    "peak_gflops": 345.6,           # G80 peak (seed 001; seed 003 says 367)
    "coalesced_us": 356.0,          # seed 001: 12 MB copy, coalesced
    "permuted_us": 3494.0,          #   permuted / misaligned
    "float3_direct_us": 3302.0,     # seed 001: float3 read directly
    "float3_shared_us": 359.0,      #   staged through shared memory
    "pcie_gbs": 4.0,                # seed 001: "4 GB/s peak (PCI)"
}


def load(directory, name):
    path = os.path.join(directory, name)
    with open(path) as f:
        doc = json.load(f)
    if doc.get("schema_version") not in (1, 2, 3):  # 2: explain results also carry "dtype"; 3: "run"
        sys.exit(f"{path}: unsupported schema_version {doc.get('schema_version')}")
    return doc


def rows_of(mem, experiment):
    return [r for r in mem["results"] if r["experiment"] == experiment]


def fmt_bytes(n):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} B"


def check(r):
    return "ok" if r.get("passed") else ("FAILED" if r.get("checked") else "-")


def table(header, body):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in body]
    return "\n".join(lines)


def t_device(d, mem, explain):
    dev, c = d["device"], d["ceilings"]
    by = {r["name"]: r for r in c["rows"]}
    body = [
        ["copy, cudaMemcpy D2D", f'{c["memcpy_d2d_gbs"]:.0f} GB/s', by["memcpy_d2d"]["what"]],
        ["copy, best kernel", f'{c["copy_kernel_gbs"]:.0f} GB/s ({c["copy_kernel_gbs"] / c["memcpy_d2d_gbs"]:.3f}x memcpy)',
         by[c["copy_kernel"]]["what"]],
        ["read-only, best kernel", f'{c["read_gbs"]:.0f} GB/s ({100 * c["read_gbs"] / dev["theoretical_bandwidth_gbs"]:.1f}% '
         f'of {dev["theoretical_bandwidth_gbs"]:.0f})', by[c["read_kernel"]]["what"]],
        ["FP32 FMA", f'{c["fma_gflops"] / 1e3:.1f} TFLOP/s', by["fma"]["what"]],
        ["cuBLAS SGEMM", f'{c["sgemm_gflops"] / 1e3:.1f} TFLOP/s', by["sgemm"]["what"]],
    ]
    head = (f'{dev["name"]}, compute capability {dev["compute_capability"]}, {dev["sm_count"]} SMs, '
            f'L2 {dev["l2_bytes"] >> 20} MiB, buffers of {c["buffer_bytes"] / 1e9:.2f} GB.\n\n')
    return head + table(["ceiling", "measured", "how"], body)


def t_generic(mem, experiment, keep=None, param_fmt=str):
    body = []
    for r in rows_of(mem, experiment):
        if keep and not keep(r):
            continue
        target = ""
        if "target" in r:
            target = f'{r["target"]}: {"met" if r["target_met"] else "not met"}'
        body.append([r["variant"], f'{r["param_name"]} = {param_fmt(r["param"])}' if r["param_name"] else "",
                     f'{r["gbs"]:.1f}', f'{r["ratio_to_copy"]:.3f}', f'{r["pct_of_theoretical"]:.1f}', check(r), target])
    header = ["variant", "param", "GB/s", "x copy", "% peak", "check", "target"]
    if not any(row[-1] for row in body):
        header, body = header[:-1], [row[:-1] for row in body]
    return table(header, body)


def t_coalescing(d, mem, explain):
    shown = {"offset": {0, 1, 2, 4, 8, 16, 31, 32}, "stride": {1, 2, 3, 4, 8, 16, 32}}
    return t_generic(mem, "coalescing", keep=lambda r: r["param"] in shown[r["variant"]]) + \
        "\n\n(Every offset 0..32 and stride 1..32 is in mem.json and the plot.)"


def t_transfer(d, mem, explain):
    def param(r):
        if r["param_name"] in ("bytes", "chunk_bytes"):
            return f'{r["param_name"]} = {fmt_bytes(r["param"])}'
        return f'{r["param_name"]} = {r["param"]}'
    keep = lambda r: r["param_name"] != "bytes" or r["param"] in (4096, 1 << 20, 256 << 20)
    body = [[r["variant"], param(r), f'{r["gbs"]:.2f}', check(r), r["note"]] for r in rows_of(mem, "transfer") if keep(r)]
    return table(["variant", "param", "GB/s", "check", "note"], body)


def t_explain(d, mem, explain):
    body = []
    for r in explain["results"]:
        x = r.get("explain", {})
        k, occ, model, roof = x.get("kernel", {}), x.get("occupancy", {}), x.get("model", {}), x.get("roofline", {})
        avail = k.get("available")
        body.append([
            r["variant"], f'{r.get("gflops", 0) / 1e3:.2f}', f'{model.get("cgma", 0):.1f}' if model.get("cgma") else "-",
            k.get("registers_per_thread", "n/a") if avail else "n/a",
            f'{k.get("static_smem_bytes", 0) + k.get("dynamic_smem_bytes", 0)}' if avail else "n/a",
            f'{occ.get("blocks_per_sm")} ({occ.get("limiter")})' if avail else "n/a",
            ("yes" if occ.get("api_agrees") else "NO") if avail else "n/a",
            f'{100 * x.get("fraction_of_bound", 0):.1f}',
            f'{100 * x.get("fraction_of_seed_bound", 0):.0f}' if x.get("fraction_of_seed_bound") else "-",
        ])
    m = explain["results"][0]
    head = f'm = n = k = {m["m"]}, {m["trans"]}.\n\n'
    return head + table(["rung", "TFLOP/s", "CGMA", "regs", "smem B/block", "blocks/SM (limit)", "API agrees",
                         "% of roofline", "% of seed bound"], body)


def t_then_now(d, mem, explain):
    """The seeds' G80 beside this GPU. Works from whatever the runs hold: a row whose
    measurement is missing (an experiment not run, a size not swept) says so instead."""
    dev, c = d["device"], d["ceilings"]

    def get(e, v, p=None):
        return next((r for r in rows_of(mem, e) if r["variant"] == v and (p is None or r["param"] == p)), None)

    def largest(e, v):
        rows = [r for r in rows_of(mem, e) if r["variant"] == v]
        return max(rows, key=lambda r: r["param"]) if rows else None

    missing = "not measured"
    copy, fma = c.get("memcpy_d2d_gbs"), c.get("fma_gflops")
    theoretical = dev.get("theoretical_bandwidth_gbs") or dev.get("peaks", {}).get("dram_gbs")
    peak = dev.get("peaks", {}).get("fp32_gflops")  # computed from the device (schema 3 and later)
    body = []
    if theoretical:
        body.append(["DRAM bandwidth", f'{SEED["bandwidth_gbs"]} GB/s (theoretical)',
                     f'{theoretical:.0f} GB/s theoretical' + (f', {copy:.0f} copied' if copy else ""),
                     f'x{theoretical / SEED["bandwidth_gbs"]:.0f}'])
    if peak or fma:
        today = ", ".join(([f'{peak / 1e3:.1f} TFLOP/s peak'] if peak else []) +
                          ([f'{fma / 1e3:.1f} TFLOP/s measured'] if fma else []))
        body.append(["FP32 peak", f'{SEED["peak_gflops"]} GFLOP/s', today,
                     f'x{(peak or fma) / SEED["peak_gflops"]:.0f}'])
    ridge_then = SEED["peak_gflops"] / SEED["bandwidth_gbs"]
    if fma and copy:
        ridge_now = fma / copy
        body.append(["flops per byte to stay compute-bound", f'{ridge_then:.1f} (CGMA {4 * ridge_then:.0f})',
                     f'{ridge_now:.1f} (CGMA {4 * ridge_now:.0f})', "reuse matters more"])
    off0, off1 = get("coalescing", "offset", 0), get("coalescing", "offset", 1)
    s1, s32 = get("coalescing", "stride", 1), get("coalescing", "stride", 32)
    parts = ([f'offset 1: {off0["gbs"] / off1["gbs"]:.2f}x slower'] if off0 and off1 else []) + \
            ([f'stride 32: {s1["gbs"] / s32["gbs"]:.1f}x slower'] if s1 and s32 else [])
    body.append(["misaligned vs coalesced copy", f'{SEED["permuted_us"] / SEED["coalesced_us"]:.1f}x slower (permuted)',
                 "; ".join(parts) or missing, "sectors, not segments"])
    direct, staged = get("aos_soa", "aos_direct"), get("aos_soa", "aos_staged")
    body.append(["float3 read directly vs through shared memory",
                 f'{SEED["float3_direct_us"] / SEED["float3_shared_us"]:.1f}x slower',
                 f'{staged["gbs"] / direct["gbs"]:.2f}x' if direct and staged else missing, "L1/L2 absorb it"])
    h2d = get("transfer", "h2d_pinned", 256 << 20) or largest("transfer", "h2d_pinned")
    body.append(["host to device", f'{SEED["pcie_gbs"]} GB/s peak (PCI)',
                 f'{h2d["gbs"]:.1f} GB/s pinned, {fmt_bytes(h2d["param"])}' if h2d else missing,
                 f'x{h2d["gbs"] / SEED["pcie_gbs"]:.0f}' if h2d else ""])
    return table(["", "seeds (G80, 8800 GTX)", f'today ({dev["name"]})', "change"], body)


TABLES = {
    "device": t_device,
    "coalescing": t_coalescing,
    "aos_soa": lambda d, m, e: t_generic(m, "aos_soa"),
    "alignment": lambda d, m, e: t_generic(m, "alignment"),
    "pitch": lambda d, m, e: t_generic(m, "pitch"),
    "transpose": lambda d, m, e: t_generic(m, "transpose"),
    "constant": lambda d, m, e: t_generic(m, "constant"),
    "transfer": t_transfer,
    "explain": t_explain,
    "then80": t_then_now,
}


def cmd_plots(args):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mem = load(args.dir, "mem.json")
    copy = mem["ceilings"]["memcpy_d2d_gbs"]
    out = args.out or args.dir
    experiments = []
    for r in mem["results"]:
        if r["experiment"] not in experiments:
            experiments.append(r["experiment"])
    for experiment in experiments:
        rows = rows_of(mem, experiment)
        fig, ax = plt.subplots(figsize=(8, 4.5))
        variants = list(dict.fromkeys(r["variant"] for r in rows))
        params = {v: [r for r in rows if r["variant"] == v] for v in variants}
        if experiment in ("coalescing", "transfer"):
            for v in variants:
                pts = sorted(params[v], key=lambda r: r["param"])
                # Stream counts are not bytes: the overlap rows are in the table only.
                if len(pts) == 1 or pts[0]["param_name"] == "streams":
                    continue
                ax.plot([r["param"] for r in pts], [r["gbs"] for r in pts], "-o", markersize=3, label=v)
            ax.set_xlabel("offset (floats) / stride (floats)" if experiment == "coalescing" else "bytes / chunk bytes / streams")
            if experiment == "transfer":
                ax.set_xscale("log", base=2)
                ax.set_yscale("log")
        else:
            labels = [f'{r["variant"]}\n{r["param"] if r["param_name"] else ""}' for r in rows]
            ax.bar(range(len(rows)), [r["gbs"] for r in rows], color="tab:blue")
            ax.set_xticks(range(len(rows)))
            ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
            if experiment == "constant":
                ax.set_yscale("log")
        if experiment != "transfer":
            ax.axhline(copy, color="black", linestyle="--", linewidth=1, label=f"cudaMemcpy D2D {copy:.0f} GB/s")
        ax.set_ylabel("GB/s")
        ax.set_title(f'{experiment} ({mem["device"]["name"]})', fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = os.path.join(out, f"mem-{experiment}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        print(path)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("plots")
    a.add_argument("dir")
    a.add_argument("--out")
    a.set_defaults(func=cmd_plots)
    args = p.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import plot
    plot.ensure_matplotlib(__file__)
    args.func(args)


if __name__ == "__main__":
    main()
