"""PyTorch twin of the task `bottleneck_resnet50_layer3`.

ResNet-50, layer3.1: torchvision Bottleneck(1024, 256) (torchvision.models.resnet50).
A bottleneck of ResNet-50's third stage on a 224x224 image: 1x1 convolution 1024 -> 256, batch
norm, ReLU, 3x3 convolution 256 -> 256, batch norm, ReLU, 1x1 convolution 256 -> 1024, batch
norm, identity shortcut, add, ReLU, at 14x14. Inputs are non-negative (after ReLU).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1024, 256, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(256)
        self.conv2 = nn.Conv2d(256, 256, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(256)
        self.conv3 = nn.Conv2d(256, 1024, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(1024)

    def forward(self, x):
        conv1 = self.conv1(x)
        bn1 = self.bn1(conv1)
        relu1 = torch.relu(bn1)
        conv2 = self.conv2(relu1)
        bn2 = self.bn2(conv2)
        relu2 = torch.relu(bn2)
        conv3 = self.conv3(relu2)
        bn3 = self.bn3(conv3)
        out = bn3 + x
        relu3 = torch.relu(out)
        return relu3


def get_inputs():
    return [
        torch.empty(1, 1024, 14, 14).uniform_(0, 2),
    ]


def get_init_inputs():
    return []
