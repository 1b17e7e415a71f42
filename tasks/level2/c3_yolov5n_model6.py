"""PyTorch twin of the task `c3_yolov5n_model6`.

YOLOv5n, model.6 (C3): C3(128, 128, n=3): cv1, cv2 = Conv(128, 64, 1); m = 3x Bottleneck(64, 64,
e=1.0); cv3 = Conv(128, 128, 1) (ultralytics/yolov5 models/common.py).
A C3 block of the YOLOv5n backbone on a 320x320 image with 3 residual bottlenecks, 128 channels
at 20x20.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.cv1_conv = nn.Conv2d(128, 64, 1, bias=False)
        self.cv1_bn = nn.BatchNorm2d(64, eps=0.001)
        self.m0_cv1_conv = nn.Conv2d(64, 64, 1, bias=False)
        self.m0_cv1_bn = nn.BatchNorm2d(64, eps=0.001)
        self.m0_cv2_conv = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.m0_cv2_bn = nn.BatchNorm2d(64, eps=0.001)
        self.m1_cv1_conv = nn.Conv2d(64, 64, 1, bias=False)
        self.m1_cv1_bn = nn.BatchNorm2d(64, eps=0.001)
        self.m1_cv2_conv = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.m1_cv2_bn = nn.BatchNorm2d(64, eps=0.001)
        self.m2_cv1_conv = nn.Conv2d(64, 64, 1, bias=False)
        self.m2_cv1_bn = nn.BatchNorm2d(64, eps=0.001)
        self.m2_cv2_conv = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.m2_cv2_bn = nn.BatchNorm2d(64, eps=0.001)
        self.cv2_conv = nn.Conv2d(128, 64, 1, bias=False)
        self.cv2_bn = nn.BatchNorm2d(64, eps=0.001)
        self.cv3_conv = nn.Conv2d(128, 128, 1, bias=False)
        self.cv3_bn = nn.BatchNorm2d(128, eps=0.001)

    def forward(self, x):
        cv1_conv = self.cv1_conv(x)
        cv1_bn = self.cv1_bn(cv1_conv)
        cv1_act = F.silu(cv1_bn)
        m0_cv1_conv = self.m0_cv1_conv(cv1_act)
        m0_cv1_bn = self.m0_cv1_bn(m0_cv1_conv)
        m0_cv1_act = F.silu(m0_cv1_bn)
        m0_cv2_conv = self.m0_cv2_conv(m0_cv1_act)
        m0_cv2_bn = self.m0_cv2_bn(m0_cv2_conv)
        m0_cv2_act = F.silu(m0_cv2_bn)
        m0_add = cv1_act + m0_cv2_act
        m1_cv1_conv = self.m1_cv1_conv(m0_add)
        m1_cv1_bn = self.m1_cv1_bn(m1_cv1_conv)
        m1_cv1_act = F.silu(m1_cv1_bn)
        m1_cv2_conv = self.m1_cv2_conv(m1_cv1_act)
        m1_cv2_bn = self.m1_cv2_bn(m1_cv2_conv)
        m1_cv2_act = F.silu(m1_cv2_bn)
        m1_add = m0_add + m1_cv2_act
        m2_cv1_conv = self.m2_cv1_conv(m1_add)
        m2_cv1_bn = self.m2_cv1_bn(m2_cv1_conv)
        m2_cv1_act = F.silu(m2_cv1_bn)
        m2_cv2_conv = self.m2_cv2_conv(m2_cv1_act)
        m2_cv2_bn = self.m2_cv2_bn(m2_cv2_conv)
        m2_cv2_act = F.silu(m2_cv2_bn)
        m2_add = m1_add + m2_cv2_act
        cv2_conv = self.cv2_conv(x)
        cv2_bn = self.cv2_bn(cv2_conv)
        cv2_act = F.silu(cv2_bn)
        c3_cat = torch.cat([m2_add, cv2_act], 1)
        cv3_conv = self.cv3_conv(c3_cat)
        cv3_bn = self.cv3_bn(cv3_conv)
        cv3_act = F.silu(cv3_bn)
        return cv3_act


def get_inputs():
    return [
        torch.empty(1, 128, 20, 20).uniform_(-0.25, 3),
    ]


def get_init_inputs():
    return []
