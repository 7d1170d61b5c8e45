#!/usr/bin/env python3
"""What calling gemmlab from Python costs: gemmlab.matmul on bf16 PyTorch tensors against the
same rung timed by the C++ harness (`gemmlab bench --format json`), per size.

    python3 scripts/python-overhead.py --gemmlab build/gemmlab --output results/h100/python.json

For each size (default 4096^3 and 256^3) and the rung (default wgmma_ws_bf16), with the
operands and C allocated once and the L2 left warm on both sides (bench --l2-flush none):

- cpp: the harness's median kernel time (CUDA events behind a gate kernel, so the host's
  launch path is not in it), from `gemmlab bench --backend cuda --dtype bf16 --mnk MxNxK
  --variants RUNG --l2-flush none --format json`, run as a subprocess;
- python.call_ms: CUDA events around one gemmlab.matmul(a, b, out=c) on an idle GPU (a
  synchronize before each): the kernel plus everything the call adds before it reaches the
  GPU (Python, the binding, the context, DLPack, the launch);
- python.pipelined_ms: N calls back to back between two events, over N: the cost per call when
  the host keeps the queue full (the kernel's time when it is longer than the call's overhead);
- python.host_us: the host time of one call (perf_counter, no synchronize): what the Python
  thread spends per call;
- python.allocating_call_ms: as call_ms, without out= (torch.empty for C inside the call);
- torch_matmul_ms: torch.matmul(a, b) on the same tensors (bf16 output, cuBLAS), for scale.

Each figure is a median of --reps repetitions after --warmup untimed ones. The JSON records
the device, the build, the versions and every setting.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import time


def summary(samples: list[float]) -> dict:
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples), "reps": len(samples)}


def event_ms(torch, call, reps: int, warmup: int, calls: int = 1, idle: bool = True) -> list[float]:
    """CUDA-event times of `calls` calls of `call` between one event pair, per call, `reps` times
    after `warmup` untimed calls. idle: a synchronize before each pair, so the GPU waits for the
    host's call (one call's full cost); otherwise the queue stays full (its throughput)."""
    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if idle:
            torch.cuda.synchronize()
        start.record()
        for _ in range(calls):
            call()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / calls)
    return times


def host_us(torch, call, reps: int) -> list[float]:
    """The host's time in one call (no synchronize inside), after event_ms warmed it up."""
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        begin = time.perf_counter()
        call()
        times.append((time.perf_counter() - begin) * 1e6)
    return times


