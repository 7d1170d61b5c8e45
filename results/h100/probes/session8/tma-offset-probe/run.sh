#!/bin/bash
# each case in its own process: an illegal instruction ends the context
P=./scratch/probe1/tma_offset_probe
t() { echo "== SWZ=$SWZ $*"; timeout 20 $P "$@" 2>&1 | tail -3; }
# f32: coordinates aligned to 16 B (c multiple of 4, off 0: j=0 only via M=8 rows)
t 4 8 64 64 0 both 0 4 32
t 4 8 64 64 0 both 1
t 4 8 64 64 0 both 2
t 4 8 64 64 1 both 0
t 4 8 37 37 0 loads 0
t 4 8 37 37 0 stores 0
t 4 8 37 37 0 loads 5
t 2 8 128 128 0 both 0 8 64
t 2 8 128 128 0 both 1
t 2 8 128 128 0 both 4
t 2 8 128 128 0 both 8
t 4 40 37 37 0 both 0 1 3 5 20 36
t 4 40 70 71 1 both 0 1 3 5 50 69
t 2 40 67 67 0 both 0 1 3 5 30 66
t 2 40 130 133 3 both 0 1 3 5 100 129
