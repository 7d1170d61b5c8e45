#!/usr/bin/env bash
# Session 17: bf16 4095^3 with the padded copies by the driver's cudaMemcpy2DAsync (probe
# knob GEMMLAB_PROBE_REPITCH=memcpy2d) against repitch_kernel, three interleaved rounds
# (verified); 8192x8192x4095 likewise; then memcheck and racecheck on small odd shapes in
# the default forms.
set -uo pipefail
cd "$(dirname "$0")/../.."
O=$OUT/f; mkdir -p $O build-device
xz -dc scratch/bin/gemmlab-probe.xz > build-device/gemmlab; chmod +x build-device/*
G=build-device/gemmlab
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu --format=csv > $O/nvidia-smi.csv 2>&1
summ() { python3 - "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(sys.argv[2] + ': ' + '; '.join(f'{x["m"]}x{x["n"]}x{x["k"]} {x["variant"]} {x["time_ms"]["median"]*1e3:.1f} us {x.get("gflops",0)/1e3:.1f}' + ('' if x.get("verification",{}).get("passed") else ' FAILED') for x in r["results"] if not x.get("anchor")))
PY
}
for round in 1 2 3; do
  for form in kernel memcpy2d; do
    GEMMLAB_PROBE_REPITCH=$form timeout 60 $G bench --backend cuda --dtype bf16 --variants wgmma_ws_bf16,cublas_bf16 --mnk 4095x4095x4095,4096x4096x4096,8192x8192x4095 --format json --output $O/$form-$round.json 2>>$O/bench.log; summ $O/$form-$round.json "$form round $round"
  done
done
for tool in memcheck racecheck; do
  bad=0
  for dt in "bf16 NN" "tf32 NN" "f16 NT"; do
    set -- $dt
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 99 $G bench --backend cuda --dtype $1 --variants wgmma_ws_$1 --mnk 300x520x1023,136x264x40 --trans $2 --beta 0.5 --reps 1 --warmup 0 --min-time 0 >> $O/san-$tool.log 2>&1 || bad=$((bad+1))
  done
  echo "$tool: $((3-bad)) of 3 clean; $(grep -cE 'ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards' $O/san-$tool.log) summaries clean"
done
cd $OUT && tar czf f.tgz f && rm -rf f
