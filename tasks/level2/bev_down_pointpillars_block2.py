"""PyTorch twin of the task `bev_down_pointpillars_block2`.

PointPillars (KITTI), backbone_2d.blocks.2.0-6: ZeroPad2d(1) + Conv2d(128, 256, 3, stride=2,
bias=False) + BatchNorm2d(eps=1e-3, momentum=0.01) + ReLU, then Conv2d(256, 256, 3, padding=1) +
BatchNorm2d + ReLU (open-mmlab/OpenPCDet pcdet/models/backbones_2d/base_bev_backbone.py).
The first two layers of the BEV backbone's third block: zero padding, stride-2 3x3 convolution
128 -> 256, batch norm (eps 1e-3), ReLU, 3x3 convolution 256 -> 256, batch norm, ReLU; on the
20x20 output of the second block for an 80x80-pillar grid (KITTI's full grid is 496x432).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pad = nn.ZeroPad2d(1)
        self.conv0_conv = nn.Conv2d(128, 256, 3, stride=2, bias=False)
        self.conv0_bn = nn.BatchNorm2d(256, eps=0.001, momentum=0.01)
        self.conv1_conv = nn.Conv2d(256, 256, 3, padding=1, bias=False)
        self.conv1_bn = nn.BatchNorm2d(256, eps=0.001, momentum=0.01)
        self.relu = nn.ReLU()

    def forward(self, x):
        x = self.pad(x)
        x = self.relu(self.conv0_bn(self.conv0_conv(x)))
        x = self.relu(self.conv1_bn(self.conv1_conv(x)))
        return x


def get_inputs():
    return [
        torch.empty(1, 128, 20, 20).uniform_(0, 2),
    ]


def get_init_inputs():
    return []
