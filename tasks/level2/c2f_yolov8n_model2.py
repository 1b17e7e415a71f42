"""PyTorch twin of the task `c2f_yolov8n_model2`.

YOLOv8n, model.2 (C2f): C2f(32, 32, n=1, shortcut=True): cv1 = Conv(32, 32, 1), chunk(2, 1), 1x
Bottleneck(16, 16, k=(3, 3), e=1.0), cv2 = Conv(48, 32, 1) (ultralytics/ultralytics
ultralytics/nn/modules/block.py).
The first C2f block of YOLOv8n on a 320x320 image (32 channels at 80x80): a 1x1 CBS split in two
halves, one residual bottleneck of two 3x3 CBS on the second half, the three parts concatenated
and fused by a 1x1 CBS (batch norm eps 1e-3, SiLU).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.SiLU()
        self.cv1_conv = nn.Conv2d(32, 32, 1, bias=False)
        self.cv1_bn = nn.BatchNorm2d(32, eps=0.001, momentum=0.03)
        self.m0_cv1_conv = nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.m0_cv1_bn = nn.BatchNorm2d(16, eps=0.001, momentum=0.03)
        self.m0_cv2_conv = nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.m0_cv2_bn = nn.BatchNorm2d(16, eps=0.001, momentum=0.03)
        self.cv2_conv = nn.Conv2d(48, 32, 1, bias=False)
        self.cv2_bn = nn.BatchNorm2d(32, eps=0.001, momentum=0.03)

    def forward(self, x):
        def conv(name, v):
            return self.act(getattr(self, name + "_bn")(getattr(self, name + "_conv")(v)))

        y = list(conv("cv1", x).chunk(2, 1))
        for i in range(1):  # Bottleneck(c, c, shortcut=True, k=((3, 3), (3, 3)), e=1.0)
            y.append(y[-1] + conv(f"m{i}_cv2", conv(f"m{i}_cv1", y[-1])))
        return conv("cv2", torch.cat(y, 1))


def get_inputs():
    return [
        torch.empty(1, 32, 80, 80).uniform_(-0.25, 3),
    ]


def get_init_inputs():
    return []
