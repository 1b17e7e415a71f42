"""PyTorch twin of the task `fpn_topdown_yolov8n_p3`.

YOLOv8n, model.13-15 (Upsample, Concat, C2f): nn.Upsample(scale_factor=2, mode='nearest') +
Concat with model.4 + C2f(192, 64, n=1, shortcut=False) (ultralytics/ultralytics
ultralytics/nn/modules/block.py).
The second top-down step of the YOLOv8n neck on a 320x320 image: nearest 2x upsampling of the P4
neck features (128 channels, 20x20 -> 40x40), concatenation with the stride-8 backbone features
(64 channels), and a C2f block without shortcuts (1x1 CBS 192 -> 64, split, a bottleneck of two
3x3 CBS, concatenation, 1x1 CBS 96 -> 64); its output is the P3 detection input.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.cv1_conv = nn.Conv2d(192, 64, 1, bias=False)
        self.cv1_bn = nn.BatchNorm2d(64, eps=0.001)
        self.m0_cv1_conv = nn.Conv2d(32, 32, 3, padding=1, bias=False)
        self.m0_cv1_bn = nn.BatchNorm2d(32, eps=0.001)
        self.m0_cv2_conv = nn.Conv2d(32, 32, 3, padding=1, bias=False)
        self.m0_cv2_bn = nn.BatchNorm2d(32, eps=0.001)
        self.cv2_conv = nn.Conv2d(96, 64, 1, bias=False)
        self.cv2_bn = nn.BatchNorm2d(64, eps=0.001)

    def forward(self, x, p3):
        upsample = F.interpolate(x, scale_factor=2.0, mode="nearest")
        cat = torch.cat([upsample, p3], 1)
        cv1_conv = self.cv1_conv(cat)
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
        c2f_cat = torch.cat([y0, y1, m0_cv2_act], 1)
        cv2_conv = self.cv2_conv(c2f_cat)
        cv2_bn = self.cv2_bn(cv2_conv)
        cv2_act = F.silu(cv2_bn)
        return cv2_act


def get_inputs():
    return [
        torch.empty(1, 128, 20, 20).uniform_(-0.25, 3),
        torch.empty(1, 64, 40, 40).uniform_(-0.25, 3),
    ]


def get_init_inputs():
    return []
