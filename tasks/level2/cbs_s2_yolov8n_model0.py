"""PyTorch twin of the task `cbs_s2_yolov8n_model0`.

YOLOv8n, model.0 (Conv): Conv(3, 16, 3, 2): Conv2d(3, 16, 3, 2, 1, bias=False) +
BatchNorm2d(eps=0.001) + SiLU (ultralytics/ultralytics ultralytics/nn/modules/conv.py).
The stem of YOLOv8n on a 320x320 image: 3x3 stride-2 convolution 3 -> 16, batch norm, SiLU:
3x320x320 -> 16x160x160. Inputs are [0, 1] images.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(16, eps=0.001)

    def forward(self, x):
        conv = self.conv(x)
        bn = self.bn(conv)
        act = F.silu(bn)
        return act


def get_inputs():
    return [
        torch.empty(1, 3, 320, 320).uniform_(0, 1),
    ]


def get_init_inputs():
    return []
