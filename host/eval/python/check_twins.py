"""Runs each task's PyTorch twin on the task's exported reference I/O and compares.

Usage: python3 check_twins.py ROOT [--out SUMMARY.json] [--tasks-dir TASKS] [--device DEVICE]

ROOT is a folder of exports (`ekb tasks export-io NAME --seed N --out ROOT/NAME.seedN`), each
holding `io.json` and its `.npy` files (ROOT may itself be one export). For each export:

1. import the twin (`io.json`'s `twin_file`, or TASKS/levelL/NAME.py with --tasks-dir), build
   `Model(*get_init_inputs())` and put it in eval mode;
2. check that `get_inputs()` gives tensors of the exported inputs' shapes, and that the model's
   state_dict entries other than int64 ones (counters such as `num_batches_tracked`), in order,
   have the exported parameters' shapes;
3. load the exported parameters and inputs: f32 ones at the run's precision, f16 ones as
   float16, i8 and i32 parameters as int8 and int32, i8 inputs as int8 and i32 inputs as int64
   (PyTorch's index type);
4. run in float64 and in float32 (the precision of the f32 parameters and inputs) on DEVICE
   (`cpu` by default; `cuda` moves the model with `.to(device)` and the inputs there, as a user
   would, with TF32 off so that float32 means float32), bring the outputs back to the CPU and
   compare every output with the exported reference (the task's f64 reference rounded to the
   output's dtype):
   - float64 must agree to |out - ref| <= 1e-6 * (1 + |ref|) (the reference's own f32 rounding
     is about 6e-8 relative), which catches semantic differences a loose tolerance would hide;
   - float32 must pass the task's tolerance |out - ref| <= atol + rtol * |ref|;
   - f16 outputs pass the task's f16 tolerance (at least one f16 step relative) in both runs:
     a twin computing in float32 and the reference in f64 may round to neighbouring f16 values;
   - integer outputs must be equal.

Prints one line per export and a last summary line; writes the full results as JSON with --out.
Exit status 0 when every export agrees, 1 otherwise.
"""

import argparse
import copy
import importlib.util
import json
import os
import sys
import traceback

import numpy as np
import torch

F64_TOL = 1e-6


