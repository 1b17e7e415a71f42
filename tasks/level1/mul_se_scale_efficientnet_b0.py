"""PyTorch twin of the task `mul_se_scale_efficientnet_b0`.

EfficientNet-B0, features.2.0.block.2 (SqueezeExcitation: scale * input): torch.Tensor.__mul__
(torchvision.models.efficientnet_b0).
Squeeze-and-excitation rescaling: 96 expanded channels at 56x56 times one sigmoid gate per
channel, broadcast over the image.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, scale):
        return scale * x


def get_inputs():
    return [
        torch.empty(1, 96, 56, 56).uniform_(-1, 1),
        torch.empty(1, 96, 1, 1).uniform_(0, 1),
    ]


def get_init_inputs():
    return []
