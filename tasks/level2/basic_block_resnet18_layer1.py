"""PyTorch twin of the task `basic_block_resnet18_layer1`.

ResNet-18, layer1.0: torchvision BasicBlock(64, 64, stride=1) (torchvision.models.resnet18).
The first basic block of ResNet-18 (224x224 image): two 3x3 convolutions of 64 channels at 56x56
with batch norm, ReLU between, the identity added, and a final ReLU. The input is the stem's
non-negative output.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(64)

    def forward(self, x):
        identity = x

        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)

        out = self.conv2(out)
        out = self.bn2(out)

        out += identity
        out = self.relu(out)
        return out


def get_inputs():
    return [
        torch.empty(1, 64, 56, 56).uniform_(0, 2),
    ]


def get_init_inputs():
    return []
