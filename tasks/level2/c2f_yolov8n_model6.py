"""PyTorch twin of the task `c2f_yolov8n_model6`.

YOLOv8n, model.6 (C2f): C2f(128, 128, n=2, shortcut=True): cv1 = Conv(128, 128, 1), chunk(2, 1),
2x Bottleneck(64, 64, k=(3, 3), e=1.0), cv2 = Conv(256, 128, 1) (ultralytics/ultralytics
ultralytics/nn/modules/block.py).
The C2f block of YOLOv8n's stride-16 stage on a 320x320 image (128 channels at 20x20): 1x1 CBS,
split, two chained residual bottlenecks of 3x3 CBS (64 channels), concatenation of the four
parts (256 channels) and a 1x1 CBS back to 128.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.SiLU()
        self.cv1_conv = nn.Conv2d(128, 128, 1, bias=False)
        self.cv1_bn = nn.BatchNorm2d(128, eps=0.001, momentum=0.03)
        self.m0_cv1_conv = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.m0_cv1_bn = nn.BatchNorm2d(64, eps=0.001, momentum=0.03)
        self.m0_cv2_conv = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.m0_cv2_bn = nn.BatchNorm2d(64, eps=0.001, momentum=0.03)
        self.m1_cv1_conv = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.m1_cv1_bn = nn.BatchNorm2d(64, eps=0.001, momentum=0.03)
        self.m1_cv2_conv = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.m1_cv2_bn = nn.BatchNorm2d(64, eps=0.001, momentum=0.03)
        self.cv2_conv = nn.Conv2d(256, 128, 1, bias=False)
        self.cv2_bn = nn.BatchNorm2d(128, eps=0.001, momentum=0.03)

    def forward(self, x):
        def conv(name, v):
            return self.act(getattr(self, name + "_bn")(getattr(self, name + "_conv")(v)))

        y = list(conv("cv1", x).chunk(2, 1))
        for i in range(2):  # Bottleneck(c, c, shortcut=True, k=((3, 3), (3, 3)), e=1.0)
            y.append(y[-1] + conv(f"m{i}_cv2", conv(f"m{i}_cv1", y[-1])))
        return conv("cv2", torch.cat(y, 1))


def get_inputs():
    return [
        torch.empty(1, 128, 20, 20).uniform_(-0.25, 3),
    ]


def get_init_inputs():
    return []
