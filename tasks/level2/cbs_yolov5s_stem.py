"""PyTorch twin of the task `cbs_yolov5s_stem`.

YOLOv5s (v6.0+), model.0 (Conv): ultralytics Conv(3, 32, 6, 2, 2): Conv2d(bias=False) +
BatchNorm2d(eps=1e-3, momentum=0.03) + SiLU (ultralytics/yolov5 models/common.py).
The CBS stem (6x6 stride-2 convolution, batch norm, SiLU) that replaced the Focus layer, on a
320x320 edge input scaled to [0, 1]: 3x320x320 -> 32x160x160.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 32, 6, stride=2, padding=2, bias=False)
        self.bn = nn.BatchNorm2d(32, eps=0.001, momentum=0.03)
        self.act = nn.SiLU()

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        return self.act(x)


def get_inputs():
    return [
        torch.empty(1, 3, 320, 320).uniform_(0, 1),
    ]


def get_init_inputs():
    return []
