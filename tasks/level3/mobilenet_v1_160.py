"""PyTorch twin of the task `mobilenet_v1_160`.

MobileNetV1 1.0, full model: timm MobileNetV1 (mobilenetv1_100): conv_stem, bn1 (ReLU6),
blocks.0-4 (13 DepthwiseSeparableConv: 3x3 depthwise + BN + ReLU6, 1x1 pointwise + BN + ReLU6),
global pool, classifier (timm mobilenetv1_100).
The whole MobileNetV1 1.0, batch 1, inference form, at 160x160 (one of the paper's input
resolutions, 0.58 GFLOP instead of 1.1 at 224) so the f64 reference stays fast; the output is
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
        self.blocks_0_0_conv_pw = nn.Conv2d(32, 64, 1, bias=False)
        self.blocks_0_0_bn2 = nn.BatchNorm2d(64)
        self.blocks_1_0_conv_dw = nn.Conv2d(64, 64, 3, stride=2, padding=1, groups=64, bias=False)
        self.blocks_1_0_bn1 = nn.BatchNorm2d(64)
        self.blocks_1_0_conv_pw = nn.Conv2d(64, 128, 1, bias=False)
        self.blocks_1_0_bn2 = nn.BatchNorm2d(128)
        self.blocks_1_1_conv_dw = nn.Conv2d(128, 128, 3, padding=1, groups=128, bias=False)
        self.blocks_1_1_bn1 = nn.BatchNorm2d(128)
        self.blocks_1_1_conv_pw = nn.Conv2d(128, 128, 1, bias=False)
        self.blocks_1_1_bn2 = nn.BatchNorm2d(128)
        self.blocks_2_0_conv_dw = nn.Conv2d(128, 128, 3, stride=2, padding=1, groups=128, bias=False)
        self.blocks_2_0_bn1 = nn.BatchNorm2d(128)
        self.blocks_2_0_conv_pw = nn.Conv2d(128, 256, 1, bias=False)
        self.blocks_2_0_bn2 = nn.BatchNorm2d(256)
        self.blocks_2_1_conv_dw = nn.Conv2d(256, 256, 3, padding=1, groups=256, bias=False)
        self.blocks_2_1_bn1 = nn.BatchNorm2d(256)
        self.blocks_2_1_conv_pw = nn.Conv2d(256, 256, 1, bias=False)
        self.blocks_2_1_bn2 = nn.BatchNorm2d(256)
        self.blocks_3_0_conv_dw = nn.Conv2d(256, 256, 3, stride=2, padding=1, groups=256, bias=False)
        self.blocks_3_0_bn1 = nn.BatchNorm2d(256)
        self.blocks_3_0_conv_pw = nn.Conv2d(256, 512, 1, bias=False)
        self.blocks_3_0_bn2 = nn.BatchNorm2d(512)
        self.blocks_3_1_conv_dw = nn.Conv2d(512, 512, 3, padding=1, groups=512, bias=False)
        self.blocks_3_1_bn1 = nn.BatchNorm2d(512)
        self.blocks_3_1_conv_pw = nn.Conv2d(512, 512, 1, bias=False)
        self.blocks_3_1_bn2 = nn.BatchNorm2d(512)
        self.blocks_3_2_conv_dw = nn.Conv2d(512, 512, 3, padding=1, groups=512, bias=False)
        self.blocks_3_2_bn1 = nn.BatchNorm2d(512)
        self.blocks_3_2_conv_pw = nn.Conv2d(512, 512, 1, bias=False)
        self.blocks_3_2_bn2 = nn.BatchNorm2d(512)
        self.blocks_3_3_conv_dw = nn.Conv2d(512, 512, 3, padding=1, groups=512, bias=False)
        self.blocks_3_3_bn1 = nn.BatchNorm2d(512)
        self.blocks_3_3_conv_pw = nn.Conv2d(512, 512, 1, bias=False)
        self.blocks_3_3_bn2 = nn.BatchNorm2d(512)
        self.blocks_3_4_conv_dw = nn.Conv2d(512, 512, 3, padding=1, groups=512, bias=False)
        self.blocks_3_4_bn1 = nn.BatchNorm2d(512)
        self.blocks_3_4_conv_pw = nn.Conv2d(512, 512, 1, bias=False)
        self.blocks_3_4_bn2 = nn.BatchNorm2d(512)
        self.blocks_3_5_conv_dw = nn.Conv2d(512, 512, 3, padding=1, groups=512, bias=False)
        self.blocks_3_5_bn1 = nn.BatchNorm2d(512)
        self.blocks_3_5_conv_pw = nn.Conv2d(512, 512, 1, bias=False)
        self.blocks_3_5_bn2 = nn.BatchNorm2d(512)
        self.blocks_4_0_conv_dw = nn.Conv2d(512, 512, 3, stride=2, padding=1, groups=512, bias=False)
        self.blocks_4_0_bn1 = nn.BatchNorm2d(512)
        self.blocks_4_0_conv_pw = nn.Conv2d(512, 1024, 1, bias=False)
        self.blocks_4_0_bn2 = nn.BatchNorm2d(1024)
        self.blocks_4_1_conv_dw = nn.Conv2d(1024, 1024, 3, padding=1, groups=1024, bias=False)
        self.blocks_4_1_bn1 = nn.BatchNorm2d(1024)
        self.blocks_4_1_conv_pw = nn.Conv2d(1024, 1024, 1, bias=False)
        self.blocks_4_1_bn2 = nn.BatchNorm2d(1024)
        self.classifier = nn.Linear(1024, 1000)

    def forward(self, x):
        blocks_0_0_bn1 = self.blocks_0_0_bn1(self.blocks_0_0_conv_dw(F.relu6(self.bn1(self.conv_stem(x)))))
        blocks_0_0_bn2_act = F.relu6(self.blocks_0_0_bn2(self.blocks_0_0_conv_pw(F.relu6(blocks_0_0_bn1))))
        blocks_1_0_bn1_act = F.relu6(self.blocks_1_0_bn1(self.blocks_1_0_conv_dw(blocks_0_0_bn2_act)))
        blocks_1_0_bn2_act = F.relu6(self.blocks_1_0_bn2(self.blocks_1_0_conv_pw(blocks_1_0_bn1_act)))
        blocks_1_1_bn1_act = F.relu6(self.blocks_1_1_bn1(self.blocks_1_1_conv_dw(blocks_1_0_bn2_act)))
        blocks_1_1_bn2_act = F.relu6(self.blocks_1_1_bn2(self.blocks_1_1_conv_pw(blocks_1_1_bn1_act)))
        blocks_2_0_bn1_act = F.relu6(self.blocks_2_0_bn1(self.blocks_2_0_conv_dw(blocks_1_1_bn2_act)))
        blocks_2_0_bn2_act = F.relu6(self.blocks_2_0_bn2(self.blocks_2_0_conv_pw(blocks_2_0_bn1_act)))
        blocks_2_1_bn1_act = F.relu6(self.blocks_2_1_bn1(self.blocks_2_1_conv_dw(blocks_2_0_bn2_act)))
        blocks_2_1_bn2_act = F.relu6(self.blocks_2_1_bn2(self.blocks_2_1_conv_pw(blocks_2_1_bn1_act)))
        blocks_3_0_bn1_act = F.relu6(self.blocks_3_0_bn1(self.blocks_3_0_conv_dw(blocks_2_1_bn2_act)))
        blocks_3_0_bn2_act = F.relu6(self.blocks_3_0_bn2(self.blocks_3_0_conv_pw(blocks_3_0_bn1_act)))
        blocks_3_1_bn1_act = F.relu6(self.blocks_3_1_bn1(self.blocks_3_1_conv_dw(blocks_3_0_bn2_act)))
        blocks_3_1_bn2_act = F.relu6(self.blocks_3_1_bn2(self.blocks_3_1_conv_pw(blocks_3_1_bn1_act)))
        blocks_3_2_bn1_act = F.relu6(self.blocks_3_2_bn1(self.blocks_3_2_conv_dw(blocks_3_1_bn2_act)))
        blocks_3_2_bn2_act = F.relu6(self.blocks_3_2_bn2(self.blocks_3_2_conv_pw(blocks_3_2_bn1_act)))
        blocks_3_3_bn1_act = F.relu6(self.blocks_3_3_bn1(self.blocks_3_3_conv_dw(blocks_3_2_bn2_act)))
        blocks_3_3_bn2_act = F.relu6(self.blocks_3_3_bn2(self.blocks_3_3_conv_pw(blocks_3_3_bn1_act)))
        blocks_3_4_bn1_act = F.relu6(self.blocks_3_4_bn1(self.blocks_3_4_conv_dw(blocks_3_3_bn2_act)))
        blocks_3_4_bn2_act = F.relu6(self.blocks_3_4_bn2(self.blocks_3_4_conv_pw(blocks_3_4_bn1_act)))
        blocks_3_5_bn1_act = F.relu6(self.blocks_3_5_bn1(self.blocks_3_5_conv_dw(blocks_3_4_bn2_act)))
        blocks_3_5_bn2_act = F.relu6(self.blocks_3_5_bn2(self.blocks_3_5_conv_pw(blocks_3_5_bn1_act)))
        blocks_4_0_bn1_act = F.relu6(self.blocks_4_0_bn1(self.blocks_4_0_conv_dw(blocks_3_5_bn2_act)))
        blocks_4_0_bn2_act = F.relu6(self.blocks_4_0_bn2(self.blocks_4_0_conv_pw(blocks_4_0_bn1_act)))
        blocks_4_1_bn1_act = F.relu6(self.blocks_4_1_bn1(self.blocks_4_1_conv_dw(blocks_4_0_bn2_act)))
        blocks_4_1_bn2_act = F.relu6(self.blocks_4_1_bn2(self.blocks_4_1_conv_pw(blocks_4_1_bn1_act)))
        classifier = self.classifier(torch.flatten(F.adaptive_avg_pool2d(blocks_4_1_bn2_act, 1), 1))
        return classifier


def get_inputs():
    return [
        torch.empty(1, 3, 160, 160).uniform_(-1.0, 1.0),
    ]


def get_init_inputs():
    return []
