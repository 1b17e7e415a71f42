"""PyTorch twin of the task `conv2d_1x1_yolov5s_detect_p3`.

YOLOv5s, model.24.m.0: torch.nn.Conv2d(128, 255, 1) (ultralytics/yolov5 models/yolo.py).
The stride-8 detection output convolution (128 -> 3 x 85 channels, with bias) on the 40x40 grid
of a 320x320 image.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                              dilation=dilation, groups=groups, bias=bias)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [
        torch.empty(1, 128, 40, 40).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [128, 255, 1, 1, 0, 1, 1, True]
