"""PyTorch twin of the task `basic_block_resnet18_layer4`.

ResNet-18, layer4.1: torchvision BasicBlock(512, 512) (torchvision.models.resnet18).
The last basic block of ResNet-18 on a 224x224 image: 3x3 convolution 512 -> 512, batch norm,
ReLU, 3x3 convolution, batch norm, the identity shortcut, add, ReLU, at 7x7. Inputs are non-
negative (after ReLU).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(512, 512, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(512)
        self.conv2 = nn.Conv2d(512, 512, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(512)

    def forward(self, x):
        conv1 = self.conv1(x)
        bn1 = self.bn1(conv1)
        relu1 = torch.relu(bn1)
        conv2 = self.conv2(relu1)
        bn2 = self.bn2(conv2)
        out = bn2 + x
        relu2 = torch.relu(out)
        return relu2


def get_inputs():
    return [
        torch.empty(1, 512, 7, 7).uniform_(0, 2),
    ]


def get_init_inputs():
    return []
