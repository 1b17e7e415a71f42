"""Times one ONNX model in onnxruntime (CPU): warm-up runs, then timed samples.

Reads one JSON job on the first line of stdin (`serve.py`, prepended to this file, defines
`read_job`, `timed` and `serve`):
  {"model": PATH, "inputs": DIR, "outputs": DIR, "result": PATH,
   "warmup": N, "samples": N, "threads": T, "serve": BOOL}
Every model input NAME is read from INPUTS/input.NAME.npy. Each sample is one whole
`session.run_with_iobinding` (inputs and outputs bound once), timed with
time.perf_counter_ns. T = 0 lets onnxruntime choose. The outputs of the last timed run are
written to OUTPUTS/output.NAME.npy. Writes one JSON object to RESULT:
{"engine", "version", "providers", "threads", "warmup", "samples_ns"}. With "serve", then
answers timing requests (`serve.py`).
"""
import json
import os

import numpy as np
import onnxruntime as ort


def main():
    job = read_job()
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.intra_op_num_threads = job["threads"]
    sess = ort.InferenceSession(job["model"], sess_options=opts, providers=["CPUExecutionProvider"])
    feed = {i.name: np.load(os.path.join(job["inputs"], f"input.{i.name}.npy")) for i in sess.get_inputs()}
    # Inputs and outputs bound once: every run writes into the same output memory, as an
    # application that keeps its buffers does, instead of allocating (and faulting in) fresh
    # outputs each time. The outputs' shapes and types come from one plain run.
    binding = sess.io_binding()
    for name, value in feed.items():
        binding.bind_ortvalue_input(name, ort.OrtValue.ortvalue_from_numpy(value))
    outputs = []
    for o, value in zip(sess.get_outputs(), sess.run(None, feed)):
        out = ort.OrtValue.ortvalue_from_numpy(np.empty_like(np.asarray(value)))
        binding.bind_ortvalue_output(o.name, out)
        outputs.append((o.name, out))

    def run():
        sess.run_with_iobinding(binding)

    for _ in range(job["warmup"]):
        run()
    times = timed(run, job["samples"])
    os.makedirs(job["outputs"], exist_ok=True)
    for name, out in outputs:
        np.save(os.path.join(job["outputs"], f"output.{name}.npy"), np.ascontiguousarray(out.numpy()))
    with open(job["result"], "w") as f:
        json.dump({
            "engine": "onnxruntime",
            "version": ort.__version__,
            "providers": sess.get_providers(),
            "threads": job["threads"],
            "warmup": job["warmup"],
            "samples_ns": times,
        }, f)
    if job.get("serve"):
        serve(run)


if __name__ == "__main__":
    main()
