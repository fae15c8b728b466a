#!/usr/bin/env python3
"""Prints the median (and median absolute deviation, as % of the median) of
every criterion benchmark under target/criterion, one line each, so that
BENCHMARKS.md can quote them. Usage: benches/scripts/medians.py [TARGET_DIR]"""
import json
import os
import sys

root = os.path.join(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CARGO_TARGET_DIR", "target"), "criterion")
rows = []
for dirpath, dirnames, filenames in os.walk(root):
    if os.path.basename(dirpath) == "new" and "estimates.json" in filenames:
        with open(os.path.join(dirpath, "estimates.json")) as f:
            est = json.load(f)
        bench = {}
        bj = os.path.join(dirpath, "benchmark.json")
        if os.path.exists(bj):
            with open(bj) as f:
                bench = json.load(f)
        name = bench.get("full_id") or os.path.relpath(os.path.dirname(dirpath), root)
        med = est["median"]["point_estimate"]
        mad = est["median_abs_dev"]["point_estimate"]
        tp = bench.get("throughput") or {}
        extra = ""
        if "Bytes" in tp:
            extra = f"  {med / tp['Bytes']:.3f} ns/B"
        elif "BytesDecimal" in tp:
            extra = f"  {med / tp['BytesDecimal']:.3f} ns/B"
        rows.append((name, med, mad, extra))


def fmt(ns):
    for unit, div in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= div:
            return f"{ns / div:.3f} {unit}"
    return f"{ns:.1f} ns"


for name, med, mad, extra in sorted(rows):
    print(f"{name:<75} median {fmt(med):>12}  mad {100 * mad / med:5.1f}%{extra}")
