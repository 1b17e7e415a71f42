"""PyTorch twin of the task `sppf_yolov5n`.

YOLOv5n, model.9 (SPPF): SPPF(256, 256, k=5): cv1 = Conv(256, 128, 1), 3x MaxPool2d(5, 1, 2),
cv2 = Conv(512, 256, 1) (ultralytics/yolov5 models/common.py).
The SPPF block of YOLOv5n (v6) on a 320x320 image: 1x1 CBS 256 -> 128, three chained 5x5
stride-1 max pools, concatenation of the four, 1x1 CBS 512 -> 256, at 10x10.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.cv1_conv = nn.Conv2d(256, 128, 1, bias=False)
        self.cv1_bn = nn.BatchNorm2d(128, eps=0.001)
        self.cv2_conv = nn.Conv2d(512, 256, 1, bias=False)
        self.cv2_bn = nn.BatchNorm2d(256, eps=0.001)

    def forward(self, x):
        cv1_conv = self.cv1_conv(x)
        cv1_bn = self.cv1_bn(cv1_conv)
        cv1_act = F.silu(cv1_bn)
        m0 = F.max_pool2d(cv1_act, 5, 1, 2)
        m1 = F.max_pool2d(m0, 5, 1, 2)
        m2 = F.max_pool2d(m1, 5, 1, 2)
        cat = torch.cat([cv1_act, m0, m1, m2], 1)
        cv2_conv = self.cv2_conv(cat)
        cv2_bn = self.cv2_bn(cv2_conv)
        cv2_act = F.silu(cv2_bn)
        return cv2_act


def get_inputs():
    return [
        torch.empty(1, 256, 10, 10).uniform_(-0.25, 3),
    ]


def get_init_inputs():
    return []
