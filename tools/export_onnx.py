#!/usr/bin/env python3
"""Rebuild a MartianZero network in PyTorch from an exported bundle and write ONNX.

Usage (with the project's virtual environment, see scripts/setup):

    $MARTIAN_ZERO_VENV/bin/python tools/export_onnx.py BUNDLE_DIR... [--out FILE] [--opset N]

Several bundles are exported in turn by one process (one import of torch); the
exit status is 1 if any failed, after an `error:` line naming it.

BUNDLE_DIR is the output of `martian-zero export` (model.json + model.safetensors).
The network is rebuilt from model.json's `architecture` (the same layers as
model/src/resnet.rs), the weights are loaded from model.safetensors (tensor names
are the tch VarStore names, e.g. `stem.conv.weight`, `blocks.0.a.bn.running_mean`),
and `model.onnx` is written with input `input` [batch, planes, rows, cols] float32
and output `output` [batch, NUM_ACTIONS + 3] (policy logits, then win/draw/loss
logits), the batch axis dynamic. Auxiliary heads (moves left, score) are rebuilt
and loaded when the architecture has them (`PolicyValueNet.auxiliary`) but are
not ONNX outputs. The ONNX model is then checked with onnxruntime
against the rebuilt network (and against model.pt when present) on random inputs
at batch sizes 1 and 64; the script exits with status 1 if they differ by more
than 1e-4 relative to max(1, largest |output|).

Other programs can import `load_network(bundle_dir)` to get the PyTorch module.
"""

import argparse
import json
import os
import sys
import warnings

import torch
from torch import nn

TOLERANCE = 1e-4
FORMAT = "martian-zero-model"
FORMAT_VERSION = 1
GAMES = ("jetan", "martian-chess", "martian-chess-4p")

# CRC-64/ECMA-182 (polynomial 0x42F0E1EBA9EA3693, not reflected, init 0, no final
# xor; check value of b"123456789": 0x6C40DF5F0B497347), as `martian_model::checkpoint::
# weights_checksum` computes it for model.json's `weights_crc64`.
_CRC64_POLY = 0x42F0E1EBA9EA3693
_CRC64_MASK = (1 << 64) - 1


def _crc64_table():
    table = []
    for i in range(256):
        c = i << 56
        for _ in range(8):
            c = ((c << 1) ^ _CRC64_POLY) if c & (1 << 63) else (c << 1)
        table.append(c & _CRC64_MASK)
    return table


_CRC64_TABLE = _crc64_table()


def crc64_ecma182(data):
    """CRC-64/ECMA-182 of `data` (bytes), as an int."""
    crc, table, mask = 0, _CRC64_TABLE, _CRC64_MASK
    for b in data:
        crc = table[((crc >> 56) ^ b) & 0xFF] ^ ((crc << 8) & mask)
    return crc


class ConvBn(nn.Module):
    """conv (k x k, 'same' padding) [-> batch norm]; names conv.*, bn.*."""

    def __init__(self, cin, cout, k, batch_norm, eps):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, padding=k // 2, bias=not batch_norm)
        self.bn = nn.BatchNorm2d(cout, eps=eps) if batch_norm else None

    def forward(self, x):
        y = self.conv(x)
        return self.bn(y) if self.bn is not None else y


class ResBlock(nn.Module):
    """relu(a(x)) [+ global-pooling bias] -> b -> + x -> relu; names a.*, b.*, gpool.*."""

    def __init__(self, c, batch_norm, gpool, eps):
        super().__init__()
        self.a = ConvBn(c, c, 3, batch_norm, eps)
        self.b = ConvBn(c, c, 3, batch_norm, eps)
        self.gpool = nn.Linear(2 * c, c) if gpool else None

    def forward(self, x):
        y = torch.relu(self.a(x))
        if self.gpool is not None:
            mean = y.mean(dim=(2, 3))
            mx = y.flatten(2).max(dim=2)[0]
            y = y + self.gpool(torch.cat([mean, mx], 1))[:, :, None, None]
        return torch.relu(self.b(y) + x)


class PolicyHead(ConvBn):
    """conv1x1 [-> bn] -> relu -> flatten -> fc; names conv.*, bn.*, fc.*."""

    def __init__(self, c, pc, cells, num_actions, batch_norm, eps):
        super().__init__(c, pc, 1, batch_norm, eps)
        self.fc = nn.Linear(pc * cells, num_actions)

    def forward(self, x):
        return self.fc(torch.relu(super().forward(x)).flatten(1))


