"""PyTorch twin of the task `conv2d_same_pad_tf_efficientnet_b0_stem`.

EfficientNet-B0 (TensorFlow port), conv_stem: timm Conv2dSame(3, 32, 3, stride=2) (timm
tf_efficientnet_b0).
TensorFlow 'SAME' padding of a stride-2 3x3 convolution on a 224x224 image: one row and column
of zeros at the bottom and right only (asymmetric padding), 3 -> 32 channels.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """timm's Conv2dSame: pad_same (computed padding, extra on the bottom/right), then a conv."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 32, 3, stride=2, padding=0, bias=False)

    def forward(self, x):
        return self.conv(F.pad(x, (0, 1, 0, 1)))


def get_inputs():
    return [
        torch.empty(1, 3, 224, 224).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
