"""PyTorch twin of the task `conv2d_int8_dw3x3_mobilenetv2`.

MobileNetV2, features.1.conv.0.0, as a quantized kernel computes it
(torchvision.models.quantization): the depthwise 3x3 convolution (32 channels at 112x112) with
int8 activations and weights, an int32 bias and int32 sums. The sums are exact in float64 (9
products of magnitude at most 2^14, and the bias), which is how the twin computes them: torch's
CPU convolution has no integer kernel.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding, groups):
        super().__init__()
        self.padding = padding
        self.groups = groups
        self.register_buffer(
            "weight", torch.zeros(out_channels, in_channels // groups, kernel_size, kernel_size, dtype=torch.int8)
        )
        self.register_buffer("bias", torch.zeros(out_channels, dtype=torch.int32))

    def forward(self, x):
        y = F.conv2d(x.double(), self.weight.double(), self.bias.double(), padding=self.padding, groups=self.groups)
        return y.to(torch.int32)


def get_inputs():
    return [
        torch.randint(-128, 128, (1, 32, 112, 112), dtype=torch.int8),
    ]


def get_init_inputs():
    return [32, 32, 3, 1, 32]
