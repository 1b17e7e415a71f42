"""PyTorch twin of the task `c2f_yolov8s_model2`.

YOLOv8s, model.2 (C2f): C2f(64, 64, n=1, shortcut=True) (ultralytics/ultralytics
ultralytics/nn/modules/block.py).
The first C2f block of the YOLOv8s backbone on a 320x320 image: 1x1 CBS 64 -> 64, split, one
residual bottleneck of two 3x3 CBS (32 channels), concatenation, 1x1 CBS 96 -> 64, at 80x80.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.cv1_conv = nn.Conv2d(64, 64, 1, bias=False)
        self.cv1_bn = nn.BatchNorm2d(64, eps=0.001)
        self.m0_cv1_conv = nn.Conv2d(32, 32, 3, padding=1, bias=False)
        self.m0_cv1_bn = nn.BatchNorm2d(32, eps=0.001)
        self.m0_cv2_conv = nn.Conv2d(32, 32, 3, padding=1, bias=False)
        self.m0_cv2_bn = nn.BatchNorm2d(32, eps=0.001)
        self.cv2_conv = nn.Conv2d(96, 64, 1, bias=False)
        self.cv2_bn = nn.BatchNorm2d(64, eps=0.001)

    def forward(self, x):
        cv1_conv = self.cv1_conv(x)
        cv1_bn = self.cv1_bn(cv1_conv)
        cv1_act = F.silu(cv1_bn)
        y0 = cv1_act[:, 0:32]
        y1 = cv1_act[:, 32:64]
        m0_cv1_conv = self.m0_cv1_conv(y1)
        m0_cv1_bn = self.m0_cv1_bn(m0_cv1_conv)
        m0_cv1_act = F.silu(m0_cv1_bn)
        m0_cv2_conv = self.m0_cv2_conv(m0_cv1_act)
        m0_cv2_bn = self.m0_cv2_bn(m0_cv2_conv)
        m0_cv2_act = F.silu(m0_cv2_bn)
        m0_add = y1 + m0_cv2_act
        c2f_cat = torch.cat([y0, y1, m0_add], 1)
        cv2_conv = self.cv2_conv(c2f_cat)
        cv2_bn = self.cv2_bn(cv2_conv)
        cv2_act = F.silu(cv2_bn)
        return cv2_act


def get_inputs():
    return [
        torch.empty(1, 64, 80, 80).uniform_(-0.25, 3),
    ]


def get_init_inputs():
    return []
