"""PyTorch twin of the task `blazeface_128`.

BlazeFace (front camera), full model: BlazeFace(back_model=False): F.pad + 5x5 stride-2 conv,
backbone1 (11 BlazeBlocks), backbone2 (5 BlazeBlocks), classifier_8/16 and regressor_8/16
permuted and concatenated (hollance/BlazeFace-PyTorch blazeface.py).
MediaPipe's BlazeFace face detector (front-camera model) on its 128x128 input in [-1, 1], batch
1: BlazeBlocks with depthwise 3x3 and pointwise convolutions, TFLite-style padding at stride 2
(pad right and bottom by 2, max-pooled shortcut), channel padding of the shortcut, ReLU after
the residual add. Outputs: the 896 anchors' 16 box and keypoint regressions and their scores
(before the sigmoid and box decoding).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone1_0 = nn.Conv2d(3, 24, 5, stride=2)
        self.backbone1_2_convs_0 = nn.Conv2d(24, 24, 3, padding=1, groups=24)
        self.backbone1_2_convs_1 = nn.Conv2d(24, 24, 1)
        self.backbone1_3_convs_0 = nn.Conv2d(24, 24, 3, padding=1, groups=24)
        self.backbone1_3_convs_1 = nn.Conv2d(24, 28, 1)
        self.backbone1_4_convs_0 = nn.Conv2d(28, 28, 3, stride=2, groups=28)
        self.backbone1_4_convs_1 = nn.Conv2d(28, 32, 1)
        self.backbone1_5_convs_0 = nn.Conv2d(32, 32, 3, padding=1, groups=32)
        self.backbone1_5_convs_1 = nn.Conv2d(32, 36, 1)
        self.backbone1_6_convs_0 = nn.Conv2d(36, 36, 3, padding=1, groups=36)
        self.backbone1_6_convs_1 = nn.Conv2d(36, 42, 1)
        self.backbone1_7_convs_0 = nn.Conv2d(42, 42, 3, stride=2, groups=42)
        self.backbone1_7_convs_1 = nn.Conv2d(42, 48, 1)
        self.backbone1_8_convs_0 = nn.Conv2d(48, 48, 3, padding=1, groups=48)
        self.backbone1_8_convs_1 = nn.Conv2d(48, 56, 1)
        self.backbone1_9_convs_0 = nn.Conv2d(56, 56, 3, padding=1, groups=56)
        self.backbone1_9_convs_1 = nn.Conv2d(56, 64, 1)
        self.backbone1_10_convs_0 = nn.Conv2d(64, 64, 3, padding=1, groups=64)
        self.backbone1_10_convs_1 = nn.Conv2d(64, 72, 1)
        self.backbone1_11_convs_0 = nn.Conv2d(72, 72, 3, padding=1, groups=72)
        self.backbone1_11_convs_1 = nn.Conv2d(72, 80, 1)
        self.backbone1_12_convs_0 = nn.Conv2d(80, 80, 3, padding=1, groups=80)
        self.backbone1_12_convs_1 = nn.Conv2d(80, 88, 1)
        self.backbone2_0_convs_0 = nn.Conv2d(88, 88, 3, stride=2, groups=88)
        self.backbone2_0_convs_1 = nn.Conv2d(88, 96, 1)
        self.backbone2_1_convs_0 = nn.Conv2d(96, 96, 3, padding=1, groups=96)
        self.backbone2_1_convs_1 = nn.Conv2d(96, 96, 1)
        self.backbone2_2_convs_0 = nn.Conv2d(96, 96, 3, padding=1, groups=96)
        self.backbone2_2_convs_1 = nn.Conv2d(96, 96, 1)
        self.backbone2_3_convs_0 = nn.Conv2d(96, 96, 3, padding=1, groups=96)
        self.backbone2_3_convs_1 = nn.Conv2d(96, 96, 1)
        self.backbone2_4_convs_0 = nn.Conv2d(96, 96, 3, padding=1, groups=96)
        self.backbone2_4_convs_1 = nn.Conv2d(96, 96, 1)
        self.classifier_8 = nn.Conv2d(88, 2, 1)
        self.classifier_16 = nn.Conv2d(96, 6, 1)
        self.regressor_8 = nn.Conv2d(88, 32, 1)
        self.regressor_16 = nn.Conv2d(96, 96, 1)

    def forward(self, x):
        backbone1_1 = F.relu(self.backbone1_0(F.pad(x, (1, 2, 1, 2))))
        backbone1_2_add = self.backbone1_2_convs_1(self.backbone1_2_convs_0(backbone1_1)) + backbone1_1
        backbone1_2 = F.relu(backbone1_2_add)
        backbone1_3_add = self.backbone1_3_convs_1(self.backbone1_3_convs_0(backbone1_2)) + F.pad(backbone1_2, (0, 0, 0, 0, 0, 4), "constant", 0)
        backbone1_3 = F.relu(backbone1_3_add)
        backbone1_4_convs_1 = self.backbone1_4_convs_1(self.backbone1_4_convs_0(F.pad(backbone1_3, (0, 2, 0, 2))))
        backbone1_4_channel_pad = F.pad(F.max_pool2d(backbone1_3, 2, 2), (0, 0, 0, 0, 0, 4), "constant", 0)
        backbone1_4 = F.relu((backbone1_4_convs_1 + backbone1_4_channel_pad))
        backbone1_5_add = self.backbone1_5_convs_1(self.backbone1_5_convs_0(backbone1_4)) + F.pad(backbone1_4, (0, 0, 0, 0, 0, 4), "constant", 0)
        backbone1_5 = F.relu(backbone1_5_add)
        backbone1_6_add = self.backbone1_6_convs_1(self.backbone1_6_convs_0(backbone1_5)) + F.pad(backbone1_5, (0, 0, 0, 0, 0, 6), "constant", 0)
        backbone1_6 = F.relu(backbone1_6_add)
        backbone1_7_convs_1 = self.backbone1_7_convs_1(self.backbone1_7_convs_0(F.pad(backbone1_6, (0, 2, 0, 2))))
        backbone1_7_channel_pad = F.pad(F.max_pool2d(backbone1_6, 2, 2), (0, 0, 0, 0, 0, 6), "constant", 0)
        backbone1_7 = F.relu((backbone1_7_convs_1 + backbone1_7_channel_pad))
        backbone1_8_add = self.backbone1_8_convs_1(self.backbone1_8_convs_0(backbone1_7)) + F.pad(backbone1_7, (0, 0, 0, 0, 0, 8), "constant", 0)
        backbone1_8 = F.relu(backbone1_8_add)
        backbone1_9_add = self.backbone1_9_convs_1(self.backbone1_9_convs_0(backbone1_8)) + F.pad(backbone1_8, (0, 0, 0, 0, 0, 8), "constant", 0)
        backbone1_9 = F.relu(backbone1_9_add)
        backbone1_10_add = self.backbone1_10_convs_1(self.backbone1_10_convs_0(backbone1_9)) + F.pad(backbone1_9, (0, 0, 0, 0, 0, 8), "constant", 0)
        backbone1_10 = F.relu(backbone1_10_add)
        backbone1_11_add = self.backbone1_11_convs_1(self.backbone1_11_convs_0(backbone1_10)) + F.pad(backbone1_10, (0, 0, 0, 0, 0, 8), "constant", 0)
        backbone1_11 = F.relu(backbone1_11_add)
        backbone1_12_add = self.backbone1_12_convs_1(self.backbone1_12_convs_0(backbone1_11)) + F.pad(backbone1_11, (0, 0, 0, 0, 0, 8), "constant", 0)
        backbone1_12 = F.relu(backbone1_12_add)
        backbone2_0_convs_1 = self.backbone2_0_convs_1(self.backbone2_0_convs_0(F.pad(backbone1_12, (0, 2, 0, 2))))
        backbone2_0_channel_pad = F.pad(F.max_pool2d(backbone1_12, 2, 2), (0, 0, 0, 0, 0, 8), "constant", 0)
        backbone2_0 = F.relu((backbone2_0_convs_1 + backbone2_0_channel_pad))
        backbone2_1_add = self.backbone2_1_convs_1(self.backbone2_1_convs_0(backbone2_0)) + backbone2_0
        backbone2_1 = F.relu(backbone2_1_add)
        backbone2_2_add = self.backbone2_2_convs_1(self.backbone2_2_convs_0(backbone2_1)) + backbone2_1
        backbone2_2 = F.relu(backbone2_2_add)
        backbone2_3_add = self.backbone2_3_convs_1(self.backbone2_3_convs_0(backbone2_2)) + backbone2_2
        backbone2_3 = F.relu(backbone2_3_add)
        backbone2_4_add = self.backbone2_4_convs_1(self.backbone2_4_convs_0(backbone2_3)) + backbone2_3
        backbone2_4 = F.relu(backbone2_4_add)
        c = torch.cat((self.classifier_8(backbone1_12).permute(0, 2, 3, 1).reshape(1, -1, 1), self.classifier_16(backbone2_4).permute(0, 2, 3, 1).reshape(1, -1, 1)), dim=1)
        r = torch.cat((self.regressor_8(backbone1_12).permute(0, 2, 3, 1).reshape(1, -1, 16), self.regressor_16(backbone2_4).permute(0, 2, 3, 1).reshape(1, -1, 16)), dim=1)
        return r, c


def get_inputs():
    return [
        torch.empty(1, 3, 128, 128).uniform_(-1.0, 1.0),
    ]


def get_init_inputs():
    return []
