"""PyTorch twin of the task `basic_block_s2_resnet18_layer2`.

ResNet-18, layer2.0: torchvision BasicBlock(64, 128, stride=2, downsample=conv1x1 + BatchNorm2d)
(torchvision.models.resnet18).
The downsampling basic block opening ResNet-18's second stage: stride-2 3x3 convolution 64 ->
128 (56x56 -> 28x28), 3x3 convolution, and a strided 1x1 convolution with batch norm on the
shortcut (224x224 image).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(64, 128, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(128)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(128, 128, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(128)
        self.downsample_conv = nn.Conv2d(64, 128, 1, stride=2, bias=False)
        self.downsample_bn = nn.BatchNorm2d(128)

    def forward(self, x):
        identity = x

        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)

        out = self.conv2(out)
        out = self.bn2(out)

        identity = self.downsample_bn(self.downsample_conv(x))
        out += identity
        out = self.relu(out)
        return out


def get_inputs():
    return [
        torch.empty(1, 64, 56, 56).uniform_(0, 2),
    ]


def get_init_inputs():
    return []
