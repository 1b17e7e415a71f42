"""PyTorch twin of the task `pan_bottomup_yolov8n_p5`.

YOLOv8n, model.19-21 (Conv, Concat, C2f): Conv(128, 128, 3, 2) + Concat with model.9 + C2f(384,
256, n=1, shortcut=False) (ultralytics/ultralytics ultralytics/nn/modules/block.py).
A bottom-up PAN step of the YOLOv8n neck on a 320x320 image: a 3x3 stride-2 CBS downsamples the
P4 output (128 channels, 20x20 -> 10x10), concatenation with the top-down features (256
channels), and a C2f block without shortcuts (384 -> 256); its output is the P5 detection input.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.down_conv = nn.Conv2d(128, 128, 3, stride=2, padding=1, bias=False)
        self.down_bn = nn.BatchNorm2d(128, eps=0.001)
        self.cv1_conv = nn.Conv2d(384, 256, 1, bias=False)
        self.cv1_bn = nn.BatchNorm2d(256, eps=0.001)
        self.m0_cv1_conv = nn.Conv2d(128, 128, 3, padding=1, bias=False)
        self.m0_cv1_bn = nn.BatchNorm2d(128, eps=0.001)
        self.m0_cv2_conv = nn.Conv2d(128, 128, 3, padding=1, bias=False)
        self.m0_cv2_bn = nn.BatchNorm2d(128, eps=0.001)
        self.cv2_conv = nn.Conv2d(384, 256, 1, bias=False)
        self.cv2_bn = nn.BatchNorm2d(256, eps=0.001)

    def forward(self, x, skip):
        down_conv = self.down_conv(x)
        down_bn = self.down_bn(down_conv)
        down_act = F.silu(down_bn)
        cat = torch.cat([down_act, skip], 1)
        cv1_conv = self.cv1_conv(cat)
        cv1_bn = self.cv1_bn(cv1_conv)
        cv1_act = F.silu(cv1_bn)
        y0 = cv1_act[:, 0:128]
        y1 = cv1_act[:, 128:256]
        m0_cv1_conv = self.m0_cv1_conv(y1)
        m0_cv1_bn = self.m0_cv1_bn(m0_cv1_conv)
        m0_cv1_act = F.silu(m0_cv1_bn)
        m0_cv2_conv = self.m0_cv2_conv(m0_cv1_act)
        m0_cv2_bn = self.m0_cv2_bn(m0_cv2_conv)
        m0_cv2_act = F.silu(m0_cv2_bn)
        c2f_cat = torch.cat([y0, y1, m0_cv2_act], 1)
        cv2_conv = self.cv2_conv(c2f_cat)
        cv2_bn = self.cv2_bn(cv2_conv)
        cv2_act = F.silu(cv2_bn)
        return cv2_act


def get_inputs():
    return [
        torch.empty(1, 128, 20, 20).uniform_(-0.25, 3),
        torch.empty(1, 256, 10, 10).uniform_(-0.25, 3),
    ]


def get_init_inputs():
    return []
