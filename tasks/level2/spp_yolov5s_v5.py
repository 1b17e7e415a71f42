"""PyTorch twin of the task `spp_yolov5s_v5`.

YOLOv5s (v5.0), model.8 (SPP): SPP(512, 512, k=(5, 9, 13)): cv1 = Conv(512, 256, 1),
MaxPool2d(5/9/13, stride=1, padding=k//2) in parallel, cv2 = Conv(1024, 512, 1)
(ultralytics/yolov5 models/common.py).
Spatial pyramid pooling as YOLOv5 v5.0 (and YOLOv4) wrote it, before SPPF replaced it, on a
320x320 image (512 channels at 10x10): 1x1 CBS 512 -> 256, three parallel stride-1 max pools of
5x5, 9x9 and 13x13, concatenation with the unpooled map (1024 channels) and a 1x1 CBS back to
512.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.SiLU()
        self.cv1_conv = nn.Conv2d(512, 256, 1, bias=False)
        self.cv1_bn = nn.BatchNorm2d(256, eps=0.001, momentum=0.03)
        self.m5 = nn.MaxPool2d(kernel_size=5, stride=1, padding=2)
        self.m9 = nn.MaxPool2d(kernel_size=9, stride=1, padding=4)
        self.m13 = nn.MaxPool2d(kernel_size=13, stride=1, padding=6)
        self.cv2_conv = nn.Conv2d(1024, 512, 1, bias=False)
        self.cv2_bn = nn.BatchNorm2d(512, eps=0.001, momentum=0.03)

    def forward(self, x):
        x = self.act(self.cv1_bn(self.cv1_conv(x)))
        y = torch.cat([x] + [m(x) for m in (self.m5, self.m9, self.m13)], 1)
        return self.act(self.cv2_bn(self.cv2_conv(y)))


def get_inputs():
    return [
        torch.empty(1, 512, 10, 10).uniform_(-0.25, 3),
    ]


def get_init_inputs():
    return []
