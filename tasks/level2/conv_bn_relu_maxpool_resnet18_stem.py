"""PyTorch twin of the task `conv_bn_relu_maxpool_resnet18_stem`.

ResNet-18, conv1, bn1, relu, maxpool: torch.nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
+ BatchNorm2d + ReLU + MaxPool2d(3, 2, 1) (torchvision.models.resnet18).
The ResNet-18 stem at inference: 7x7 stride-2 convolution of a 224x224 image, batch norm with
running statistics, ReLU, and the 3x3 stride-2 max pool, 3x224x224 -> 64x56x56.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)

    def forward(self, x):
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)
        x = self.maxpool(x)
        return x


def get_inputs():
    return [
        torch.empty(1, 3, 224, 224).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
