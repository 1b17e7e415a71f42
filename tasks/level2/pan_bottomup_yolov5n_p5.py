"""PyTorch twin of the task `pan_bottomup_yolov5n_p5`.

YOLOv5n, model.21-23 (Conv, Concat, C3): Conv(128, 128, 3, 2) + Concat with model.10 + C3(256,
256, n=1, shortcut=False) (ultralytics/yolov5 models/common.py).
A bottom-up PAN step of the YOLOv5n (v6) neck on a 320x320 image: a 3x3 stride-2 CBS downsamples
the P4 output (128 channels, 20x20 -> 10x10), concatenation with the lateral features (128
channels), and a C3 block without shortcuts (256 -> 256); its output is the P5 detection input.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.down_conv = nn.Conv2d(128, 128, 3, stride=2, padding=1, bias=False)
        self.down_bn = nn.BatchNorm2d(128, eps=0.001)
        self.cv1_conv = nn.Conv2d(256, 128, 1, bias=False)
        self.cv1_bn = nn.BatchNorm2d(128, eps=0.001)
        self.m0_cv1_conv = nn.Conv2d(128, 128, 1, bias=False)
        self.m0_cv1_bn = nn.BatchNorm2d(128, eps=0.001)
        self.m0_cv2_conv = nn.Conv2d(128, 128, 3, padding=1, bias=False)
        self.m0_cv2_bn = nn.BatchNorm2d(128, eps=0.001)
        self.cv2_conv = nn.Conv2d(256, 128, 1, bias=False)
        self.cv2_bn = nn.BatchNorm2d(128, eps=0.001)
        self.cv3_conv = nn.Conv2d(256, 256, 1, bias=False)
        self.cv3_bn = nn.BatchNorm2d(256, eps=0.001)

    def forward(self, x, skip):
        down_conv = self.down_conv(x)
        down_bn = self.down_bn(down_conv)
        down_act = F.silu(down_bn)
        cat = torch.cat([down_act, skip], 1)
        cv1_conv = self.cv1_conv(cat)
        cv1_bn = self.cv1_bn(cv1_conv)
        cv1_act = F.silu(cv1_bn)
        m0_cv1_conv = self.m0_cv1_conv(cv1_act)
        m0_cv1_bn = self.m0_cv1_bn(m0_cv1_conv)
        m0_cv1_act = F.silu(m0_cv1_bn)
        m0_cv2_conv = self.m0_cv2_conv(m0_cv1_act)
        m0_cv2_bn = self.m0_cv2_bn(m0_cv2_conv)
        m0_cv2_act = F.silu(m0_cv2_bn)
        cv2_conv = self.cv2_conv(cat)
        cv2_bn = self.cv2_bn(cv2_conv)
        cv2_act = F.silu(cv2_bn)
        c3_cat = torch.cat([m0_cv2_act, cv2_act], 1)
        cv3_conv = self.cv3_conv(c3_cat)
        cv3_bn = self.cv3_bn(cv3_conv)
        cv3_act = F.silu(cv3_bn)
        return cv3_act


def get_inputs():
    return [
        torch.empty(1, 128, 20, 20).uniform_(-0.25, 3),
        torch.empty(1, 128, 10, 10).uniform_(-0.25, 3),
    ]


def get_init_inputs():
    return []
