"""PyTorch twin of the task `bev_deblocks_pointpillars`.

PointPillars (KITTI), backbone_2d.deblocks.0-2 + torch.cat: ConvTranspose2d(64, 128, 1,
stride=1) / (128, 128, 2, stride=2) / (256, 128, 4, stride=4), bias=False, each +
BatchNorm2d(eps=1e-3, momentum=0.01) + ReLU, concatenated (open-mmlab/OpenPCDet
pcdet/models/backbones_2d/base_bev_backbone.py).
The upsampling half of the BEV backbone: the three block outputs (64 channels at 40x40, 128 at
20x20, 256 at 10x10) go through transposed convolutions with kernel = stride 1, 2 and 4 to 128
channels each at 40x40, batch norm and ReLU, and are concatenated to 384 channels. The grid is
reduced from KITTI's 248x216 to 40x40 for the reference interpreter.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.strides = (1, 2, 4)
        self.deblock0_weight = nn.Parameter(torch.empty(64, 128, 1, 1))
        self.deblock1_weight = nn.Parameter(torch.empty(128, 128, 2, 2))
        self.deblock2_weight = nn.Parameter(torch.empty(256, 128, 4, 4))
        self.deblock0_bn = nn.BatchNorm2d(128, eps=0.001, momentum=0.01)
        self.deblock1_bn = nn.BatchNorm2d(128, eps=0.001, momentum=0.01)
        self.deblock2_bn = nn.BatchNorm2d(128, eps=0.001, momentum=0.01)

    def forward(self, x0, x1, x2):
        ups = []
        for i, x in enumerate((x0, x1, x2)):
            # deblocks[i]: ConvTranspose2d(kernel_size=stride, stride=stride, bias=False), BatchNorm2d, ReLU
            x = F.conv_transpose2d(x, getattr(self, f"deblock{i}_weight"), stride=self.strides[i])
            ups.append(torch.relu(getattr(self, f"deblock{i}_bn")(x)))
        return torch.cat(ups, dim=1)


def get_inputs():
    return [
        torch.empty(1, 64, 40, 40).uniform_(0, 2),
        torch.empty(1, 128, 20, 20).uniform_(0, 2),
        torch.empty(1, 256, 10, 10).uniform_(0, 2),
    ]


def get_init_inputs():
    return []
