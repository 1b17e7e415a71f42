"""PyTorch twin of the task `quantize_relu6_mobilenetv2_features0`.

MobileNetV2, features.0: the QuantizeLinear an int8 export puts after the stem's ReLU6
(scale 2^-5, zero point -128), written as ONNX defines it (and as torch.quantize_per_tensor
computes it): x / scale in float32, rounded half to even, plus the zero point, saturated to the
int8 range.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, scale, zero_point):
        super().__init__()
        self.scale = scale
        self.zero_point = zero_point

    def forward(self, x):
        q = torch.round(x.to(torch.float32) / self.scale) + self.zero_point
        return q.clamp(-128, 127).to(torch.int8)


def get_inputs():
    return [
        torch.empty(1, 32, 112, 112).uniform_(0, 6),
    ]


def get_init_inputs():
    return [0.03125, -128]
