"""Compiles one ONNX model with Apache TVM (Relax ONNX frontend, LLVM CPU target), optionally tuned
with MetaSchedule, runs it on stored inputs and times it: warm-up runs, then timed samples.

Reads one JSON job on the first line of stdin (`serve.py`, prepended to this file, defines
`read_job`, `timed` and `serve`):
  {"model": PATH, "inputs": DIR, "outputs": DIR, "result": PATH,
   "warmup": N, "samples": N, "threads": T, "serve": BOOL,
   "mcpu": CPU, "mattr": [FEATURE, ...], "tune_trials": N, "tune_root": DIR, "graph_key": KEY}
Every model input NAME is read from INPUTS/input.NAME.npy. The model's local functions (the `ekb`
domain) are inlined first, and their `Constant` nodes rewritten to the `value` tensor form: the
Relax frontend reads neither local functions nor `value_float`/`value_ints`. The target is LLVM for this
machine's CPU: `mcpu` "native" is resolved to the CPU LLVM detects, `mattr` is passed on, and
`num-cores` is T (0: the machine's core count). T > 0 also sets TVM_NUM_THREADS, which must
happen before tvm is imported.

tune_trials = 0: untuned, TVM's default CPU pipeline (no schedules: each fused operator is its
plain loop nest compiled by LLVM). tune_trials = N > 0: MetaSchedule with N trials in total,
its database kept in TUNE_ROOT/<target>/<graph_key>/ with a marker `ekb-tuning.json`; a folder
whose marker has the same trials, TVM version and target is reused without tuning again.
Tuning writes into a fresh sibling folder FOLDER.tuning-PID and renames it into place only when
it completed; every tuned run removes such folders whose process is gone. Tuning refuses an
apache-tvm-ffi other than 0.1.14 (0.1.15 crashes MetaSchedule in TVM 0.27).

Each sample is one whole `vm["main"](*inputs)` (inputs already TVM tensors), timed with
time.perf_counter_ns. The outputs of the last timed run are written to OUTPUTS/output.NAME.npy.
Writes one JSON object to RESULT: {"engine", "version", "providers", "threads", "warmup",
"samples_ns", "tuning"}; tuning is null when untuned, else {"trials", "dir", "reused",
"seconds"}. With "serve", then answers timing requests (`serve.py`).
"""
import json
import os
import shutil
import sys
import time


def constants_as_tensors(graph):
    """Rewrites `Constant(value_float=...)` and its scalar and list siblings to `Constant(value=T)`."""
    import numpy as np
    from onnx import helper, numpy_helper

    forms = {"value_float": lambda a: np.array(a.f, np.float32),
             "value_floats": lambda a: np.array(list(a.floats), np.float32),
             "value_int": lambda a: np.array(a.i, np.int64),
             "value_ints": lambda a: np.array(list(a.ints), np.int64)}
    for node in graph.node:
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and len(node.attribute) == 1:
            attr = node.attribute[0]
            if attr.name in forms:
                tensor = numpy_helper.from_array(forms[attr.name](attr))
                del node.attribute[:]
                node.attribute.append(helper.make_attribute("value", tensor))


def check_tuning_ffi():
    """MetaSchedule in apache-tvm 0.27.0.post1 crashes (SIGSEGV) with apache-tvm-ffi 0.1.15 when it
    serialises IR; it works with the 0.1.14 it was built against. Refuse before the crash."""
    import tvm_ffi

    if not tvm_ffi.__version__.startswith("0.1.14"):
        sys.exit(f"apache-tvm-ffi {tvm_ffi.__version__} crashes MetaSchedule of apache-tvm 0.27 when it "
                 f"serialises IR; install the version TVM was built against with `{sys.executable} -m pip "
                 f"install \"apache-tvm-ffi==0.1.14.post0\"` (untuned TVM works with either)")


def remove_abandoned(folder):
    """Removes FOLDER.tuning-PID folders of tunings whose process is gone (killed or crashed)."""
    parent, name = os.path.split(folder)
    for entry in os.listdir(parent):
        pid = entry[len(name) + len(".tuning-"):]
        if entry.startswith(f"{name}.tuning-") and pid.isdigit():
            try:
                os.kill(int(pid), 0)
            except ProcessLookupError:
                shutil.rmtree(os.path.join(parent, entry), ignore_errors=True)
            except PermissionError:  # alive, another user's
                pass


