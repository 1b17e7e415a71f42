"""PyTorch twin of the task `dwsep_int8_mobilenetv1_blocks3`.

MobileNetV1 1.0, blocks.3.1 (timm mobilenetv1_100) in int8, as a QOperator export runs it: a
depthwise 3x3 and a pointwise QLinearConv, each with ReLU6 fused into the requantization.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class QConvReLU6(nn.Module):
    """An int8 convolution whose int32 bias has batch norm and the input zero point folded in,
    requantized as onnxruntime's QLinearConv does: the int32 sum times a float32 multiplier,
    rounded half to even, plus the output zero point -128, saturated to int8 (with the output
    scale 6/255 the saturation is the ReLU6). The sums are exact in float64, where the twin
    computes them (torch's CPU convolution has no integer kernel)."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, groups):
        super().__init__()
        self.padding = padding
        self.groups = groups
        self.register_buffer(
            "weight", torch.zeros(out_channels, in_channels // groups, kernel_size, kernel_size, dtype=torch.int8)
        )
        self.register_buffer("bias", torch.zeros(out_channels, dtype=torch.int32))
        self.register_buffer("multiplier", torch.ones(1, out_channels, 1, 1))

    def forward(self, x):
        acc = F.conv2d(x.double(), self.weight.double(), self.bias.double(), padding=self.padding, groups=self.groups)
        y = torch.round(acc.to(torch.float32) * self.multiplier.to(torch.float32)) - 128
        return y.clamp(-128, 127).to(torch.int8)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_dw = QConvReLU6(512, 512, 3, 1, 512)
        self.conv_pw = QConvReLU6(512, 512, 1, 0, 1)

    def forward(self, x):
        return self.conv_pw(self.conv_dw(x))


def get_inputs():
    return [
        torch.randint(-128, 128, (1, 512, 14, 14), dtype=torch.int8),
    ]


def get_init_inputs():
    return []
