"""PyTorch twin of the task `chunk_channels_shufflenetv2`.

ShuffleNetV2 x1.0 (NanoDet-m backbone), stage2.1 (x1, x2 = x.chunk(2, dim=1)):
torch.Tensor.chunk (torchvision.models.shufflenet_v2_x1_0).
The channel split of a stride-1 ShuffleNetV2 unit: 116 channels at 40x40 (stride 8 of
NanoDet-m's 320x320 input) into two halves.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        x1, x2 = x.chunk(2, dim=1)
        return x1, x2


def get_inputs():
    return [
        torch.empty(1, 116, 40, 40).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
