"""PyTorch twin of the task `fpn_topdown_yolov5n_p4`.

YOLOv5n, model.10-13 (Conv, Upsample, Concat, C3): Conv(256, 128, 1) +
nn.Upsample(scale_factor=2, mode='nearest') + Concat with model.6 + C3(256, 128, n=1,
shortcut=False) (ultralytics/yolov5 models/common.py).
The first top-down step of the YOLOv5n neck on a 320x320 image: a 1x1 CBS on the SPPF output
(256 -> 128 channels at 10x10), nearest 2x upsampling to 20x20, concatenation with the
backbone's stride-16 features (128 channels), and a C3 block without shortcuts back to 128
channels. Outputs the C3 result and the 1x1 CBS output the bottom-up path reuses.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.SiLU()
        self.conv10_conv = nn.Conv2d(256, 128, 1, bias=False)
        self.conv10_bn = nn.BatchNorm2d(128, eps=0.001, momentum=0.03)
        self.upsample = nn.Upsample(scale_factor=2, mode="nearest")
        self.c3_cv1_conv = nn.Conv2d(256, 64, 1, bias=False)
        self.c3_cv1_bn = nn.BatchNorm2d(64, eps=0.001, momentum=0.03)
        self.c3_m0_cv1_conv = nn.Conv2d(64, 64, 1, bias=False)
        self.c3_m0_cv1_bn = nn.BatchNorm2d(64, eps=0.001, momentum=0.03)
        self.c3_m0_cv2_conv = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.c3_m0_cv2_bn = nn.BatchNorm2d(64, eps=0.001, momentum=0.03)
        self.c3_cv2_conv = nn.Conv2d(256, 64, 1, bias=False)
        self.c3_cv2_bn = nn.BatchNorm2d(64, eps=0.001, momentum=0.03)
        self.c3_cv3_conv = nn.Conv2d(128, 128, 1, bias=False)
        self.c3_cv3_bn = nn.BatchNorm2d(128, eps=0.001, momentum=0.03)

    def forward(self, x, p4):
        def conv(name, v):
            return self.act(getattr(self, name + "_bn")(getattr(self, name + "_conv")(v)))

        route = conv("conv10", x)
        x = torch.cat([self.upsample(route), p4], 1)
        m = conv("c3_m0_cv2", conv("c3_m0_cv1", conv("c3_cv1", x)))  # Bottleneck(shortcut=False)
        y = conv("c3_cv3", torch.cat((m, conv("c3_cv2", x)), 1))
        return y, route


def get_inputs():
    return [
        torch.empty(1, 256, 10, 10).uniform_(-0.25, 3),
        torch.empty(1, 128, 20, 20).uniform_(-0.25, 3),
    ]


def get_init_inputs():
    return []
