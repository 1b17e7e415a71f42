"""Runs ONNX models in onnxruntime (CPU) on inputs stored as .npy files.

Reads a JSON list of jobs on stdin: [{"model": PATH, "inputs": DIR, "outputs": DIR}, ...].
For each job, every model input NAME is read from DIR/input.NAME.npy and every model output is
written to OUTPUTS/output.NAME.npy. Prints one JSON line: {"onnxruntime": VERSION}. One process
runs every job, so onnxruntime is imported once. Exits 1 with a message on the first failure.
"""
import json
import os
import sys

import numpy as np
import onnxruntime as ort


def main():
    jobs = json.load(sys.stdin)
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    for job in jobs:
        try:
            sess = ort.InferenceSession(job["model"], sess_options=opts, providers=["CPUExecutionProvider"])
            feed = {i.name: np.load(os.path.join(job["inputs"], f"input.{i.name}.npy")) for i in sess.get_inputs()}
            names = [o.name for o in sess.get_outputs()]
            os.makedirs(job["outputs"], exist_ok=True)
            for name, value in zip(names, sess.run(names, feed)):
                np.save(os.path.join(job["outputs"], f"output.{name}.npy"), np.ascontiguousarray(value))
        except Exception as e:  # report which model failed, then stop
            print(f"onnxruntime failed on {job['model']}: {e}", file=sys.stderr)
            sys.exit(1)
    print(json.dumps({"onnxruntime": ort.__version__}))


if __name__ == "__main__":
    main()
