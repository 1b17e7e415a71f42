"""Times one ONNX model in onnxruntime (CPU): warm-up runs, then timed samples.

Usage: bench_ort.py MODEL INPUT_DIR WARMUP SAMPLES THREADS
Every model input NAME is read from INPUT_DIR/input.NAME.npy. Each sample is one whole
`session.run`, timed with time.perf_counter_ns. THREADS = 0 lets onnxruntime choose. Prints one
JSON object: {"engine", "version", "providers", "threads", "warmup", "samples_ns"}.
"""
import json
import os
import sys
import time

import numpy as np
import onnxruntime as ort


def main():
    model, inputs, warmup, samples, threads = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.intra_op_num_threads = threads
    sess = ort.InferenceSession(model, sess_options=opts, providers=["CPUExecutionProvider"])
    feed = {i.name: np.load(os.path.join(inputs, f"input.{i.name}.npy")) for i in sess.get_inputs()}
    for _ in range(warmup):
        sess.run(None, feed)
    times = []
    for _ in range(samples):
        t0 = time.perf_counter_ns()
        sess.run(None, feed)
        times.append(time.perf_counter_ns() - t0)
    print(json.dumps({
        "engine": "onnxruntime",
        "version": ort.__version__,
        "providers": sess.get_providers(),
        "threads": threads,
        "warmup": warmup,
        "samples_ns": times,
    }))


if __name__ == "__main__":
    main()
