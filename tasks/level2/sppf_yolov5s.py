"""PyTorch twin of the task `sppf_yolov5s`.

YOLOv5s (v6.0+), model.9 (SPPF): SPPF(512, 512, k=5): cv1 = Conv(512, 256, 1), 3x MaxPool2d(5,
1, 2), cv2 = Conv(1024, 512, 1) (ultralytics/yolov5 models/common.py).
Spatial pyramid pooling (fast) at the end of the YOLOv5s backbone on a 320x320 image (512
channels at 10x10): 1x1 CBS 512 -> 256, three chained 5x5 stride-1 max pools, concatenation of
the four maps (1024 channels) and a 1x1 CBS back to 512.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.SiLU()
        self.cv1_conv = nn.Conv2d(512, 256, 1, bias=False)
        self.cv1_bn = nn.BatchNorm2d(256, eps=0.001, momentum=0.03)
        self.m = nn.MaxPool2d(kernel_size=5, stride=1, padding=2)
        self.cv2_conv = nn.Conv2d(1024, 512, 1, bias=False)
        self.cv2_bn = nn.BatchNorm2d(512, eps=0.001, momentum=0.03)

    def forward(self, x):
        x = self.act(self.cv1_bn(self.cv1_conv(x)))
        y1 = self.m(x)
        y2 = self.m(y1)
        return self.act(self.cv2_bn(self.cv2_conv(torch.cat((x, y1, y2, self.m(y2)), 1))))


def get_inputs():
    return [
        torch.empty(1, 512, 10, 10).uniform_(-0.25, 3),
    ]


def get_init_inputs():
    return []
