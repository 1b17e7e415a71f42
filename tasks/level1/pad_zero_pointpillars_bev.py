"""PyTorch twin of the task `pad_zero_pointpillars_bev`.

PointPillars (KITTI), backbone_2d.blocks.1.0: torch.nn.ZeroPad2d(1) (open-mmlab/OpenPCDet
pcdet/models/backbones_2d/base_bev_backbone.py).
Zero padding before the second stage's stride-2 convolution: 64 channels on the 248x216 BEV map
to 250x218.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ZeroPad2d(1)

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [
        torch.empty(1, 64, 248, 216).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
