"""PyTorch twin of the task `transpose_nhwc_to_nchw_convnext_tiny`.

ConvNeXt-Tiny, features.1.0.block.6: torchvision.ops.misc.Permute([0, 3, 1, 2])
(torchvision.models.convnext_tiny).
Layout change NHWC -> NCHW back to the block's residual layout (56x56x96).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.permute(x, [0, 3, 1, 2])


def get_inputs():
    return [
        torch.empty(1, 56, 56, 96).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
