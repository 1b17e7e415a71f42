"""Converts one ONNX model to MNN, runs it in MNN's CPU backend on stored inputs and times it:
warm-up runs, then timed samples.

Reads one JSON job on the first line of stdin (`serve.py`, prepended to this file, defines
`read_job`, `timed` and `serve`):
  {"model": PATH, "inputs": DIR, "outputs": DIR, "result": PATH,
   "warmup": N, "samples": N, "threads": T, "serve": BOOL}
The model's local functions (the `ekb` domain) are inlined first, then MNN's converter (the
`_tools` extension the MNN wheel ships, called directly: the `MNN.tools` wrappers are avoided
because importing them runs pip and reports to a telemetry server) writes MODEL.mnn next to the
model. The session runs on MNN's CPU backend at precision "normal" (f32), with T threads
(0: MNN's default).

Each sample copies every input from its host tensor into the session (MNN may reuse an input's
memory for intermediate values, so every run starts from a fresh copy), runs the session, and
copies every output back to host memory: one whole inference as an application sees it, timed
with time.perf_counter_ns. The outputs of the last timed run are written to
OUTPUTS/output.NAME.npy. Writes one JSON object to RESULT: {"engine", "version", "providers",
"threads", "warmup", "samples_ns"}. With "serve", then answers timing requests (`serve.py`).
"""
import json
import os
import sys

import numpy as np
import onnx
import onnx.inliner


def main():
    job = read_job()
    model = onnx.inliner.inline_local_functions(onnx.load(job["model"]))
    inlined = job["model"][: -len(".onnx")] + ".inlined.onnx"
    onnx.save(model, inlined)
    converted = job["model"][: -len(".onnx")] + ".mnn"

    import _tools  # MNN's converter, without MNN.tools (see the header)

    argv = ["mnnconvert", "-f", "ONNX", "--modelFile", inlined, "--MNNModel", converted, "--bizCode", "ekb"]
    if not _tools.mnnconvert(argv) or not os.path.exists(converted):
        sys.exit(f"MNN's converter failed on {inlined}")

    import MNN

    types = {np.dtype(np.float32): MNN.Halide_Type_Float, np.dtype(np.int32): MNN.Halide_Type_Int}
    interp = MNN.Interpreter(converted)
    config = {"backend": "CPU", "precision": "normal"}
    if job["threads"] > 0:
        config["numThread"] = job["threads"]
    session = interp.createSession(config)
    feeds = []
    for name, tensor in interp.getSessionInputAll(session).items():
        value = np.load(os.path.join(job["inputs"], f"input.{name}.npy"))
        if value.dtype not in types:
            sys.exit(f"input `{name}` has dtype {value.dtype}; MNN is fed float32 or int32")
        host = MNN.Tensor(list(value.shape), types[value.dtype], value.copy(), MNN.Tensor_DimensionType_Caffe)
        feeds.append((tensor, host))
    names = [o.name for o in model.graph.output]
    sinks = []
    for name in names:
        tensor = interp.getSessionOutput(session, name)
        shape = list(tensor.getShape())
        dtype = np.int32 if tensor.getDataType() == MNN.Halide_Type_Int else np.float32
        kind = MNN.Halide_Type_Int if dtype == np.int32 else MNN.Halide_Type_Float
        sinks.append((tensor, MNN.Tensor(shape, kind, np.zeros(shape, dtype), MNN.Tensor_DimensionType_Caffe)))

    def run():
        for tensor, host in feeds:
            tensor.copyFrom(host)
        interp.runSession(session)
        for tensor, host in sinks:
            tensor.copyToHostTensor(host)

    for _ in range(job["warmup"]):
        run()
    times = timed(run, job["samples"])
    os.makedirs(job["outputs"], exist_ok=True)
    for name, (_, host) in zip(names, sinks):
        np.save(os.path.join(job["outputs"], f"output.{name}.npy"), np.array(host.getNumpyData(), copy=True))
    with open(job["result"], "w") as f:
        json.dump({
            "engine": "mnn",
            "version": MNN.version(),
            "providers": ["CPU", "precision=normal"],
            "threads": job["threads"],
            "warmup": job["warmup"],
            "samples_ns": times,
        }, f)
    if job.get("serve"):
        serve(run)


if __name__ == "__main__":
    main()
