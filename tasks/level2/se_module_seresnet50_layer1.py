"""PyTorch twin of the task `se_module_seresnet50_layer1`.

SE-ResNet-50, layer1.0.se: timm SEModule(256, rd_ratio=1/16) (timm seresnet50).
Squeeze-and-excitation after the third convolution of an SE-ResNet-50 bottleneck: spatial mean
of 256 channels at 56x56, 1x1 convolutions 256 -> 16 (ReLU) -> 256 (sigmoid), rescaling of the
input (224x224 image).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Conv2d(256, 16, 1)
        self.fc2 = nn.Conv2d(16, 256, 1)
        self.act = nn.ReLU(inplace=True)
        self.gate = nn.Sigmoid()

    def forward(self, x):
        x_se = x.mean((2, 3), keepdim=True)
        x_se = self.fc1(x_se)
        x_se = self.act(x_se)
        x_se = self.fc2(x_se)
        return x * self.gate(x_se)


def get_inputs():
    return [
        torch.empty(1, 256, 56, 56).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
