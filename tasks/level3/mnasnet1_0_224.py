"""PyTorch twin of the task `mnasnet1_0_224`.

MNASNet 1.0, full model: torchvision MNASNet(1.0): layers.0-16 (stem conv, depthwise-separable
conv, 6 stacks of inverted residuals with 3x3 and 5x5 depthwise kernels, 1x1 conv to 1280), mean
over H and W, classifier (Dropout, Linear(1280, 1000)) (torchvision.models.mnasnet1_0).
The whole MNASNet 1.0 (the platform-aware searched mobile network) at 224x224, batch 1,
inference form; the output is the 1000 class logits.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers_0 = nn.Conv2d(3, 32, 3, stride=2, padding=1, bias=False)
        self.layers_1 = nn.BatchNorm2d(32)
        self.layers_3 = nn.Conv2d(32, 32, 3, padding=1, groups=32, bias=False)
        self.layers_4 = nn.BatchNorm2d(32)
        self.layers_6 = nn.Conv2d(32, 16, 1, bias=False)
        self.layers_7 = nn.BatchNorm2d(16)
        self.layers_8_0_layers_0 = nn.Conv2d(16, 48, 1, bias=False)
        self.layers_8_0_layers_1 = nn.BatchNorm2d(48)
        self.layers_8_0_layers_3 = nn.Conv2d(48, 48, 3, stride=2, padding=1, groups=48, bias=False)
        self.layers_8_0_layers_4 = nn.BatchNorm2d(48)
        self.layers_8_0_layers_6 = nn.Conv2d(48, 24, 1, bias=False)
        self.layers_8_0_layers_7 = nn.BatchNorm2d(24)
        self.layers_8_1_layers_0 = nn.Conv2d(24, 72, 1, bias=False)
        self.layers_8_1_layers_1 = nn.BatchNorm2d(72)
        self.layers_8_1_layers_3 = nn.Conv2d(72, 72, 3, padding=1, groups=72, bias=False)
        self.layers_8_1_layers_4 = nn.BatchNorm2d(72)
        self.layers_8_1_layers_6 = nn.Conv2d(72, 24, 1, bias=False)
        self.layers_8_1_layers_7 = nn.BatchNorm2d(24)
        self.layers_8_2_layers_0 = nn.Conv2d(24, 72, 1, bias=False)
        self.layers_8_2_layers_1 = nn.BatchNorm2d(72)
        self.layers_8_2_layers_3 = nn.Conv2d(72, 72, 3, padding=1, groups=72, bias=False)
        self.layers_8_2_layers_4 = nn.BatchNorm2d(72)
        self.layers_8_2_layers_6 = nn.Conv2d(72, 24, 1, bias=False)
        self.layers_8_2_layers_7 = nn.BatchNorm2d(24)
        self.layers_9_0_layers_0 = nn.Conv2d(24, 72, 1, bias=False)
        self.layers_9_0_layers_1 = nn.BatchNorm2d(72)
        self.layers_9_0_layers_3 = nn.Conv2d(72, 72, 5, stride=2, padding=2, groups=72, bias=False)
        self.layers_9_0_layers_4 = nn.BatchNorm2d(72)
        self.layers_9_0_layers_6 = nn.Conv2d(72, 40, 1, bias=False)
        self.layers_9_0_layers_7 = nn.BatchNorm2d(40)
        self.layers_9_1_layers_0 = nn.Conv2d(40, 120, 1, bias=False)
        self.layers_9_1_layers_1 = nn.BatchNorm2d(120)
        self.layers_9_1_layers_3 = nn.Conv2d(120, 120, 5, padding=2, groups=120, bias=False)
        self.layers_9_1_layers_4 = nn.BatchNorm2d(120)
        self.layers_9_1_layers_6 = nn.Conv2d(120, 40, 1, bias=False)
        self.layers_9_1_layers_7 = nn.BatchNorm2d(40)
        self.layers_9_2_layers_0 = nn.Conv2d(40, 120, 1, bias=False)
        self.layers_9_2_layers_1 = nn.BatchNorm2d(120)
        self.layers_9_2_layers_3 = nn.Conv2d(120, 120, 5, padding=2, groups=120, bias=False)
        self.layers_9_2_layers_4 = nn.BatchNorm2d(120)
        self.layers_9_2_layers_6 = nn.Conv2d(120, 40, 1, bias=False)
        self.layers_9_2_layers_7 = nn.BatchNorm2d(40)
        self.layers_10_0_layers_0 = nn.Conv2d(40, 240, 1, bias=False)
        self.layers_10_0_layers_1 = nn.BatchNorm2d(240)
        self.layers_10_0_layers_3 = nn.Conv2d(240, 240, 5, stride=2, padding=2, groups=240, bias=False)
        self.layers_10_0_layers_4 = nn.BatchNorm2d(240)
        self.layers_10_0_layers_6 = nn.Conv2d(240, 80, 1, bias=False)
        self.layers_10_0_layers_7 = nn.BatchNorm2d(80)
        self.layers_10_1_layers_0 = nn.Conv2d(80, 480, 1, bias=False)
        self.layers_10_1_layers_1 = nn.BatchNorm2d(480)
        self.layers_10_1_layers_3 = nn.Conv2d(480, 480, 5, padding=2, groups=480, bias=False)
        self.layers_10_1_layers_4 = nn.BatchNorm2d(480)
        self.layers_10_1_layers_6 = nn.Conv2d(480, 80, 1, bias=False)
        self.layers_10_1_layers_7 = nn.BatchNorm2d(80)
        self.layers_10_2_layers_0 = nn.Conv2d(80, 480, 1, bias=False)
        self.layers_10_2_layers_1 = nn.BatchNorm2d(480)
        self.layers_10_2_layers_3 = nn.Conv2d(480, 480, 5, padding=2, groups=480, bias=False)
        self.layers_10_2_layers_4 = nn.BatchNorm2d(480)
        self.layers_10_2_layers_6 = nn.Conv2d(480, 80, 1, bias=False)
        self.layers_10_2_layers_7 = nn.BatchNorm2d(80)
        self.layers_11_0_layers_0 = nn.Conv2d(80, 480, 1, bias=False)
        self.layers_11_0_layers_1 = nn.BatchNorm2d(480)
        self.layers_11_0_layers_3 = nn.Conv2d(480, 480, 3, padding=1, groups=480, bias=False)
        self.layers_11_0_layers_4 = nn.BatchNorm2d(480)
        self.layers_11_0_layers_6 = nn.Conv2d(480, 96, 1, bias=False)
        self.layers_11_0_layers_7 = nn.BatchNorm2d(96)
        self.layers_11_1_layers_0 = nn.Conv2d(96, 576, 1, bias=False)
        self.layers_11_1_layers_1 = nn.BatchNorm2d(576)
        self.layers_11_1_layers_3 = nn.Conv2d(576, 576, 3, padding=1, groups=576, bias=False)
        self.layers_11_1_layers_4 = nn.BatchNorm2d(576)
        self.layers_11_1_layers_6 = nn.Conv2d(576, 96, 1, bias=False)
        self.layers_11_1_layers_7 = nn.BatchNorm2d(96)
        self.layers_12_0_layers_0 = nn.Conv2d(96, 576, 1, bias=False)
        self.layers_12_0_layers_1 = nn.BatchNorm2d(576)
        self.layers_12_0_layers_3 = nn.Conv2d(576, 576, 5, stride=2, padding=2, groups=576, bias=False)
        self.layers_12_0_layers_4 = nn.BatchNorm2d(576)
        self.layers_12_0_layers_6 = nn.Conv2d(576, 192, 1, bias=False)
        self.layers_12_0_layers_7 = nn.BatchNorm2d(192)
        self.layers_12_1_layers_0 = nn.Conv2d(192, 1152, 1, bias=False)
        self.layers_12_1_layers_1 = nn.BatchNorm2d(1152)
        self.layers_12_1_layers_3 = nn.Conv2d(1152, 1152, 5, padding=2, groups=1152, bias=False)
        self.layers_12_1_layers_4 = nn.BatchNorm2d(1152)
        self.layers_12_1_layers_6 = nn.Conv2d(1152, 192, 1, bias=False)
        self.layers_12_1_layers_7 = nn.BatchNorm2d(192)
        self.layers_12_2_layers_0 = nn.Conv2d(192, 1152, 1, bias=False)
        self.layers_12_2_layers_1 = nn.BatchNorm2d(1152)
        self.layers_12_2_layers_3 = nn.Conv2d(1152, 1152, 5, padding=2, groups=1152, bias=False)
        self.layers_12_2_layers_4 = nn.BatchNorm2d(1152)
        self.layers_12_2_layers_6 = nn.Conv2d(1152, 192, 1, bias=False)
        self.layers_12_2_layers_7 = nn.BatchNorm2d(192)
        self.layers_12_3_layers_0 = nn.Conv2d(192, 1152, 1, bias=False)
        self.layers_12_3_layers_1 = nn.BatchNorm2d(1152)
        self.layers_12_3_layers_3 = nn.Conv2d(1152, 1152, 5, padding=2, groups=1152, bias=False)
        self.layers_12_3_layers_4 = nn.BatchNorm2d(1152)
        self.layers_12_3_layers_6 = nn.Conv2d(1152, 192, 1, bias=False)
        self.layers_12_3_layers_7 = nn.BatchNorm2d(192)
        self.layers_13_0_layers_0 = nn.Conv2d(192, 1152, 1, bias=False)
        self.layers_13_0_layers_1 = nn.BatchNorm2d(1152)
        self.layers_13_0_layers_3 = nn.Conv2d(1152, 1152, 3, padding=1, groups=1152, bias=False)
        self.layers_13_0_layers_4 = nn.BatchNorm2d(1152)
        self.layers_13_0_layers_6 = nn.Conv2d(1152, 320, 1, bias=False)
        self.layers_13_0_layers_7 = nn.BatchNorm2d(320)
        self.layers_14 = nn.Conv2d(320, 1280, 1, bias=False)
        self.layers_15 = nn.BatchNorm2d(1280)
        self.classifier_1 = nn.Linear(1280, 1000)

    def forward(self, x):
        layers_5 = F.relu(self.layers_4(self.layers_3(F.relu(self.layers_1(self.layers_0(x))))))
        layers_8_0_layers_1 = self.layers_8_0_layers_1(self.layers_8_0_layers_0(self.layers_7(self.layers_6(layers_5))))
        layers_8_0_layers_4 = self.layers_8_0_layers_4(self.layers_8_0_layers_3(F.relu(layers_8_0_layers_1)))
        layers_8_0_layers_7 = self.layers_8_0_layers_7(self.layers_8_0_layers_6(F.relu(layers_8_0_layers_4)))
        layers_8_1_layers_2 = F.relu(self.layers_8_1_layers_1(self.layers_8_1_layers_0(layers_8_0_layers_7)))
        layers_8_1_layers_5 = F.relu(self.layers_8_1_layers_4(self.layers_8_1_layers_3(layers_8_1_layers_2)))
        layers_8_1 = self.layers_8_1_layers_7(self.layers_8_1_layers_6(layers_8_1_layers_5)) + layers_8_0_layers_7
        layers_8_2_layers_3 = self.layers_8_2_layers_3(F.relu(self.layers_8_2_layers_1(self.layers_8_2_layers_0(layers_8_1))))
        layers_8_2_layers_6 = self.layers_8_2_layers_6(F.relu(self.layers_8_2_layers_4(layers_8_2_layers_3)))
        layers_8_2 = self.layers_8_2_layers_7(layers_8_2_layers_6) + layers_8_1
        layers_9_0_layers_3 = self.layers_9_0_layers_3(F.relu(self.layers_9_0_layers_1(self.layers_9_0_layers_0(layers_8_2))))
        layers_9_0_layers_6 = self.layers_9_0_layers_6(F.relu(self.layers_9_0_layers_4(layers_9_0_layers_3)))
        layers_9_0 = self.layers_9_0_layers_7(layers_9_0_layers_6)
        layers_9_1_layers_3 = self.layers_9_1_layers_3(F.relu(self.layers_9_1_layers_1(self.layers_9_1_layers_0(layers_9_0))))
        layers_9_1_layers_6 = self.layers_9_1_layers_6(F.relu(self.layers_9_1_layers_4(layers_9_1_layers_3)))
        layers_9_1 = self.layers_9_1_layers_7(layers_9_1_layers_6) + layers_9_0
        layers_9_2_layers_3 = self.layers_9_2_layers_3(F.relu(self.layers_9_2_layers_1(self.layers_9_2_layers_0(layers_9_1))))
        layers_9_2_layers_6 = self.layers_9_2_layers_6(F.relu(self.layers_9_2_layers_4(layers_9_2_layers_3)))
        layers_9_2 = self.layers_9_2_layers_7(layers_9_2_layers_6) + layers_9_1
        layers_10_0_layers_3 = self.layers_10_0_layers_3(F.relu(self.layers_10_0_layers_1(self.layers_10_0_layers_0(layers_9_2))))
        layers_10_0_layers_6 = self.layers_10_0_layers_6(F.relu(self.layers_10_0_layers_4(layers_10_0_layers_3)))
        layers_10_0 = self.layers_10_0_layers_7(layers_10_0_layers_6)
        layers_10_1_layers_2 = F.relu(self.layers_10_1_layers_1(self.layers_10_1_layers_0(layers_10_0)))
        layers_10_1_layers_4 = self.layers_10_1_layers_4(self.layers_10_1_layers_3(layers_10_1_layers_2))
        layers_10_1_layers_7 = self.layers_10_1_layers_7(self.layers_10_1_layers_6(F.relu(layers_10_1_layers_4)))
        layers_10_1 = layers_10_1_layers_7 + layers_10_0
        layers_10_2_layers_2 = F.relu(self.layers_10_2_layers_1(self.layers_10_2_layers_0(layers_10_1)))
        layers_10_2_layers_4 = self.layers_10_2_layers_4(self.layers_10_2_layers_3(layers_10_2_layers_2))
        layers_10_2_layers_7 = self.layers_10_2_layers_7(self.layers_10_2_layers_6(F.relu(layers_10_2_layers_4)))
        layers_10_2 = layers_10_2_layers_7 + layers_10_1
        layers_11_0_layers_2 = F.relu(self.layers_11_0_layers_1(self.layers_11_0_layers_0(layers_10_2)))
        layers_11_0_layers_4 = self.layers_11_0_layers_4(self.layers_11_0_layers_3(layers_11_0_layers_2))
        layers_11_0_layers_7 = self.layers_11_0_layers_7(self.layers_11_0_layers_6(F.relu(layers_11_0_layers_4)))
        layers_11_1_layers_1 = self.layers_11_1_layers_1(self.layers_11_1_layers_0(layers_11_0_layers_7))
        layers_11_1_layers_4 = self.layers_11_1_layers_4(self.layers_11_1_layers_3(F.relu(layers_11_1_layers_1)))
        layers_11_1_layers_7 = self.layers_11_1_layers_7(self.layers_11_1_layers_6(F.relu(layers_11_1_layers_4)))
        layers_11_1 = layers_11_1_layers_7 + layers_11_0_layers_7
        layers_12_0_layers_2 = F.relu(self.layers_12_0_layers_1(self.layers_12_0_layers_0(layers_11_1)))
        layers_12_0_layers_4 = self.layers_12_0_layers_4(self.layers_12_0_layers_3(layers_12_0_layers_2))
        layers_12_0_layers_7 = self.layers_12_0_layers_7(self.layers_12_0_layers_6(F.relu(layers_12_0_layers_4)))
        layers_12_1_layers_1 = self.layers_12_1_layers_1(self.layers_12_1_layers_0(layers_12_0_layers_7))
        layers_12_1_layers_4 = self.layers_12_1_layers_4(self.layers_12_1_layers_3(F.relu(layers_12_1_layers_1)))
        layers_12_1_layers_7 = self.layers_12_1_layers_7(self.layers_12_1_layers_6(F.relu(layers_12_1_layers_4)))
        layers_12_1 = layers_12_1_layers_7 + layers_12_0_layers_7
        layers_12_2_layers_2 = F.relu(self.layers_12_2_layers_1(self.layers_12_2_layers_0(layers_12_1)))
        layers_12_2_layers_4 = self.layers_12_2_layers_4(self.layers_12_2_layers_3(layers_12_2_layers_2))
        layers_12_2_layers_7 = self.layers_12_2_layers_7(self.layers_12_2_layers_6(F.relu(layers_12_2_layers_4)))
        layers_12_2 = layers_12_2_layers_7 + layers_12_1
        layers_12_3_layers_2 = F.relu(self.layers_12_3_layers_1(self.layers_12_3_layers_0(layers_12_2)))
        layers_12_3_layers_4 = self.layers_12_3_layers_4(self.layers_12_3_layers_3(layers_12_3_layers_2))
        layers_12_3_layers_7 = self.layers_12_3_layers_7(self.layers_12_3_layers_6(F.relu(layers_12_3_layers_4)))
        layers_12_3 = layers_12_3_layers_7 + layers_12_2
        layers_13_0_layers_2 = F.relu(self.layers_13_0_layers_1(self.layers_13_0_layers_0(layers_12_3)))
        layers_13_0_layers_4 = self.layers_13_0_layers_4(self.layers_13_0_layers_3(layers_13_0_layers_2))
        layers_13_0_layers_7 = self.layers_13_0_layers_7(self.layers_13_0_layers_6(F.relu(layers_13_0_layers_4)))
        mean = F.relu(self.layers_15(self.layers_14(layers_13_0_layers_7))).mean([2, 3])
        classifier_1 = self.classifier_1(mean)
        return classifier_1


def get_inputs():
    return [
        torch.empty(1, 3, 224, 224).uniform_(-1.0, 1.0),
    ]


def get_init_inputs():
    return []
