"""PyTorch twin of the task `fpn_topdown_yolov8n_p4`.

YOLOv8n, model.10-12 (Upsample, Concat, C2f): nn.Upsample(scale_factor=2, mode='nearest') +
Concat with model.6 + C2f(384, 128, n=1, shortcut=False) (ultralytics/ultralytics
ultralytics/nn/modules/block.py).
The first top-down step of the YOLOv8n neck on a 320x320 image: nearest 2x upsampling of the
SPPF output (256 channels, 10x10 -> 20x20), concatenation with the stride-16 backbone features
(128 channels), and a C2f block without shortcuts (1x1 CBS 384 -> 128, split, a bottleneck of
two 3x3 CBS, concatenation, 1x1 CBS 192 -> 128).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.upsample = nn.Upsample(scale_factor=2, mode="nearest")
        self.act = nn.SiLU()
        self.cv1_conv = nn.Conv2d(384, 128, 1, bias=False)
        self.cv1_bn = nn.BatchNorm2d(128, eps=0.001, momentum=0.03)
        self.m0_cv1_conv = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.m0_cv1_bn = nn.BatchNorm2d(64, eps=0.001, momentum=0.03)
        self.m0_cv2_conv = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.m0_cv2_bn = nn.BatchNorm2d(64, eps=0.001, momentum=0.03)
        self.cv2_conv = nn.Conv2d(192, 128, 1, bias=False)
        self.cv2_bn = nn.BatchNorm2d(128, eps=0.001, momentum=0.03)

    def forward(self, x, p4):
        def conv(name, v):
            return self.act(getattr(self, name + "_bn")(getattr(self, name + "_conv")(v)))

        x = torch.cat([self.upsample(x), p4], 1)
        y = list(conv("cv1", x).chunk(2, 1))
        y.append(conv("m0_cv2", conv("m0_cv1", y[-1])))  # Bottleneck(shortcut=False)
        return conv("cv2", torch.cat(y, 1))


def get_inputs():
    return [
        torch.empty(1, 256, 10, 10).uniform_(-0.25, 3),
        torch.empty(1, 128, 20, 20).uniform_(-0.25, 3),
    ]


def get_init_inputs():
    return []
