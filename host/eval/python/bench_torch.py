"""Times tasks' PyTorch twins on a CUDA device for `ekb bench --engines --backend cuda`.

Usage: python3 bench_torch.py            serve requests on stdin (below)
       python3 bench_torch.py --self-test check the request parsing and replies (no torch needed)

`check_twins.py` must sit beside this file: the twin is loaded, given the task's parameters and
fed its inputs exactly as the twin check does (float32, TF32 off).

Protocol: requests are lines on stdin; every reply is one line on stdout that starts with
REPLY and carries a JSON object (anything else on stdout is a library's own output).
  -> {"ready": true, "torch": V, "triton": V|null, "device": NAME}   once torch sees a CUDA device
  -> {"ready": false, "reason": TEXT}   torch missing or no CUDA device; the helper then exits 1
  <- load {"export": DIR, "sides": ["eager", "compile"]}
     DIR is an `ekb tasks export-io` folder (io.json with the task's inputs, parameters,
     reference outputs and tolerances). Each side is the twin in float32 on `cuda`, eagerly or
     through `torch.compile` (default mode), warmed up, captured in a CUDA graph, replayed once
     on the pristine inputs and its outputs compared with the reference at the task's tolerance.
  -> {"sides": [{"side": S, "unavailable": TEXT|null, "mismatch": TEXT|null,
                 "per_run_ns": NS|null, "setup_s": SECONDS}, ...]}
  <- time SIDE N
  -> {"samples_ns": [...]}   N replays of the side's graph back to back, each between two CUDA
                             events (its device time)
  <- drop
  -> {"dropped": true}       the task's models and graphs freed, torch.compile's caches reset
A request that cannot be served is answered {"error": TEXT}; end of input ends the helper.
"""

import json
import os
import sys
import time
import traceback

REPLY = "ekb-reply "
SIDES = ("eager", "compile")
# Runs before capture: torch.compile compiles in the first, and lazy CUDA initialisation of
# libraries (cuBLAS, cuDNN) happens outside the graph.
WARMUP = 3
# Replays timed at load, for the caller's estimate of a replay's length.
PROBE = 5


def parse_request(line):
    """A request line as ("load", export_dir, sides), ("time", side, n) or ("drop",); ValueError
    with the reason for anything else."""
    words = line.strip().split(None, 1)
    if not words:
        raise ValueError("empty request")
    verb = words[0]
    rest = words[1] if len(words) > 1 else ""
    if verb == "load":
        try:
            job = json.loads(rest)
        except json.JSONDecodeError as e:
            raise ValueError(f"load: the job is not JSON ({e})") from None
        if not isinstance(job, dict) or not isinstance(job.get("export"), str):
            raise ValueError('load: expected {"export": DIR, "sides": [...]}')
        sides = job.get("sides", list(SIDES))
        if not isinstance(sides, list) or not sides or any(s not in SIDES for s in sides):
            raise ValueError(f"load: sides must be a non-empty list of {', '.join(SIDES)}, got {sides!r}")
        if len(set(sides)) != len(sides):
            raise ValueError(f"load: a side is listed twice in {sides!r}")
        return ("load", job["export"], sides)
    if verb == "time":
        parts = rest.split()
        if len(parts) != 2 or parts[0] not in SIDES or not parts[1].isdigit() or int(parts[1]) == 0:
            raise ValueError(f"time: expected `time SIDE N` with SIDE one of {', '.join(SIDES)} and N >= 1, got {line.strip()!r}")
        return ("time", parts[0], int(parts[1]))
    if verb == "drop" and not rest:
        return ("drop",)
    raise ValueError(f"unknown request {line.strip()!r}; expected load, time or drop")


def reply_line(obj):
    """The line a reply is sent as."""
    return REPLY + json.dumps(obj)


def reply(obj):
    print(reply_line(obj), flush=True)


def ns_of_ms(times_ms):
    """CUDA event times (float milliseconds) as integer nanoseconds."""
    return [int(round(t * 1e6)) for t in times_ms]


