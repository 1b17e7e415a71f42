"""PyTorch twin of the task `channel_shuffle_shufflenetv2`.

ShuffleNetV2 x1.0 (NanoDet-m backbone), stage2.1 (channel_shuffle(out, 2)):
torchvision.models.shufflenetv2.channel_shuffle (torchvision.models.shufflenet_v2_x1_0).
Channel shuffle with 2 groups (view, transpose, flatten) of 116 channels at 40x40.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, x):
        b, c, h, w = x.size()
        x = x.view(b, self.groups, c // self.groups, h, w)
        x = torch.transpose(x, 1, 2).contiguous()
        return x.view(b, -1, h, w)


def get_inputs():
    return [
        torch.empty(1, 116, 40, 40).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [2]
