"""Writes ONNX's own node test cases (the `onnx` package's backend test cases, one operator
node per model) as files the conformance test reads without decoding TensorProto files.

Usage: python3 node_cases.py OUT

The cases come from `onnx.backend.test.case.node.collect_testcases()`, the generators from
which the ONNX repository writes `onnx/backend/test/data/node/*/` (the wheels on PyPI do not
ship that folder). The generators draw their inputs from numpy's global generator, which is
seeded with 0 first, so every run writes the same values.

For each case NAME, OUT/NAME/ holds `model.onnx`, `input_J.npy` for the J-th graph input and
`output_J.npy` for the J-th graph output (the first data set). An input that is not a numpy
array (or numpy scalar, or TensorProto) of an L0 dtype (float32, float16, int32, int8) is not written: the importer refuses such
an input, so the test never needs it. Expected outputs keep their dtype, except that BOOL
becomes int32 1 or 0 (the importer's form of ONNX booleans); an output that is not a numpy
array (a sequence, an optional) is not written. OUT/cases.json lists the cases in order:
{"onnx": VERSION, "cases": [{"name": NAME, "inputs": [DTYPE or null, ...], "outputs":
[DTYPE or null, ...]}, ...]}, where DTYPE is the numpy dtype of the array written and null
means nothing was written.
"""
import json
import os
import sys
import warnings

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.backend.test.case import node as node_cases

L0_INPUT_DTYPES = {np.dtype(t) for t in ("float32", "float16", "int32", "int8")}


def array(value):
    """A case's value as a numpy array (0-d for a scalar), or None for a sequence or optional."""
    if isinstance(value, onnx.TensorProto):
        return numpy_helper.to_array(value)
    if isinstance(value, (np.ndarray, np.generic)):
        return np.array(value, order="C")
    return None


def save_input(path, value):
    value = array(value)
    if value is None or value.dtype not in L0_INPUT_DTYPES:
        return None
    np.save(path, value)
    return str(value.dtype)


def save_output(path, value):
    value = array(value)
    if value is None or value.dtype.kind not in "biuf":
        return None
    if value.dtype == np.bool_:
        value = value.astype(np.int32)
    np.save(path, value)
    return str(value.dtype)


def main():
    out = sys.argv[1]
    np.random.seed(0)
    with warnings.catch_warnings():
        # Some generators compute overflowing casts and divisions by zero on purpose.
        warnings.simplefilter("ignore")
        cases = node_cases.collect_testcases()
    listed = []
    for case in sorted(cases, key=lambda c: c.name):
        d = os.path.join(out, case.name)
        os.makedirs(d)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        inputs, outputs = case.data_sets[0]
        listed.append(
            {
                "name": case.name,
                "inputs": [save_input(os.path.join(d, f"input_{j}.npy"), v) for j, v in enumerate(inputs)],
                "outputs": [save_output(os.path.join(d, f"output_{j}.npy"), v) for j, v in enumerate(outputs)],
            }
        )
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump({"onnx": onnx.__version__, "cases": listed}, f)


if __name__ == "__main__":
    main()
