"""Serving, shared by the timing helpers (`ekb` prepends this file to bench_ort.py, bench_tvm.py
and bench_mnn.py): after its one-shot run a helper whose job says "serve" keeps its engine
loaded and times it on request, so that a comparison can alternate between engines without
paying an engine's start (a TVM compile, an MNN conversion) each time.

Protocol, on the helper's stdin and stdout (engines print to stdout too, so every reply is one
line that starts with REPLY and carries a JSON object):
  -> REPLY {"ready": true}            once the one-shot run's result and outputs are written
  <- time N                           N timed runs (no warm-up: the engine is warm)
  -> REPLY {"samples_ns": [...]}      each run timed with time.perf_counter_ns
End of input ends the helper.
"""
import json as _json
import sys as _sys
import time as _time

REPLY = "ekb-reply "


def read_job():
    """The job: one JSON object on the first line of stdin (the rest is requests when serving)."""
    return _json.loads(_sys.stdin.readline())


def timed(run, n):
    times = []
    for _ in range(n):
        t0 = _time.perf_counter_ns()
        run()
        times.append(_time.perf_counter_ns() - t0)
    return times


def serve(run):
    """Answers `time N` requests until stdin ends."""
    print(REPLY + _json.dumps({"ready": True}), flush=True)
    for line in _sys.stdin:
        words = line.split()
        if not words:
            continue
        if len(words) != 2 or words[0] != "time" or not words[1].isdigit():
            _sys.exit(f"unknown request {line.strip()!r}; expected `time N`")
        print(REPLY + _json.dumps({"samples_ns": timed(run, int(words[1]))}), flush=True)
