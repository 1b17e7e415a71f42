"""PyTorch twin of the task `batch_norm_pointpillars_bev`.

PointPillars (KITTI), backbone_2d.blocks.0.2: torch.nn.BatchNorm2d(64, eps=1e-3) (inference)
(open-mmlab/OpenPCDet pcdet/models/backbones_2d/base_bev_backbone.py).
Inference-mode batch norm after the first stride-2 convolution of the BEV backbone: 64 channels
on the 248x216 half-resolution pseudo-image (KITTI grid 496x432, 0.16 m pillars).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels, eps):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels, eps=eps)

    def forward(self, x):
        return self.bn(x)


def get_inputs():
    return [
        torch.empty(1, 64, 248, 216).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [64, 0.001]
