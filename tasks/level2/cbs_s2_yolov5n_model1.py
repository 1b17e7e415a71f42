"""PyTorch twin of the task `cbs_s2_yolov5n_model1`.

YOLOv5n, model.1 (Conv): Conv(16, 32, 3, 2): Conv2d(16, 32, 3, 2, 1, bias=False) +
BatchNorm2d(eps=0.001) + SiLU (ultralytics/yolov5 models/common.py).
The first downsampling convolution of YOLOv5n (v6) on a 320x320 image: 3x3 stride-2 convolution
16 -> 32 after the 6x6 stem, batch norm, SiLU: 16x160x160 -> 32x80x80.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(16, 32, 3, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(32, eps=0.001)

    def forward(self, x):
        conv = self.conv(x)
        bn = self.bn(conv)
        act = F.silu(bn)
        return act


def get_inputs():
    return [
        torch.empty(1, 16, 160, 160).uniform_(-0.25, 3),
    ]


def get_init_inputs():
    return []
