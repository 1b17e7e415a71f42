"""PyTorch twin of the task `cbs_s2_yolov8n_model1`.

YOLOv8n, model.1 (Conv): ultralytics Conv(16, 32, 3, 2): Conv2d(bias=False) +
BatchNorm2d(eps=1e-3, momentum=0.03) + SiLU (ultralytics/ultralytics
ultralytics/nn/modules/conv.py).
The second downsampling CBS of the YOLOv8n backbone (3x3 stride 2, batch norm, SiLU) on a
320x320 input: 16x160x160 -> 32x80x80.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(16, 32, 3, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(32, eps=0.001, momentum=0.03)
        self.act = nn.SiLU()

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        return self.act(x)


def get_inputs():
    return [
        torch.empty(1, 16, 160, 160).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
