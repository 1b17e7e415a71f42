"""PyTorch twin of the task `basic_block_s2_resnet18_layer4`.

ResNet-18, layer4.0: torchvision BasicBlock(256, 512, stride=2, downsample=conv1x1 +
BatchNorm2d) (torchvision.models.resnet18).
The downsampling basic block opening ResNet-18's last stage: stride-2 3x3 convolution 256 -> 512
(14x14 -> 7x7), 3x3 convolution of 512 channels, and the strided 1x1 shortcut with batch norm
(224x224 image).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(256, 512, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(512)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(512, 512, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(512)
        self.downsample_conv = nn.Conv2d(256, 512, 1, stride=2, bias=False)
        self.downsample_bn = nn.BatchNorm2d(512)

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
        torch.empty(1, 256, 14, 14).uniform_(0, 2),
    ]


def get_init_inputs():
    return []
