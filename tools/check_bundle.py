#!/usr/bin/env python3
"""Run reference inputs through an exported bundle and compare with expected outputs.

Usage (with the project's virtual environment):

    $MARTIAN_ZERO_VENV/bin/python tools/check_bundle.py BUNDLE_DIR INPUTS EXPECTED [EXPECTED_AUX]

INPUTS holds N encoded positions as raw little-endian float32
[N, planes, rows, cols] (model.json `input.shape`); EXPECTED holds the Rust
network's outputs for them, raw float32 [N, NUM_ACTIONS + 3]. The inputs go
through the TorchScript module (model.pt, torch.jit.load), the ONNX model
(model.onnx, onnxruntime) and the network rebuilt in PyTorch from model.json +
model.safetensors (tools/export_onnx.py), each once as one batch of N and once
position by position (batch 1). Prints one JSON object with the largest
absolute difference of each against EXPECTED; the caller decides the tolerance.
With EXPECTED_AUX (raw float32 [N, k]: the auxiliary heads the network has, in
the order moves_left, score), the rebuilt network's auxiliary heads are compared
with it too (key "auxiliary"); they are not outputs of model.pt or model.onnx.
"""

import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_onnx import load_network  # noqa: E402


def main():
    if len(sys.argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    bundle, inputs_path, expected_path = sys.argv[1:4]
    net, desc = load_network(bundle)
    shape = list(desc["input"]["shape"])
    width = desc["policy"]["size"] + 3
    x = np.fromfile(inputs_path, dtype="<f4").reshape([-1] + shape)
    want = np.fromfile(expected_path, dtype="<f4").reshape([-1, width])
    if x.shape[0] != want.shape[0]:
        raise ValueError(f"{x.shape[0]} inputs but {want.shape[0]} expected outputs")

    import onnxruntime as ort

    ts = torch.jit.load(os.path.join(bundle, desc["files"]["torchscript"]))
    sess = ort.InferenceSession(os.path.join(bundle, desc["files"]["onnx"]), providers=["CPUExecutionProvider"])
    runners = {
        "torchscript": lambda b: ts(torch.from_numpy(b)).numpy(),
        "onnx": lambda b: sess.run(["output"], {"input": b})[0],
        "pytorch": lambda b: net(torch.from_numpy(b)).numpy(),
    }
    result = {"positions": int(x.shape[0])}
    with torch.no_grad():
        for name, run in runners.items():
            whole = run(np.ascontiguousarray(x))
            single = np.concatenate([run(np.ascontiguousarray(x[i : i + 1])) for i in range(x.shape[0])])
            if whole.shape != want.shape or single.shape != want.shape:
                raise ValueError(f"{name}: output shape {whole.shape} / {single.shape}, expected {want.shape}")
            result[name] = float(max(np.abs(whole - want).max(), np.abs(single - want).max()))
        if len(sys.argv) == 5:
            aux = net.auxiliary(torch.from_numpy(np.ascontiguousarray(x)))
            got = np.stack([aux[k].numpy() for k in ("moves_left", "score") if k in aux], axis=1)
            want_aux = np.fromfile(sys.argv[4], dtype="<f4").reshape(got.shape)
            result["auxiliary"] = float(np.abs(got - want_aux).max())
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
