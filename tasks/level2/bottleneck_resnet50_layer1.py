"""PyTorch twin of the task `bottleneck_resnet50_layer1`.

ResNet-50, layer1.1: torchvision Bottleneck(256, 64) (torchvision.models.resnet50).
A bottleneck of ResNet-50's first stage (224x224 image): 1x1 convolution 256 -> 64, 3x3
convolution, 1x1 convolution 64 -> 256, each with batch norm, ReLU after the first two, the
identity added and a final ReLU, at 56x56.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(256, 64, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.conv2 = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(64)
        self.conv3 = nn.Conv2d(64, 256, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(256)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        identity = x

        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)

        out = self.conv2(out)
        out = self.bn2(out)
        out = self.relu(out)

        out = self.conv3(out)
        out = self.bn3(out)

        out += identity
        out = self.relu(out)
        return out


def get_inputs():
    return [
        torch.empty(1, 256, 56, 56).uniform_(0, 2),
    ]


def get_init_inputs():
    return []