def cpp_timing(exe: str, variant: str, m: int, n: int, k: int, device: int, reps: int, warmup: int) -> dict:
    """The harness's own timing of the rung, from the CLI's JSON."""
    with tempfile.TemporaryDirectory() as folder:
        report = os.path.join(folder, "bench.json")
        command = [exe, "bench", "--backend", "cuda", "--device", str(device), "--dtype", "bf16", "--mnk",
                   f"{m}x{n}x{k}", "--variants", variant, "--l2-flush", "none", "--reps", str(reps), "--warmup",
                   str(warmup), "--format", "json", "--output", report]
        run = subprocess.run(command, capture_output=True, text=True)
        if run.returncode != 0:
            raise SystemExit(f"python-overhead: {shlex.join(command)} failed ({run.returncode}):\n{run.stderr}")
        doc = json.load(open(report))
    record = next(r for r in doc["results"] if r["variant"] == variant)
    if record["status"] != "ok":
        raise SystemExit(f"python-overhead: {variant} at {m}x{n}x{k}: {record['status']}: {record['message']}")
    return {"command_line": shlex.join(command), "time_ms": record["time_ms"], "gflops": record["gflops"],
            "configuration": record["configuration"], "commit": doc["build"]["commit"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gemmlab", default="build/gemmlab", help="the gemmlab program (default build/gemmlab)")
    parser.add_argument("--variant", default="wgmma_ws_bf16", help="a bf16 CUDA rung (default wgmma_ws_bf16)")
    parser.add_argument("--sizes", default="4096,256", help="square sizes, comma-separated (default 4096,256)")
    parser.add_argument("--device", type=int, default=0, help="CUDA device ordinal (default 0)")
    parser.add_argument("--reps", type=int, default=100, help="timed repetitions of each figure (default 100)")
    parser.add_argument("--warmup", type=int, default=10, help="untimed calls first (default 10)")
    parser.add_argument("--calls", type=int, default=20, help="back-to-back calls per pipelined repetition")
    parser.add_argument("--output", help="write the JSON here (default: stdout)")
    args = parser.parse_args()

    import torch

    import gemmlab

    if not gemmlab.cuda_available():
        raise SystemExit("python-overhead: needs a CUDA device and a gemmlab build with the CUDA backend")
    exe = os.path.abspath(args.gemmlab)
    if not os.access(exe, os.X_OK):
        raise SystemExit(f"python-overhead: no gemmlab program at {exe} (build it, or pass --gemmlab PATH)")
    dev = torch.device("cuda", args.device)
    torch.cuda.set_device(dev)
    sizes = [int(s) for s in args.sizes.split(",")]
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

    results = []
    for size in sizes:
        m = n = k = size
        generator = torch.Generator(device=dev).manual_seed(size)
        a = (torch.rand(m, k, device=dev, generator=generator) * 2 - 1).to(torch.bfloat16)
        b = (torch.rand(k, n, device=dev, generator=generator) * 2 - 1).to(torch.bfloat16)
        c = torch.empty(m, n, device=dev, dtype=torch.float32)

        def call():
            gemmlab.matmul(a, b, out=c, variant=args.variant)

        def allocating_call():
            gemmlab.matmul(a, b, variant=args.variant)

        def torch_call():
            torch.matmul(a, b)

        python = {
            "call_ms": summary(event_ms(torch, call, args.reps, args.warmup)),
            "pipelined_ms": summary(event_ms(torch, call, args.reps, args.warmup, args.calls, idle=False)),
            "host_us": summary(host_us(torch, call, args.reps)),
            "allocating_call_ms": summary(event_ms(torch, allocating_call, args.reps, args.warmup)),
        }
        torch_ms = summary(event_ms(torch, torch_call, args.reps, args.warmup))
        cpp = cpp_timing(exe, args.variant, m, n, k, args.device, args.reps, args.warmup)
        kernel_ms = cpp["time_ms"]["median"]
        results.append({
            "m": m, "n": n, "k": k, "dtype": "bf16", "variant": args.variant,
            "cpp": cpp,
            "python": python,
            "torch_matmul_ms": torch_ms,
            # What a Python call adds to the kernel, on an idle GPU and with the queue kept full.
            "overhead_us": (python["call_ms"]["median"] - kernel_ms) * 1e3,
            "pipelined_over_cpp": python["pipelined_ms"]["median"] / kernel_ms,
            "call_over_cpp": python["call_ms"]["median"] / kernel_ms,
        })
        print(f"{size}^3 {args.variant}: C++ {kernel_ms * 1e3:.1f} us | Python call {python['call_ms']['median'] * 1e3:.1f}"
              f" us, pipelined {python['pipelined_ms']['median'] * 1e3:.1f} us, host {python['host_us']['median']:.1f}"
              f" us | torch.matmul {torch_ms['median'] * 1e3:.1f} us", file=sys.stderr)

    doc = {
        "schema_version": 1,
        "tool": "gemmlab",
        "command": "python-overhead",
        "run": {"date": started, "command_line": shlex.join([sys.executable, *sys.argv]), "host": socket.gethostname()},
        "build": gemmlab.build_info(),
        "device": gemmlab.device(args.device),
        "versions": {"python": platform.python_version(), "torch": torch.__version__, "gemmlab": gemmlab.__version__,
                     "torch_cuda": torch.version.cuda},
        "settings": {"reps": args.reps, "warmup": args.warmup, "calls_per_pipelined_rep": args.calls,
                     "l2": "warm on both sides (the harness with --l2-flush none)", "out": "preallocated (call_ms)"},
        "results": results,
    }
    text = json.dumps(doc, indent=2) + "\n"
    if args.output:
        os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
        temporary = args.output + ".tmp"
        with open(temporary, "w") as f:
            f.write(text)
        os.replace(temporary, args.output)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