class ValueHead(nn.Module):
    """conv1x1 (bias) -> relu -> flatten -> fc1 -> relu -> fc2 (3 logits, or 1 output
    for the auxiliary moves-left and score heads; with `tanh`, the vector value head of
    free-for-all: one value per seat)."""

    def __init__(self, c, cells, hidden, outputs=3, tanh=False):
        super().__init__()
        self.conv = nn.Conv2d(c, 2, 1, bias=True)
        self.fc1 = nn.Linear(2 * cells, hidden)
        self.fc2 = nn.Linear(hidden, outputs)
        self.tanh = tanh

    def forward(self, x):
        v = torch.relu(self.conv(x)).flatten(1)
        out = self.fc2(torch.relu(self.fc1(v)))
        return torch.tanh(out) if self.tanh else out


class PolicyValueNet(nn.Module):
    """The network of model/src/resnet.rs; forward returns [batch, NUM_ACTIONS + 3]."""

    def __init__(self, desc):
        super().__init__()
        arch = desc["architecture"]
        planes, rows, cols = desc["input"]["shape"]
        cells = rows * cols
        c = arch["channels"]
        bn = arch["batch_norm"]
        eps = arch.get("batch_norm_eps", 1e-5)
        gpool = set(arch["global_pooling_blocks"])
        self.stem = ConvBn(planes, c, 3, bn, eps)
        self.blocks = nn.ModuleList(ResBlock(c, bn, i in gpool, eps) for i in range(arch["blocks"]))
        self.policy = PolicyHead(c, arch["policy_channels"], cells, desc["policy"]["size"], bn, eps)
        # architecture.value_players: the vector value head (free-for-all); absent = WDL.
        vector = arch.get("value_players")
        self.value = ValueHead(c, cells, arch["value_hidden"], vector or 3, tanh=bool(vector))
        # Auxiliary training heads (model.json architecture.moves_left_head /
        # score_head): loaded with the weights, not part of the output.
        self.moves_left = ValueHead(c, cells, arch["value_hidden"], 1) if arch.get("moves_left_head") else None
        self.score = ValueHead(c, cells, arch["value_hidden"], 1) if arch.get("score_head") else None

    def trunk(self, x):
        h = torch.relu(self.stem(x))
        for b in self.blocks:
            h = b(h)
        return h

    def forward(self, x):
        h = self.trunk(x)
        return torch.cat([self.policy(h), self.value(h)], 1)

    def auxiliary(self, x):
        """{name: [batch] tensor} of the auxiliary heads the network has: `moves_left`
        (plies left / 20) and `score` (final point difference for the side to move / 10)."""
        h = self.trunk(x)
        heads = {"moves_left": self.moves_left, "score": self.score}
        return {k: m(h)[:, 0] for k, m in heads.items() if m is not None}


def read_description(bundle):
    with open(os.path.join(bundle, "model.json"), encoding="utf-8") as f:
        desc = json.load(f)
    if desc.get("format") != FORMAT or desc.get("format_version") != FORMAT_VERSION:
        raise ValueError(
            f"{bundle}/model.json: format {desc.get('format')} version {desc.get('format_version')} "
            f"is not supported (expected {FORMAT} version {FORMAT_VERSION})"
        )
    if desc.get("game") not in GAMES:
        raise ValueError(f"{bundle}/model.json: game {desc.get('game')!r} is not one of {', '.join(GAMES)}")
    return desc


def check_weights_file(bundle, desc):
    """The weights file's CRC-64 against model.json's `weights_crc64` (bundles written
    before it was added have none and pass)."""
    path = os.path.join(bundle, desc["files"]["weights"])
    want = desc.get("weights_crc64")
    if want is None:
        return
    with open(path, "rb") as f:
        got = f"{crc64_ecma182(f.read()):016x}"
    if got != str(want).lower():
        raise ValueError(
            f"{path}: its CRC-64 is {got}, {bundle}/model.json records {want}: "
            "the file is corrupt or was changed after it was written"
        )


def load_network(bundle):
    """(PolicyValueNet in eval mode with the bundle's weights, description)."""
    from safetensors.torch import load_file

    desc = read_description(bundle)
    check_weights_file(bundle, desc)
    net = PolicyValueNet(desc)
    path = os.path.join(bundle, desc["files"]["weights"])
    try:
        weights = load_file(path)
    except Exception as e:  # safetensors raises its own error type for a damaged file
        raise ValueError(f"{path}: not a readable safetensors file: {e}") from e
    try:
        missing, unexpected = net.load_state_dict(weights, strict=False)
    except RuntimeError as e:  # a tensor of another shape
        raise ValueError(f"{path}: weights do not match the architecture: {e}") from e
    # tch's batch norm has no step counter; everything else must match exactly.
    missing = [k for k in missing if not k.endswith("num_batches_tracked")]
    if missing or unexpected:
        raise ValueError(f"weights do not match the architecture: missing {missing}, unexpected {unexpected}")
    net.eval()
    return net, desc


