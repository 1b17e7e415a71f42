"""PyTorch twin of the task `max_pool2d_5x5_sppf_yolov5m`.

YOLOv5m, model.9.m (SPPF): torch.nn.MaxPool2d(5, stride=1, padding=2) (ultralytics/yolov5
models/common.py).
One 5x5 stride-1 max pooling of the SPPF block (384 channels, 20x20 at stride 32 of a 640x640
image); SPPF applies it three times in a row.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.MaxPool2d(kernel_size=5, stride=1, padding=2)

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [
        torch.empty(1, 384, 20, 20).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
