"""Exports torchvision MobileNetV2, ResNet-18 and SqueezeNet1.1 (random weights) to ONNX, and
checks an L0 import of them against PyTorch and onnxruntime. Needs torch, torchvision, onnx and
onnxruntime (a machine with PyTorch; nothing here downloads weights).

  torchvision_models.py export DIR [--full]
      Writes DIR/NAME.onnx for the small siblings (checked in as test data) and, with --full,
      for the full-size models. Weights are random: torch.manual_seed(0) before each model is
      built, then every BatchNorm gets random statistics and affine parameters (so the
      normalisation is exercised), all in eval mode.
  torchvision_models.py check DIR NAME...
      For each NAME: reads DIR/NAME/input.x.npy and DIR/NAME/output.y.npy (written by
      `ekb interp NAME.ekir --seed 0 --out DIR/NAME`), rebuilds the same PyTorch model, runs it
      and onnxruntime on that input, and prints one JSON line per model with the largest
      differences. Exits 1 if the interpreter and PyTorch differ by more than 1e-4 of the largest
      output magnitude.

Models (name: architecture, input):
  mobilenet_v2, resnet18, squeezenet1_1: torchvision's, 1000 classes, input 1x3x224x224.
  mobilenet_v2_w025: torchvision MobileNetV2(width_mult=0.25, num_classes=10), input 1x3x66x66.
  resnet18_w16: ResNet-18 (torchvision BasicBlock, layers [2,2,2,2]) with widths 16-32-64-128,
      10 classes, input 1x3x66x66.
  squeezenet1_1_half: SqueezeNet 1.1 (torchvision Fire modules, ceil-mode max pools) with every
      channel count halved, 10 classes, input 1x3x66x66 (66 makes the ceil-mode pools round up).
"""
import json
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torchvision
from torchvision.models.resnet import BasicBlock, ResNet
from torchvision.models.squeezenet import Fire

SMALL = 66
FULL = 224


class NarrowResNet18(ResNet):
    """ResNet-18 with the stem and the four stages at the given widths."""

    def __init__(self, widths=(16, 32, 64, 128), num_classes=10):
        nn.Module.__init__(self)
        self._norm_layer = nn.BatchNorm2d
        self.inplanes = widths[0]
        self.dilation = 1
        self.groups = 1
        self.base_width = 64
        self.conv1 = nn.Conv2d(3, widths[0], kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(BasicBlock, widths[0], 2)
        self.layer2 = self._make_layer(BasicBlock, widths[1], 2, stride=2)
        self.layer3 = self._make_layer(BasicBlock, widths[2], 2, stride=2)
        self.layer4 = self._make_layer(BasicBlock, widths[3], 2, stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(widths[3], num_classes)


class HalfSqueezeNet11(nn.Module):
    """torchvision's SqueezeNet 1.1 layout with every channel count halved."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 32, kernel_size=3, stride=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
            Fire(32, 8, 32, 32),
            Fire(64, 8, 32, 32),
            nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
            Fire(64, 16, 64, 64),
            Fire(128, 16, 64, 64),
            nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
            Fire(128, 24, 96, 96),
            Fire(192, 24, 96, 96),
            Fire(192, 32, 128, 128),
            Fire(256, 32, 128, 128),
        )
        self.classifier = nn.Sequential(
            nn.Dropout(p=0.5), nn.Conv2d(256, num_classes, kernel_size=1), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d((1, 1)),
        )

    def forward(self, x):
        return torch.flatten(self.classifier(self.features(x)), 1)


BUILDERS = {
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(weights=None), FULL),
    "resnet18": (lambda: torchvision.models.resnet18(weights=None), FULL),
    "squeezenet1_1": (lambda: torchvision.models.squeezenet1_1(weights=None), FULL),
    "mobilenet_v2_w025": (lambda: torchvision.models.mobilenet_v2(weights=None, width_mult=0.25, num_classes=10), SMALL),
    "resnet18_w16": (lambda: NarrowResNet18(), SMALL),
    "squeezenet1_1_half": (lambda: HalfSqueezeNet11(), SMALL),
}


def build(name):
    torch.manual_seed(0)
    make, size = BUILDERS[name]
    model = make()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.1, 0.1)
    return model.eval(), size


def export(out_dir, full):
    os.makedirs(out_dir, exist_ok=True)
    names = [n for n, (_, size) in BUILDERS.items() if full or size == SMALL]
    for name in names:
        model, size = build(name)
        path = os.path.join(out_dir, f"{name}.onnx")
        x = torch.zeros(1, 3, size, size)
        try:
            torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["y"], opset_version=17,
                              dynamo=False, do_constant_folding=True)
            exporter = "torchscript"
        except Exception as e:  # the TorchScript exporter may be gone from this torch: use dynamo
            print(f"TorchScript export failed ({e}); using the dynamo exporter", file=sys.stderr)
            torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["y"], opset_version=18,
                              dynamo=True, external_data=False)
            exporter = "dynamo"
        print(json.dumps({"exported": name, "bytes": os.path.getsize(path), "exporter": exporter,
                          "torch": torch.__version__, "torchvision": torchvision.__version__}))


def check(out_dir, names):
    import onnxruntime as ort
    ok = True
    for name in names:
        case = os.path.join(out_dir, name)
        x = np.load(os.path.join(case, "input.x.npy"))
        ekb = np.load(os.path.join(case, "output.y.npy")).astype(np.float64)
        model, _ = build(name)
        with torch.no_grad():
            ref = model(torch.from_numpy(x)).double().numpy()
        sess = ort.InferenceSession(os.path.join(out_dir, f"{name}.onnx"), providers=["CPUExecutionProvider"])
        onnx_out = sess.run(None, {"x": x})[0].astype(np.float64)
        scale = float(np.abs(ref).max())
        d_ekb = float(np.abs(ekb - ref).max())
        d_ort = float(np.abs(onnx_out - ref).max())
        good = d_ekb <= 1e-4 * scale
        ok &= good
        print(json.dumps({"model": name, "shape": list(ref.shape), "max_abs_output": scale,
                          "max_diff_interpreter_vs_torch": d_ekb, "max_diff_onnxruntime_vs_torch": d_ort,
                          "same_argmax": bool((ekb.argmax(-1) == ref.argmax(-1)).all()), "ok": good,
                          "torch_y": ref.reshape(-1).tolist() if ref.size <= 16 else None}))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "export":
        export(sys.argv[2], "--full" in sys.argv[3:])
    elif len(sys.argv) >= 4 and sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3:])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
