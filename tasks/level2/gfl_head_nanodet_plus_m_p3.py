"""PyTorch twin of the task `gfl_head_nanodet_plus_m_p3`.

NanoDet-Plus-m, head (stride-8 level): NanoDetPlusHead: cls_convs[0] (2x DepthwiseConvModule(96,
96, 5), BN, LeakyReLU) + gfl_cls[0] Conv2d(96, 112, 1), flatten(2).permute(0, 2, 1)
(RangiLyu/nanodet nanodet/model/head/nanodet_plus_head.py).
The stride-8 level of NanoDet-Plus-m's head on a 320x320 image (96 channels at 40x40): two
depthwise-separable 5x5 convolution modules (depthwise, batch norm, LeakyReLU(0.1), pointwise,
batch norm, LeakyReLU), then the 1x1 output convolution to 80 class scores + 4 x 8 distribution
bins, flattened and transposed to [1, 1600, 112].
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.LeakyReLU(negative_slope=0.1, inplace=True)
        self.conv0_depthwise = nn.Conv2d(96, 96, 5, padding=2, groups=96, bias=False)
        self.conv0_dwnorm = nn.BatchNorm2d(96)
        self.conv0_pointwise = nn.Conv2d(96, 96, 1, bias=False)
        self.conv0_pwnorm = nn.BatchNorm2d(96)
        self.conv1_depthwise = nn.Conv2d(96, 96, 5, padding=2, groups=96, bias=False)
        self.conv1_dwnorm = nn.BatchNorm2d(96)
        self.conv1_pointwise = nn.Conv2d(96, 96, 1, bias=False)
        self.conv1_pwnorm = nn.BatchNorm2d(96)
        self.gfl_cls = nn.Conv2d(96, 112, 1)

    def forward(self, x):
        feat = x
        for i in range(2):
            feat = self.act(getattr(self, f"conv{i}_dwnorm")(getattr(self, f"conv{i}_depthwise")(feat)))
            feat = self.act(getattr(self, f"conv{i}_pwnorm")(getattr(self, f"conv{i}_pointwise")(feat)))
        output = self.gfl_cls(feat)
        return output.flatten(start_dim=2).permute(0, 2, 1)


def get_inputs():
    return [
        torch.empty(1, 96, 40, 40).uniform_(-0.2, 2),
    ]


def get_init_inputs():
    return []
