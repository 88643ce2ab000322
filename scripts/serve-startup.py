#!/usr/bin/env python3
"""Time from starting `forge serve` to its first stdout line (the URLs), median of 10, plain, with a
--scenario history and with --tls (a serving key is generated at start). Usage: serve-startup.py FORGE"""
import subprocess, time, sys, os, signal, statistics
forge = sys.argv[1]
times = []
for scenario in ([], ["--scenario", "examples/serve-history.json"], ["--tls"]):
    samples = []
    for _ in range(10):
        start = time.perf_counter()
        p = subprocess.Popen([forge, "serve", "--listen", "127.0.0.1:0", *scenario], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        p.stdout.readline()
        samples.append(time.perf_counter() - start)
        p.send_signal(signal.SIGTERM); p.wait()
    print(" ".join(scenario) or "plain", f"median {statistics.median(samples)*1000:.0f} ms, max {max(samples)*1000:.0f} ms, exit {p.returncode}")