def random_inputs(desc, batch, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.rand([batch] + list(desc["input"]["shape"]), generator=g)


def max_diff(a, b):
    return float((torch.as_tensor(a) - torch.as_tensor(b)).abs().max())


def export_onnx(net, desc, out, opset):
    dummy = random_inputs(desc, 2, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            net,
            (dummy,),
            out,
            input_names=["input"],
            output_names=["output"],
            dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
            opset_version=opset,
            dynamo=False,
        )
    import onnx

    model = onnx.load(out)
    onnx.checker.check_model(model)
    meta = {
        "format": FORMAT,
        "game": desc["game"],
        "num_actions": str(desc["policy"]["size"]),
        "input_shape": json.dumps(desc["input"]["shape"]),
        "training_step": str(desc["training"]["step"]),
        "description": "see model.json and docs/model-format.md",
    }
    for k, v in meta.items():
        p = model.metadata_props.add()
        p.key, p.value = k, v
    onnx.save(model, out)


def check(net, desc, bundle, onnx_path):
    """Largest differences at batch sizes 1 and 64: ONNX vs PyTorch, TorchScript vs PyTorch,
    divided by max(1, largest |output|) (float32 rounding grows with the outputs)."""
    import onnxruntime as ort

    sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    pt_path = os.path.join(bundle, desc["files"]["torchscript"])
    ts = torch.jit.load(pt_path) if os.path.exists(pt_path) else None
    worst = {"onnx": 0.0, "torchscript": 0.0 if ts is not None else None}
    for batch in (1, 64):
        x = random_inputs(desc, batch, batch)
        with torch.no_grad():
            want = net(x)
            scale = max(1.0, float(want.abs().max()))
            if ts is not None:
                worst["torchscript"] = max(worst["torchscript"], max_diff(ts(x), want) / scale)
        got = sess.run(["output"], {"input": x.numpy()})[0]
        if list(got.shape) != [batch, desc["policy"]["size"] + desc["value"]["size"]]:
            raise ValueError(f"ONNX output shape {list(got.shape)} at batch {batch}")
        worst["onnx"] = max(worst["onnx"], max_diff(got, want) / scale)
    return worst


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bundle", nargs="+", help="directory written by `martian-zero export` (several: each in turn)")
    ap.add_argument("--out", help="ONNX file (default BUNDLE/model.onnx; only with one bundle)")
    ap.add_argument("--opset", type=int, default=17, help="ONNX opset (default 17)")
    args = ap.parse_args()
    if args.out and len(args.bundle) > 1:
        ap.error("--out takes one bundle")
    # Each bundle in turn (one start of Python and torch for all); the status is 1 if any failed.
    status = 0
    for bundle in args.bundle:
        status = max(status, export_bundle(bundle, args.out, args.opset, several=len(args.bundle) > 1))
    return status


def export_bundle(bundle, out, opset, several=False):
    """Writes and checks the ONNX file of `bundle` (at `out`, default in the bundle); returns
    the exit status (0, or 1 after one `error:` line, naming the bundle when `several`)."""

    def error(msg):
        if several and bundle not in msg:
            msg = f"{bundle}: {msg}"
        print(f"error: {msg}", file=sys.stderr)
        return 1

    try:
        net, desc = load_network(bundle)
    except (OSError, ValueError, KeyError) as e:
        return error(str(e))
    out = out or os.path.join(bundle, desc["files"]["onnx"])
    export_onnx(net, desc, out, opset)
    worst = check(net, desc, bundle, out)
    print(f"wrote {out} ({desc['game']}, {desc['policy']['size']} actions, step {desc['training']['step']})")
    for name, d in worst.items():
        if d is not None:
            print(f"  check vs rebuilt PyTorch network, batch 1 and 64: max |{name} - pytorch| / max(1, |output|) = {d:.3e}")
    bad = {k: d for k, d in worst.items() if d is not None and not d <= TOLERANCE}
    if bad:
        return error(f"outputs differ by more than {TOLERANCE}: {bad}")
    if os.path.abspath(out) == os.path.abspath(os.path.join(bundle, desc["files"]["onnx"])):
        crc = record_onnx_checksum(bundle, desc, out)
        print(f"  recorded its CRC-64 {crc} in model.json (onnx_crc64)")
    return 0


def record_onnx_checksum(bundle, desc, onnx_path):
    """Adds `onnx_crc64` (the ONNX file's CRC-64/ECMA-182, 16 hex digits) to the bundle's
    model.json (`desc`, as read), through a temporary file and a rename; returns it."""
    with open(onnx_path, "rb") as f:
        crc = f"{crc64_ecma182(f.read()):016x}"
    path = os.path.join(bundle, "model.json")
    desc = dict(desc, onnx_crc64=crc)
    tmp = os.path.join(bundle, f".tmp-{os.getpid()}-model.json")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(desc, f, indent=2)
    os.replace(tmp, path)
    return crc


if __name__ == "__main__":
    sys.exit(main())
