"""PyTorch twin of the task `lraspp_head_upsample_mobilenetv3_large`.

LR-ASPP MobileNetV3-Large, classifier (LRASPPHead) + the final F.interpolate: torchvision
LRASPPHead(40, 960, 21, 128) + F.interpolate(size=input, mode='bilinear', align_corners=False)
(torchvision.models.segmentation.lraspp_mobilenet_v3_large).
The segmentation head of LR-ASPP on a 320x320 image: the 960-channel stride-16 features (20x20)
go through a 1x1 convolution with batch norm and ReLU, gated by a sigmoid of their pooled 1x1
projection, bilinearly upsampled to the 40x40 stride-8 features; class logits (21) of both are
added and bilinearly upsampled to 320x320.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.cbr_conv = nn.Conv2d(960, 128, 1, bias=False)
        self.cbr_bn = nn.BatchNorm2d(128)
        self.scale_conv = nn.Conv2d(960, 128, 1, bias=False)
        self.low_classifier = nn.Conv2d(40, 21, 1)
        self.high_classifier = nn.Conv2d(128, 21, 1)

    def forward(self, low, high):
        x = torch.relu(self.cbr_bn(self.cbr_conv(high)))
        s = torch.sigmoid(self.scale_conv(F.adaptive_avg_pool2d(high, 1)))
        x = x * s
        x = F.interpolate(x, size=low.shape[-2:], mode="bilinear", align_corners=False)
        out = self.low_classifier(low) + self.high_classifier(x)
        return F.interpolate(out, size=(320, 320), mode="bilinear", align_corners=False)


def get_inputs():
    return [
        torch.empty(1, 40, 40, 40).uniform_(-0.375, 3),
        torch.empty(1, 960, 20, 20).uniform_(-0.375, 3),
    ]


def get_init_inputs():
    return []
