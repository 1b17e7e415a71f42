"""PyTorch twin of the task `transpose_nchw_to_nhwc_convnext_tiny`.

ConvNeXt-Tiny, features.1.0.block.1: torchvision.ops.misc.Permute([0, 2, 3, 1])
(torchvision.models.convnext_tiny).
Layout change NCHW -> NHWC of the 96x56x56 depthwise output, so LayerNorm and the linears act on
channels.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.permute(x, [0, 2, 3, 1])


def get_inputs():
    return [
        torch.empty(1, 96, 56, 56).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
