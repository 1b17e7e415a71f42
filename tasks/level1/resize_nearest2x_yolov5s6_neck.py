"""PyTorch twin of the task `resize_nearest2x_yolov5s6_neck`.

YOLOv5s6 (P3-P6 outputs, 1280x1280), model.21: torch.nn.Upsample(None, 2, 'nearest')
(ultralytics/yolov5 models/hub/yolov5s6.yaml).
The last top-down upsampling of the PANet neck: 128 channels of the stride-16 map, 80x80 -> 160x160
for a 1280x1280 image, nearest neighbour (each pixel copied to a 2x2 block); the input comes from a
SiLU convolution.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Upsample(None, 2, "nearest")

    def forward(self, x):
        return self.up(x)


def get_inputs():
    return [
        torch.empty(1, 128, 80, 80).uniform_(-0.25, 2),
    ]


def get_init_inputs():
    return []
