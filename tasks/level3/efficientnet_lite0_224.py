"""PyTorch twin of the task `efficientnet_lite0_224`.

EfficientNet-Lite0, full model: timm EfficientNet (efficientnet_lite0): conv_stem, bn1 (ReLU6),
blocks.0-6 (depthwise separable and inverted residual blocks, ReLU6, no squeeze-excitation),
conv_head, bn2, global pool, classifier (timm efficientnet_lite0).
The whole EfficientNet-Lite0 (the EfficientNet variant for mobile and edge accelerators: ReLU6,
no squeeze-excitation, fixed stem and head) at 224x224, batch 1, inference form; the output is
the 1000 class logits.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_stem = nn.Conv2d(3, 32, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(32)
        self.blocks_0_0_conv_dw = nn.Conv2d(32, 32, 3, padding=1, groups=32, bias=False)
        self.blocks_0_0_bn1 = nn.BatchNorm2d(32)
        self.blocks_0_0_conv_pw = nn.Conv2d(32, 16, 1, bias=False)
        self.blocks_0_0_bn2 = nn.BatchNorm2d(16)
        self.blocks_1_0_conv_pw = nn.Conv2d(16, 96, 1, bias=False)
        self.blocks_1_0_bn1 = nn.BatchNorm2d(96)
        self.blocks_1_0_conv_dw = nn.Conv2d(96, 96, 3, stride=2, padding=1, groups=96, bias=False)
        self.blocks_1_0_bn2 = nn.BatchNorm2d(96)
        self.blocks_1_0_conv_pwl = nn.Conv2d(96, 24, 1, bias=False)
        self.blocks_1_0_bn3 = nn.BatchNorm2d(24)
        self.blocks_1_1_conv_pw = nn.Conv2d(24, 144, 1, bias=False)
        self.blocks_1_1_bn1 = nn.BatchNorm2d(144)
        self.blocks_1_1_conv_dw = nn.Conv2d(144, 144, 3, padding=1, groups=144, bias=False)
        self.blocks_1_1_bn2 = nn.BatchNorm2d(144)
        self.blocks_1_1_conv_pwl = nn.Conv2d(144, 24, 1, bias=False)
        self.blocks_1_1_bn3 = nn.BatchNorm2d(24)
        self.blocks_2_0_conv_pw = nn.Conv2d(24, 144, 1, bias=False)
        self.blocks_2_0_bn1 = nn.BatchNorm2d(144)
        self.blocks_2_0_conv_dw = nn.Conv2d(144, 144, 5, stride=2, padding=2, groups=144, bias=False)
        self.blocks_2_0_bn2 = nn.BatchNorm2d(144)
        self.blocks_2_0_conv_pwl = nn.Conv2d(144, 40, 1, bias=False)
        self.blocks_2_0_bn3 = nn.BatchNorm2d(40)
        self.blocks_2_1_conv_pw = nn.Conv2d(40, 240, 1, bias=False)
        self.blocks_2_1_bn1 = nn.BatchNorm2d(240)
        self.blocks_2_1_conv_dw = nn.Conv2d(240, 240, 5, padding=2, groups=240, bias=False)
        self.blocks_2_1_bn2 = nn.BatchNorm2d(240)
        self.blocks_2_1_conv_pwl = nn.Conv2d(240, 40, 1, bias=False)
        self.blocks_2_1_bn3 = nn.BatchNorm2d(40)
        self.blocks_3_0_conv_pw = nn.Conv2d(40, 240, 1, bias=False)
        self.blocks_3_0_bn1 = nn.BatchNorm2d(240)
        self.blocks_3_0_conv_dw = nn.Conv2d(240, 240, 3, stride=2, padding=1, groups=240, bias=False)
        self.blocks_3_0_bn2 = nn.BatchNorm2d(240)
        self.blocks_3_0_conv_pwl = nn.Conv2d(240, 80, 1, bias=False)
        self.blocks_3_0_bn3 = nn.BatchNorm2d(80)
        self.blocks_3_1_conv_pw = nn.Conv2d(80, 480, 1, bias=False)
        self.blocks_3_1_bn1 = nn.BatchNorm2d(480)
        self.blocks_3_1_conv_dw = nn.Conv2d(480, 480, 3, padding=1, groups=480, bias=False)
        self.blocks_3_1_bn2 = nn.BatchNorm2d(480)
        self.blocks_3_1_conv_pwl = nn.Conv2d(480, 80, 1, bias=False)
        self.blocks_3_1_bn3 = nn.BatchNorm2d(80)
        self.blocks_3_2_conv_pw = nn.Conv2d(80, 480, 1, bias=False)
        self.blocks_3_2_bn1 = nn.BatchNorm2d(480)
        self.blocks_3_2_conv_dw = nn.Conv2d(480, 480, 3, padding=1, groups=480, bias=False)
        self.blocks_3_2_bn2 = nn.BatchNorm2d(480)
        self.blocks_3_2_conv_pwl = nn.Conv2d(480, 80, 1, bias=False)
        self.blocks_3_2_bn3 = nn.BatchNorm2d(80)
        self.blocks_4_0_conv_pw = nn.Conv2d(80, 480, 1, bias=False)
        self.blocks_4_0_bn1 = nn.BatchNorm2d(480)
        self.blocks_4_0_conv_dw = nn.Conv2d(480, 480, 5, padding=2, groups=480, bias=False)
        self.blocks_4_0_bn2 = nn.BatchNorm2d(480)
        self.blocks_4_0_conv_pwl = nn.Conv2d(480, 112, 1, bias=False)
        self.blocks_4_0_bn3 = nn.BatchNorm2d(112)
        self.blocks_4_1_conv_pw = nn.Conv2d(112, 672, 1, bias=False)
        self.blocks_4_1_bn1 = nn.BatchNorm2d(672)
        self.blocks_4_1_conv_dw = nn.Conv2d(672, 672, 5, padding=2, groups=672, bias=False)
        self.blocks_4_1_bn2 = nn.BatchNorm2d(672)
        self.blocks_4_1_conv_pwl = nn.Conv2d(672, 112, 1, bias=False)
        self.blocks_4_1_bn3 = nn.BatchNorm2d(112)
        self.blocks_4_2_conv_pw = nn.Conv2d(112, 672, 1, bias=False)
        self.blocks_4_2_bn1 = nn.BatchNorm2d(672)
        self.blocks_4_2_conv_dw = nn.Conv2d(672, 672, 5, padding=2, groups=672, bias=False)
        self.blocks_4_2_bn2 = nn.BatchNorm2d(672)
        self.blocks_4_2_conv_pwl = nn.Conv2d(672, 112, 1, bias=False)
        self.blocks_4_2_bn3 = nn.BatchNorm2d(112)
        self.blocks_5_0_conv_pw = nn.Conv2d(112, 672, 1, bias=False)
        self.blocks_5_0_bn1 = nn.BatchNorm2d(672)
        self.blocks_5_0_conv_dw = nn.Conv2d(672, 672, 5, stride=2, padding=2, groups=672, bias=False)
        self.blocks_5_0_bn2 = nn.BatchNorm2d(672)
        self.blocks_5_0_conv_pwl = nn.Conv2d(672, 192, 1, bias=False)
        self.blocks_5_0_bn3 = nn.BatchNorm2d(192)
        self.blocks_5_1_conv_pw = nn.Conv2d(192, 1152, 1, bias=False)
        self.blocks_5_1_bn1 = nn.BatchNorm2d(1152)
        self.blocks_5_1_conv_dw = nn.Conv2d(1152, 1152, 5, padding=2, groups=1152, bias=False)
        self.blocks_5_1_bn2 = nn.BatchNorm2d(1152)
        self.blocks_5_1_conv_pwl = nn.Conv2d(1152, 192, 1, bias=False)
        self.blocks_5_1_bn3 = nn.BatchNorm2d(192)
        self.blocks_5_2_conv_pw = nn.Conv2d(192, 1152, 1, bias=False)
        self.blocks_5_2_bn1 = nn.BatchNorm2d(1152)
        self.blocks_5_2_conv_dw = nn.Conv2d(1152, 1152, 5, padding=2, groups=1152, bias=False)
        self.blocks_5_2_bn2 = nn.BatchNorm2d(1152)
        self.blocks_5_2_conv_pwl = nn.Conv2d(1152, 192, 1, bias=False)
        self.blocks_5_2_bn3 = nn.BatchNorm2d(192)
        self.blocks_5_3_conv_pw = nn.Conv2d(192, 1152, 1, bias=False)
        self.blocks_5_3_bn1 = nn.BatchNorm2d(1152)
        self.blocks_5_3_conv_dw = nn.Conv2d(1152, 1152, 5, padding=2, groups=1152, bias=False)
        self.blocks_5_3_bn2 = nn.BatchNorm2d(1152)
        self.blocks_5_3_conv_pwl = nn.Conv2d(1152, 192, 1, bias=False)
        self.blocks_5_3_bn3 = nn.BatchNorm2d(192)
        self.blocks_6_0_conv_pw = nn.Conv2d(192, 1152, 1, bias=False)
        self.blocks_6_0_bn1 = nn.BatchNorm2d(1152)
        self.blocks_6_0_conv_dw = nn.Conv2d(1152, 1152, 3, padding=1, groups=1152, bias=False)
        self.blocks_6_0_bn2 = nn.BatchNorm2d(1152)
        self.blocks_6_0_conv_pwl = nn.Conv2d(1152, 320, 1, bias=False)
        self.blocks_6_0_bn3 = nn.BatchNorm2d(320)
        self.conv_head = nn.Conv2d(320, 1280, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(1280)
        self.classifier = nn.Linear(1280, 1000)

    def forward(self, x):
        blocks_0_0_bn1 = self.blocks_0_0_bn1(self.blocks_0_0_conv_dw(F.relu6(self.bn1(self.conv_stem(x)))))
        blocks_0_0 = self.blocks_0_0_bn2(self.blocks_0_0_conv_pw(F.relu6(blocks_0_0_bn1)))
        blocks_1_0_conv_dw = self.blocks_1_0_conv_dw(F.relu6(self.blocks_1_0_bn1(self.blocks_1_0_conv_pw(blocks_0_0))))
        blocks_1_0_conv_pwl = self.blocks_1_0_conv_pwl(F.relu6(self.blocks_1_0_bn2(blocks_1_0_conv_dw)))
        blocks_1_0 = self.blocks_1_0_bn3(blocks_1_0_conv_pwl)
        blocks_1_1_conv_dw = self.blocks_1_1_conv_dw(F.relu6(self.blocks_1_1_bn1(self.blocks_1_1_conv_pw(blocks_1_0))))
        blocks_1_1_conv_pwl = self.blocks_1_1_conv_pwl(F.relu6(self.blocks_1_1_bn2(blocks_1_1_conv_dw)))
        blocks_1_1 = self.blocks_1_1_bn3(blocks_1_1_conv_pwl) + blocks_1_0
        blocks_2_0_conv_dw = self.blocks_2_0_conv_dw(F.relu6(self.blocks_2_0_bn1(self.blocks_2_0_conv_pw(blocks_1_1))))
        blocks_2_0_conv_pwl = self.blocks_2_0_conv_pwl(F.relu6(self.blocks_2_0_bn2(blocks_2_0_conv_dw)))
        blocks_2_0 = self.blocks_2_0_bn3(blocks_2_0_conv_pwl)
        blocks_2_1_conv_dw = self.blocks_2_1_conv_dw(F.relu6(self.blocks_2_1_bn1(self.blocks_2_1_conv_pw(blocks_2_0))))
        blocks_2_1_conv_pwl = self.blocks_2_1_conv_pwl(F.relu6(self.blocks_2_1_bn2(blocks_2_1_conv_dw)))
        blocks_2_1 = self.blocks_2_1_bn3(blocks_2_1_conv_pwl) + blocks_2_0
        blocks_3_0_conv_dw = self.blocks_3_0_conv_dw(F.relu6(self.blocks_3_0_bn1(self.blocks_3_0_conv_pw(blocks_2_1))))
        blocks_3_0_conv_pwl = self.blocks_3_0_conv_pwl(F.relu6(self.blocks_3_0_bn2(blocks_3_0_conv_dw)))
        blocks_3_0 = self.blocks_3_0_bn3(blocks_3_0_conv_pwl)
        blocks_3_1_conv_dw = self.blocks_3_1_conv_dw(F.relu6(self.blocks_3_1_bn1(self.blocks_3_1_conv_pw(blocks_3_0))))
        blocks_3_1_conv_pwl = self.blocks_3_1_conv_pwl(F.relu6(self.blocks_3_1_bn2(blocks_3_1_conv_dw)))
        blocks_3_1 = self.blocks_3_1_bn3(blocks_3_1_conv_pwl) + blocks_3_0
        blocks_3_2_conv_dw = self.blocks_3_2_conv_dw(F.relu6(self.blocks_3_2_bn1(self.blocks_3_2_conv_pw(blocks_3_1))))
        blocks_3_2_conv_pwl = self.blocks_3_2_conv_pwl(F.relu6(self.blocks_3_2_bn2(blocks_3_2_conv_dw)))
        blocks_3_2 = self.blocks_3_2_bn3(blocks_3_2_conv_pwl) + blocks_3_1
        blocks_4_0_conv_dw = self.blocks_4_0_conv_dw(F.relu6(self.blocks_4_0_bn1(self.blocks_4_0_conv_pw(blocks_3_2))))
        blocks_4_0_conv_pwl = self.blocks_4_0_conv_pwl(F.relu6(self.blocks_4_0_bn2(blocks_4_0_conv_dw)))
        blocks_4_0 = self.blocks_4_0_bn3(blocks_4_0_conv_pwl)
        blocks_4_1_conv_dw = self.blocks_4_1_conv_dw(F.relu6(self.blocks_4_1_bn1(self.blocks_4_1_conv_pw(blocks_4_0))))
        blocks_4_1_conv_pwl = self.blocks_4_1_conv_pwl(F.relu6(self.blocks_4_1_bn2(blocks_4_1_conv_dw)))
        blocks_4_1 = self.blocks_4_1_bn3(blocks_4_1_conv_pwl) + blocks_4_0
        blocks_4_2_conv_dw = self.blocks_4_2_conv_dw(F.relu6(self.blocks_4_2_bn1(self.blocks_4_2_conv_pw(blocks_4_1))))
        blocks_4_2_conv_pwl = self.blocks_4_2_conv_pwl(F.relu6(self.blocks_4_2_bn2(blocks_4_2_conv_dw)))
        blocks_4_2 = self.blocks_4_2_bn3(blocks_4_2_conv_pwl) + blocks_4_1
        blocks_5_0_conv_dw = self.blocks_5_0_conv_dw(F.relu6(self.blocks_5_0_bn1(self.blocks_5_0_conv_pw(blocks_4_2))))
        blocks_5_0_conv_pwl = self.blocks_5_0_conv_pwl(F.relu6(self.blocks_5_0_bn2(blocks_5_0_conv_dw)))
        blocks_5_0 = self.blocks_5_0_bn3(blocks_5_0_conv_pwl)
        blocks_5_1_conv_dw = self.blocks_5_1_conv_dw(F.relu6(self.blocks_5_1_bn1(self.blocks_5_1_conv_pw(blocks_5_0))))
        blocks_5_1_conv_pwl = self.blocks_5_1_conv_pwl(F.relu6(self.blocks_5_1_bn2(blocks_5_1_conv_dw)))
        blocks_5_1 = self.blocks_5_1_bn3(blocks_5_1_conv_pwl) + blocks_5_0
        blocks_5_2_conv_dw = self.blocks_5_2_conv_dw(F.relu6(self.blocks_5_2_bn1(self.blocks_5_2_conv_pw(blocks_5_1))))
        blocks_5_2_conv_pwl = self.blocks_5_2_conv_pwl(F.relu6(self.blocks_5_2_bn2(blocks_5_2_conv_dw)))
        blocks_5_2 = self.blocks_5_2_bn3(blocks_5_2_conv_pwl) + blocks_5_1
        blocks_5_3_conv_dw = self.blocks_5_3_conv_dw(F.relu6(self.blocks_5_3_bn1(self.blocks_5_3_conv_pw(blocks_5_2))))
        blocks_5_3_conv_pwl = self.blocks_5_3_conv_pwl(F.relu6(self.blocks_5_3_bn2(blocks_5_3_conv_dw)))
        blocks_5_3 = self.blocks_5_3_bn3(blocks_5_3_conv_pwl) + blocks_5_2
        blocks_6_0_conv_dw = self.blocks_6_0_conv_dw(F.relu6(self.blocks_6_0_bn1(self.blocks_6_0_conv_pw(blocks_5_3))))
        blocks_6_0_conv_pwl = self.blocks_6_0_conv_pwl(F.relu6(self.blocks_6_0_bn2(blocks_6_0_conv_dw)))
        blocks_6_0 = self.blocks_6_0_bn3(blocks_6_0_conv_pwl)
        flatten = torch.flatten(F.adaptive_avg_pool2d(F.relu6(self.bn2(self.conv_head(blocks_6_0))), 1), 1)
        classifier = self.classifier(flatten)
        return classifier


def get_inputs():
    return [
        torch.empty(1, 3, 224, 224).uniform_(-1.0, 1.0),
    ]


def get_init_inputs():
    return []