def load_module(path, tag):
    spec = importlib.util.spec_from_file_location(f"ekb_twin_{tag}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def as_list(out):
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return list(out)
    raise TypeError(f"forward() returned {type(out).__name__}, expected a tensor or a tuple of tensors")


def compare(got, ref, atol, rtol, exact):
    """Error summary of `got` against `ref` (numpy arrays of one shape)."""
    if exact:
        bad = int(np.count_nonzero(got != ref))
        return {"ok": bad == 0, "mismatches": bad, "max_abs_err": float(np.max(np.abs(got - ref))) if got.size else 0.0}
    got = got.astype(np.float64)
    ref = ref.astype(np.float64)
    err = np.abs(got - ref)
    bound = atol + rtol * np.abs(ref)
    bad = ~(err <= bound)  # NaN counts as bad
    worst = float(np.nanmax(err / bound)) if got.size else 0.0
    return {
        "ok": not bool(bad.any()),
        "mismatches": int(bad.sum()),
        "max_abs_err": float(np.nanmax(err)) if got.size else 0.0,
        "worst_ratio": worst,
    }


def at_precision(arr, dtype_name, run_dtype):
    """An exported array as the run feeds it: f32 at the run's precision, f16 as float16,
    integers as they are (i32 inputs already widened to int64)."""
    t = torch.from_numpy(np.array(arr))
    if dtype_name == "f32":
        return t.to(run_dtype)
    if dtype_name == "f16":
        return t.to(torch.float16)
    return t


def load_twin(d, tasks_dir):
    """An export's `io.json`, the twin's module, `Model(*get_init_inputs())` in eval mode with
    its state_dict, the exported parameters by state_dict key (array, dtype) and the problems
    that stop a run (shapes of `get_inputs()` and of the state_dict against the export)."""
    with open(os.path.join(d, "io.json")) as f:
        io = json.load(f)
    name = io["task"]
    twin = io["twin_file"]
    if tasks_dir:
        twin = os.path.join(tasks_dir, f"level{io['level']}", f"{name}.py")
    problems = []
    mod = load_module(twin, f"{name}_{io['seed']}")
    torch.manual_seed(0)
    model = mod.Model(*mod.get_init_inputs()).eval()
    # Inputs: shapes of get_inputs() against the export.
    sample = mod.get_inputs()
    if len(sample) != len(io["inputs"]):
        problems.append(f"get_inputs() gives {len(sample)} tensors, the task has {len(io['inputs'])} inputs")
    for k, (s, e) in enumerate(zip(sample, io["inputs"])):
        if list(s.shape) != e["shape"]:
            problems.append(f"input {k} `{e['name']}`: get_inputs() shape {list(s.shape)}, task {e['shape']}")
    # Parameters: state_dict entries but int64 counters, in order.
    sd = model.state_dict()
    keys = [k for k, v in sd.items() if v.dtype != torch.int64]
    if len(keys) != len(io["params"]):
        problems.append(
            f"the model has {len(keys)} state_dict entries {keys}, the task has {len(io['params'])} parameters"
        )
    params = {}  # key -> (exported array, dtype)
    for key, e in zip(keys, io["params"]):
        arr = np.load(os.path.join(d, e["file"]))
        if list(sd[key].shape) != list(arr.shape):
            problems.append(f"state_dict `{key}` has shape {list(sd[key].shape)}, task parameter `{e['name']}` {list(arr.shape)}")
        else:
            params[key] = (arr, e["dtype"])
    return io, model, sd, params, problems


def load_inputs(d, io):
    """The exported inputs as (array, dtype), i32 ones widened to int64."""
    inputs = []
    for e in io["inputs"]:
        arr = np.load(os.path.join(d, e["file"]))
        inputs.append((arr.astype(np.int64) if e["dtype"] == "i32" else arr, e["dtype"]))
    return inputs


def model_at(model, sd, params, dtype, device):
    """A copy of `model` with the exported parameters, its f32 ones at `dtype`, on `device`."""
    # Convert the f32 parameters first, then assign every exported one in its own dtype:
    # loading into float32 tensors would round the f64 run's weights.
    m = copy.deepcopy(model).to(dtype).eval()
    state = {k: (v.to(dtype) if v.is_floating_point() else v) for k, v in sd.items()}
    state.update({k: at_precision(arr, dt, dtype) for k, (arr, dt) in params.items()})
    m.load_state_dict(state, assign=True)
    return m.to(device)


def inputs_at(inputs, dtype, device):
    """Fresh tensors of the exported inputs on `device`: a twin may update its inputs in place
    (`out += identity`)."""
    return [at_precision(arr, dt, dtype).to(device) for arr, dt in inputs]


def check_outputs(io, outs, refs, label):
    """Each output of a run at precision `label` (`f64` or `f32`) against the exported
    reference: (entries, problems); the run agrees when there is no problem and every entry is ok."""
    if len(outs) != len(refs):
        return [], [f"{label}: forward() returns {len(outs)} outputs, the task has {len(refs)}"]
    entries = []
    for o, got, ref in zip(io["outputs"], outs, refs):
        got = got.detach().cpu().numpy()
        entry = {"output": o["name"], "dtype": label}
        if list(got.shape) != list(ref.shape):
            entry.update(ok=False, problem=f"shape {list(got.shape)}, reference {list(ref.shape)}")
        elif o["dtype"] in ("i32", "i8"):
            entry.update(compare(got.astype(np.int64), ref.astype(np.int64), 0, 0, True))
        elif label == "f64" and o["dtype"] != "f16":
            entry.update(compare(got, ref, F64_TOL, F64_TOL, False))
        else:
            entry.update(compare(got, ref, o["atol"], o["rtol"], False))
        entries.append(entry)
    return entries, []


def load_refs(d, io):
    return [np.load(os.path.join(d, o["file"])) for o in io["outputs"]]


def check_export(d, tasks_dir, device):
    io, model, sd, params, problems = load_twin(d, tasks_dir)
    res = {"task": io["task"], "seed": io["seed"], "ok": False, "problems": problems, "outputs": []}
    if res["problems"]:
        return res
    inputs = load_inputs(d, io)
    refs = load_refs(d, io)
    ok = True
    for dtype, label in ((torch.float64, "f64"), (torch.float32, "f32")):
        m = model_at(model, sd, params, dtype, device)
        xs = inputs_at(inputs, dtype, device)
        with torch.no_grad():
            outs = as_list(m(*xs))
        entries, problems = check_outputs(io, outs, refs, label)
        res["problems"] += problems
        res["outputs"] += entries
        ok &= not problems and all(e["ok"] for e in entries)
    res["ok"] = ok and not res["problems"]
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root")
    ap.add_argument("--out")
    ap.add_argument("--tasks-dir")
    ap.add_argument("--device", default="cpu", help="where the twins run: cpu (default), cuda, cuda:1, ...")
    args = ap.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        ap.error(f"--device {args.device}: torch {torch.__version__} sees no CUDA device")
    if device.type == "cuda":
        # The tolerances are float32's: no TF32 in matrix products and convolutions, no reduced
        # precision in half-precision reductions.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    if os.path.exists(os.path.join(args.root, "io.json")):
        dirs = [args.root]
    else:
        dirs = sorted(
            os.path.join(args.root, n) for n in os.listdir(args.root) if os.path.exists(os.path.join(args.root, n, "io.json"))
        )
    results = []
    for d in dirs:
        try:
            r = check_export(d, args.tasks_dir, device)
        except Exception as e:  # a twin that fails to run is a result, not a crash of the check
            r = {"task": os.path.basename(d), "ok": False, "problems": [f"{type(e).__name__}: {e}"],
                 "traceback": traceback.format_exc(), "outputs": []}
        results.append(r)
        worst = {o["dtype"]: max((x.get("worst_ratio", 0.0) for x in r["outputs"] if x["dtype"] == o["dtype"]), default=0.0)
                 for o in r["outputs"]}
        status = "ok  " if r["ok"] else "FAIL"
        detail = "; ".join(r["problems"]) or ", ".join(f"{k} worst {v:.2e} of tolerance" for k, v in worst.items())
        bad = [o for o in r["outputs"] if not o.get("ok", False)]
        if bad:
            detail += " | " + "; ".join(f"{o['output']} {o['dtype']}: {o.get('problem') or str(o.get('mismatches')) + ' mismatches, max abs err ' + format(o.get('max_abs_err', 0), '.3e')}" for o in bad)
        print(f"{status} {r['task']} seed {r.get('seed', '?')}: {detail}", flush=True)
    passed = sum(r["ok"] for r in results)
    summary = {"torch": torch.__version__, "numpy": np.__version__, "device": str(device),
               "exports": len(results), "passed": passed,
               "failed": len(results) - passed, "f64_tolerance": F64_TOL, "results": results}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(summary, f, indent=1)
    print(f"twins: {passed} of {len(results)} exports agree (torch {torch.__version__}, {device})")
    sys.exit(0 if passed == len(results) else 1)


if __name__ == "__main__":
    main()
