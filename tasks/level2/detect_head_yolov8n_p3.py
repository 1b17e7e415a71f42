"""PyTorch twin of the task `detect_head_yolov8n_p3`.

YOLOv8n, model.22 (Detect), stride-8 level: Detect: cv2[0] (Conv(64, 64, 3), Conv(64, 64, 3),
Conv2d(64, 64, 1)) and cv3[0] (Conv(64, 80, 3), Conv(80, 80, 3), Conv2d(80, 80, 1)),
concatenated (ultralytics/ultralytics ultralytics/nn/modules/head.py).
The stride-8 level of the YOLOv8n detection head on a 320x320 image (64 channels at 40x40): the
box branch (two 3x3 CBS to 64 channels, a 1x1 convolution to 4x16 distance bins) and the class
branch (two 3x3 CBS to 80 channels, a 1x1 convolution to 80 logits), concatenated to 144
channels.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.cv2_0_conv = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.cv2_0_bn = nn.BatchNorm2d(64, eps=0.001)
        self.cv2_1_conv = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.cv2_1_bn = nn.BatchNorm2d(64, eps=0.001)
        self.cv2_2 = nn.Conv2d(64, 64, 1)
        self.cv3_0_conv = nn.Conv2d(64, 80, 3, padding=1, bias=False)
        self.cv3_0_bn = nn.BatchNorm2d(80, eps=0.001)
        self.cv3_1_conv = nn.Conv2d(80, 80, 3, padding=1, bias=False)
        self.cv3_1_bn = nn.BatchNorm2d(80, eps=0.001)
        self.cv3_2 = nn.Conv2d(80, 80, 1)

    def forward(self, x):
        cv2_0_conv = self.cv2_0_conv(x)
        cv2_0_bn = self.cv2_0_bn(cv2_0_conv)
        cv2_0_act = F.silu(cv2_0_bn)
        cv2_1_conv = self.cv2_1_conv(cv2_0_act)
        cv2_1_bn = self.cv2_1_bn(cv2_1_conv)
        cv2_1_act = F.silu(cv2_1_bn)
        cv2_2 = self.cv2_2(cv2_1_act)
        cv3_0_conv = self.cv3_0_conv(x)
        cv3_0_bn = self.cv3_0_bn(cv3_0_conv)
        cv3_0_act = F.silu(cv3_0_bn)
        cv3_1_conv = self.cv3_1_conv(cv3_0_act)
        cv3_1_bn = self.cv3_1_bn(cv3_1_conv)
        cv3_1_act = F.silu(cv3_1_bn)
        cv3_2 = self.cv3_2(cv3_1_act)
        cat = torch.cat([cv2_2, cv3_2], 1)
        return cat


def get_inputs():
    return [
        torch.empty(1, 64, 40, 40).uniform_(-0.25, 3),
    ]


def get_init_inputs():
    return []