def median(xs):
    s = sorted(xs)
    n = len(s)
    return (s[n // 2] + s[(n - 1) // 2]) / 2


def reason(what, exc):
    """Why a side is unavailable, in one line: what failed and the exception's first line."""
    first = str(exc).strip().splitlines()
    text = f"{what}: {type(exc).__name__}" + (f": {first[0]}" if first else "")
    return text[:400]


def start():
    """Imports torch and its CUDA device with TF32 off; the ready reply's object."""
    try:
        import torch
    except Exception as e:  # torch missing or broken
        return {"ready": False, "reason": f"cannot import torch ({type(e).__name__}: {e}); install PyTorch with CUDA for `{sys.executable}`"}
    if not torch.cuda.is_available():
        return {"ready": False, "reason": f"torch {torch.__version__} sees no CUDA device (torch.cuda.is_available() is false)"}
    # float32 means float32: no TF32 in matrix products and convolutions.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    try:
        import triton
        triton_version = triton.__version__
    except Exception:
        triton_version = None
    return {"ready": True, "torch": torch.__version__, "triton": triton_version,
            "device": torch.cuda.get_device_name(0)}


class Side:
    """One way of running the twin: its CUDA graph, the static inputs it reads and the outputs
    it writes."""

    def __init__(self, graph, static, pristine, outs):
        self.graph = graph
        self.static = static
        self.pristine = pristine
        self.outs = outs

    def replay_fresh(self):
        """One replay on the pristine inputs (the twin may update its inputs in place)."""
        for x, x0 in zip(self.static, self.pristine):
            x.copy_(x0)
        self.graph.replay()

    def time(self, n):
        import torch
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        for s, e in zip(starts, ends):
            s.record()
            self.graph.replay()
            e.record()
        ends[-1].synchronize()
        return ns_of_ms([s.elapsed_time(e) for s, e in zip(starts, ends)])


def capture(fn, pristine):
    """`fn` warmed up on a side stream, then captured in a CUDA graph over copies of the inputs."""
    import torch
    import check_twins as ct
    static = [x.clone() for x in pristine]
    with torch.no_grad():
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(WARMUP):
                for x, x0 in zip(static, pristine):
                    x.copy_(x0)
                fn(*static)
        torch.cuda.current_stream().wait_stream(stream)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            outs = ct.as_list(fn(*static))
    return Side(graph, static, pristine, outs)


def mismatch_of(entries, problems):
    """The first disagreement with the reference, in words, or None."""
    if problems:
        return problems[0]
    for e in entries:
        if not e["ok"]:
            return f"output `{e['output']}`: " + (e.get("problem") or f"{e['mismatches']} element(s) outside the tolerance, max abs error {e['max_abs_err']:.3e}")
    return None


def load(export, sides):
    """Every side of one export, started or unavailable; the load reply's list and the started
    sides by name."""
    import torch
    import check_twins as ct
    device = torch.device("cuda")
    try:
        io, model, sd, params, problems = ct.load_twin(export, None)
        if problems:
            raise ValueError("; ".join(problems))
        m = ct.model_at(model, sd, params, torch.float32, device)
        pristine = ct.inputs_at(ct.load_inputs(export, io), torch.float32, device)
        refs = ct.load_refs(export, io)
    except Exception as e:
        traceback.print_exc()
        why = reason("the twin does not load", e)
        return [{"side": s, "unavailable": why, "mismatch": None, "per_run_ns": None, "setup_s": 0.0} for s in sides], {}
    results, started = [], {}
    for s in sides:
        t0 = time.perf_counter()
        entry = {"side": s, "unavailable": None, "mismatch": None, "per_run_ns": None}
        try:
            fn = m if s == "eager" else torch.compile(m)
            side = capture(fn, pristine)
            side.replay_fresh()
            torch.cuda.synchronize()
            entry["mismatch"] = mismatch_of(*ct.check_outputs(io, side.outs, refs, "f32"))
            entry["per_run_ns"] = median(side.time(PROBE))
            started[s] = side
        except Exception as e:
            traceback.print_exc()
            what = "torch.compile or its CUDA graph failed" if s == "compile" else "the eager twin or its CUDA graph failed"
            entry["unavailable"] = reason(what, e)
        entry["setup_s"] = round(time.perf_counter() - t0, 3)
        results.append(entry)
    return results, started


def drop(started):
    import torch
    started.clear()
    torch._dynamo.reset()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


def handle(line, started):
    """The reply to one request line; `started` holds the loaded task's sides by name and is
    updated in place."""
    try:
        req = parse_request(line)
    except ValueError as e:
        return {"error": str(e)}
    try:
        if req[0] == "load":
            drop(started)
            results, sides = load(req[1], req[2])
            started.update(sides)
            return {"sides": results}
        if req[0] == "time":
            if req[1] not in started:
                return {"error": f"time: side `{req[1]}` is not loaded"}
            return {"samples_ns": started[req[1]].time(req[2])}
        drop(started)
        return {"dropped": True}
    except Exception as e:
        traceback.print_exc()
        return {"error": reason(req[0], e)}


def serve():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    ready = start()
    reply(ready)
    if not ready["ready"]:
        sys.exit(1)
    started = {}
    for line in sys.stdin:
        if line.strip():
            reply(handle(line, started))


def self_test():
    """Checks the parsing and reply functions; prints a line per failure and a summary."""
    checks = []

    def check(name, cond):
        checks.append((name, bool(cond)))

    def raises(line):
        try:
            parse_request(line)
        except ValueError as e:
            return str(e)
        return None

    check("load", parse_request('load {"export": "/x/y", "sides": ["compile"]}') == ("load", "/x/y", ["compile"]))
    check("load default sides", parse_request('load {"export": "d"}') == ("load", "d", ["eager", "compile"]))
    check("time", parse_request("time eager 250\n") == ("time", "eager", 250))
    check("drop", parse_request("drop\n") == ("drop",))
    check("bad json", "not JSON" in (raises("load {export}") or ""))
    check("no export", "expected" in (raises('load {"sides": ["eager"]}') or ""))
    check("bad side", "sides must be" in (raises('load {"export": "d", "sides": ["jit"]}') or ""))
    check("twice", "twice" in (raises('load {"export": "d", "sides": ["eager", "eager"]}') or ""))
    check("time 0", "N >= 1" in (raises("time eager 0") or ""))
    check("time side", "SIDE" in (raises("time jit 3") or ""))
    check("unknown", "unknown request" in (raises("run 3") or ""))
    check("drop args", "unknown request" in (raises("drop now") or ""))
    check("empty", raises("  ") == "empty request")
    line = reply_line({"samples_ns": [1, 2]})
    check("reply", line.startswith(REPLY) and json.loads(line[len(REPLY):]) == {"samples_ns": [1, 2]})
    check("ns", ns_of_ms([0.0125, 1.5]) == [12500, 1500000])
    check("median", median([3, 1, 2]) == 2 and median([4, 1, 2, 3]) == 2.5)
    check("reason", reason("x failed", RuntimeError("boom\nmore")) == "x failed: RuntimeError: boom")
    check("mismatch", mismatch_of([{"ok": True}, {"ok": False, "output": "y", "mismatches": 3, "max_abs_err": 0.5}], [])
          == "output `y`: 3 element(s) outside the tolerance, max abs error 5.000e-01")
    check("mismatch none", mismatch_of([{"ok": True}], []) is None)
    # Requests that need no torch: refused ones, and timing a side that is not loaded.
    check("handle bad", handle("jit 3\n", {}) == {"error": "unknown request 'jit 3'; expected load, time or drop"})
    check("handle not loaded", handle("time compile 5\n", {}) == {"error": "time: side `compile` is not loaded"})
    failed = [n for n, ok in checks if not ok]
    for n in failed:
        print(f"self-test failed: {n}")
    print(f"bench_torch self-test: {len(checks) - len(failed)} of {len(checks)} checks pass")
    return not failed


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(0 if self_test() else 1)
    if sys.argv[1:]:
        sys.exit(f"usage: {sys.argv[0]} [--self-test]")
    serve()
