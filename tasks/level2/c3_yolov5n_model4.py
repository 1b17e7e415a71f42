"""PyTorch twin of the task `c3_yolov5n_model4`.

YOLOv5n, model.4 (C3): C3(64, 64, n=2): cv1, cv2 = Conv(64, 32, 1); m = 2x Bottleneck(32, 32,
e=1.0); cv3 = Conv(64, 64, 1) (ultralytics/yolov5 models/common.py).
The CSP bottleneck block of YOLOv5n's stride-8 stage on a 320x320 image (64 channels at 40x40):
two 1x1 CBS halves, one through two residual bottlenecks (1x1 CBS and 3x3 CBS, input added),
concatenated and fused by a 1x1 CBS. CBS is convolution, batch norm (eps 1e-3), SiLU.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.SiLU()
        self.cv1_conv = nn.Conv2d(64, 32, 1, bias=False)
        self.cv1_bn = nn.BatchNorm2d(32, eps=0.001, momentum=0.03)
        self.m0_cv1_conv = nn.Conv2d(32, 32, 1, bias=False)
        self.m0_cv1_bn = nn.BatchNorm2d(32, eps=0.001, momentum=0.03)
        self.m0_cv2_conv = nn.Conv2d(32, 32, 3, padding=1, bias=False)
        self.m0_cv2_bn = nn.BatchNorm2d(32, eps=0.001, momentum=0.03)
        self.m1_cv1_conv = nn.Conv2d(32, 32, 1, bias=False)
        self.m1_cv1_bn = nn.BatchNorm2d(32, eps=0.001, momentum=0.03)
        self.m1_cv2_conv = nn.Conv2d(32, 32, 3, padding=1, bias=False)
        self.m1_cv2_bn = nn.BatchNorm2d(32, eps=0.001, momentum=0.03)
        self.cv2_conv = nn.Conv2d(64, 32, 1, bias=False)
        self.cv2_bn = nn.BatchNorm2d(32, eps=0.001, momentum=0.03)
        self.cv3_conv = nn.Conv2d(64, 64, 1, bias=False)
        self.cv3_bn = nn.BatchNorm2d(64, eps=0.001, momentum=0.03)

    def forward(self, x):
        def conv(name, v):
            return self.act(getattr(self, name + "_bn")(getattr(self, name + "_conv")(v)))

        m = conv("cv1", x)
        for i in range(2):  # Bottleneck(c_, c_, shortcut=True, e=1.0)
            m = m + conv(f"m{i}_cv2", conv(f"m{i}_cv1", m))
        return conv("cv3", torch.cat((m, conv("cv2", x)), 1))


def get_inputs():
    return [
        torch.empty(1, 64, 40, 40).uniform_(-0.25, 3),
    ]


def get_init_inputs():
    return []
