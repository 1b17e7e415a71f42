"""PyTorch twin of the task `basic_block_s2_resnet18_layer3`.

ResNet-18, layer3.0: torchvision BasicBlock(128, 256, stride=2, downsample=conv1x1 +
BatchNorm2d) (torchvision.models.resnet18).
A basic block of ResNet-18 on a 224x224 image: 3x3 convolution (stride 2) 128 -> 256, batch
norm, ReLU, 3x3 convolution, batch norm, a 1x1 strided projection shortcut with batch norm, add,
ReLU: 128x28x28 -> 256x14x14. Inputs are non-negative (after ReLU).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(128, 256, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(256)
        self.conv2 = nn.Conv2d(256, 256, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(256)
        self.downsample_0 = nn.Conv2d(128, 256, 1, stride=2, bias=False)
        self.downsample_1 = nn.BatchNorm2d(256)

    def forward(self, x):
        conv1 = self.conv1(x)
        bn1 = self.bn1(conv1)
        relu1 = torch.relu(bn1)
        conv2 = self.conv2(relu1)
        bn2 = self.bn2(conv2)
        downsample_0 = self.downsample_0(x)
        downsample_1 = self.downsample_1(downsample_0)
        out = bn2 + downsample_1
        relu2 = torch.relu(out)
        return relu2


def get_inputs():
    return [
        torch.empty(1, 128, 28, 28).uniform_(0, 2),
    ]


def get_init_inputs():
    return []
