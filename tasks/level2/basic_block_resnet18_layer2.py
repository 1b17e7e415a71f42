"""PyTorch twin of the task `basic_block_resnet18_layer2`.

ResNet-18, layer2.1: torchvision BasicBlock(128, 128, stride=1) (torchvision.models.resnet18).
A basic block of ResNet-18 on a 224x224 image: 3x3 convolution (stride 1) 128 -> 128, batch
norm, ReLU, 3x3 convolution, batch norm, the identity shortcut, add, ReLU: 128x28x28 ->
128x28x28. Inputs are non-negative (after ReLU).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(128, 128, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(128)
        self.conv2 = nn.Conv2d(128, 128, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(128)

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
        torch.empty(1, 128, 28, 28).uniform_(0, 2),
    ]


def get_init_inputs():
    return []
