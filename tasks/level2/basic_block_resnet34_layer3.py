"""PyTorch twin of the task `basic_block_resnet34_layer3`.

ResNet-34, layer3.1: torchvision BasicBlock(256, 256, stride=1) (torchvision.models.resnet34).
A basic block of ResNet-34 on a 224x224 image: 3x3 convolution (stride 1) 256 -> 256, batch
norm, ReLU, 3x3 convolution, batch norm, the identity shortcut, add, ReLU: 256x14x14 ->
256x14x14. Inputs are non-negative (after ReLU).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(256, 256, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(256)
        self.conv2 = nn.Conv2d(256, 256, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(256)

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
        torch.empty(1, 256, 14, 14).uniform_(0, 2),
    ]


def get_init_inputs():
    return []
