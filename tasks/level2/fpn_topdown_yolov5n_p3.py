"""PyTorch twin of the task `fpn_topdown_yolov5n_p3`.

YOLOv5n, model.14-17 (Conv, Upsample, Concat, C3): Conv(128, 64, 1, 1) + nn.Upsample(None, 2,
'nearest') + Concat with model.4 + C3(128, 64, n=1, shortcut=False) (ultralytics/yolov5
models/common.py).
The second top-down step of the YOLOv5n (v6) neck on a 320x320 image: a 1x1 CBS 128 -> 64 on the
P4 neck features (20x20), nearest 2x upsampling to 40x40, concatenation with the stride-8
backbone features (64 channels), and a C3 block without shortcuts (two 1x1 CBS 128 -> 32, a
bottleneck of 1x1 and 3x3 CBS, concatenation, 1x1 CBS 64 -> 64); its output is the P3 detection
input.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lateral_conv = nn.Conv2d(128, 64, 1, bias=False)
        self.lateral_bn = nn.BatchNorm2d(64, eps=0.001)
        self.cv1_conv = nn.Conv2d(128, 32, 1, bias=False)
        self.cv1_bn = nn.BatchNorm2d(32, eps=0.001)
        self.m0_cv1_conv = nn.Conv2d(32, 32, 1, bias=False)
        self.m0_cv1_bn = nn.BatchNorm2d(32, eps=0.001)
        self.m0_cv2_conv = nn.Conv2d(32, 32, 3, padding=1, bias=False)
        self.m0_cv2_bn = nn.BatchNorm2d(32, eps=0.001)
        self.cv2_conv = nn.Conv2d(128, 32, 1, bias=False)
        self.cv2_bn = nn.BatchNorm2d(32, eps=0.001)
        self.cv3_conv = nn.Conv2d(64, 64, 1, bias=False)
        self.cv3_bn = nn.BatchNorm2d(64, eps=0.001)

    def forward(self, x, p3):
        lateral_conv = self.lateral_conv(x)
        lateral_bn = self.lateral_bn(lateral_conv)
        lateral_act = F.silu(lateral_bn)
        upsample = F.interpolate(lateral_act, scale_factor=2.0, mode="nearest")
        cat = torch.cat([upsample, p3], 1)
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
        torch.empty(1, 64, 40, 40).uniform_(-0.25, 3),
    ]


def get_init_inputs():
    return []