def main():
    job = read_job()
    if job["threads"] > 0:
        os.environ["TVM_NUM_THREADS"] = str(job["threads"])

    import numpy as np
    import onnx
    import onnx.inliner
    import tvm
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx
    from tvm.target import codegen

    model = onnx.inliner.inline_local_functions(onnx.load(job["model"]))
    constants_as_tensors(model.graph)
    initialisers = {t.name for t in model.graph.initializer}
    graph_inputs = [i for i in model.graph.input if i.name not in initialisers]
    dtypes = {i.name: onnx.helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type).name
              for i in graph_inputs}
    shapes = {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim] for i in graph_inputs}
    mod = from_onnx(model, shape_dict=shapes, dtype_dict=dtypes, keep_params_in_input=False)

    mcpu = codegen.llvm_get_system_cpu() if job["mcpu"] == "native" else job["mcpu"]
    cores = job["threads"] or os.cpu_count() or 1
    spec = {"kind": "llvm", "mcpu": mcpu, "num-cores": cores}
    if job["mattr"]:
        spec["mattr"] = job["mattr"]
    target = tvm.target.Target(spec)

    tuning = None
    if job["tune_trials"] > 0:
        slug = f"llvm-{mcpu}{''.join(job['mattr'])}-{cores}cores"
        folder = os.path.join(job["tune_root"], slug, job["graph_key"], f"{job['tune_trials']}-trials")
        marker = {"trials": job["tune_trials"], "tvm": tvm.__version__, "target": str(target)}
        os.makedirs(os.path.dirname(folder), exist_ok=True)
        remove_abandoned(folder)
        reused = False
        try:
            with open(os.path.join(folder, "ekb-tuning.json")) as f:
                done = json.load(f)
            reused = all(done.get(k) == v for k, v in marker.items())
        except (OSError, ValueError):
            pass
        t0 = time.monotonic()
        if not reused:
            check_tuning_ffi()
            fresh = f"{folder}.tuning-{os.getpid()}"
            shutil.rmtree(fresh, ignore_errors=True)
            relax.get_pipeline("static_shape_tuning", total_trials=job["tune_trials"], target=target,
                               work_dir=fresh)(mod)
            marker["seconds"] = time.monotonic() - t0
            with open(os.path.join(fresh, "ekb-tuning.json"), "w") as f:
                json.dump(marker, f, indent=1)
            shutil.rmtree(folder, ignore_errors=True)
            os.rename(fresh, folder)
        # Zero trials: the same pipeline, applying the records in the folder without tuning.
        mod = relax.get_pipeline("static_shape_tuning", total_trials=0, target=target, work_dir=folder)(mod)
        tuning = {"trials": job["tune_trials"], "dir": folder, "reused": reused,
                  "seconds": time.monotonic() - t0}
    else:
        mod = tvm.transform.Sequential([relax.transform.DecomposeOpsForInference(),
                                        relax.transform.CanonicalizeBindings()])(mod)

    vm = relax.VirtualMachine(tvm.compile(mod, target=target), tvm.cpu())
    args = [tvm.runtime.tensor(np.load(os.path.join(job["inputs"], f"input.{i.name}.npy"))) for i in graph_inputs]
    main_fn = vm["main"]
    last = []

    def run():
        last[:] = [main_fn(*args)]

    for _ in range(job["warmup"]):
        run()
    times = timed(run, job["samples"])
    out = last[0]
    values = [out] if isinstance(out, tvm.runtime.Tensor) else list(out)
    names = [o.name for o in model.graph.output]
    if len(values) != len(names):
        sys.exit(f"TVM returned {len(values)} outputs, the model has {len(names)}")
    os.makedirs(job["outputs"], exist_ok=True)
    for name, value in zip(names, values):
        np.save(os.path.join(job["outputs"], f"output.{name}.npy"), np.ascontiguousarray(value.numpy()))
    with open(job["result"], "w") as f:
        json.dump({
            "engine": "tvm",
            "version": tvm.__version__,
            "providers": [str(target)],
            "threads": job["threads"],
            "warmup": job["warmup"],
            "samples_ns": times,
            "tuning": tuning,
        }, f)
    if job.get("serve"):
        serve(run)


if __name__ == "__main__":
    main()
