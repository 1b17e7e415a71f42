"""PyTorch twin of the task `relu_resnet18_stem`.

ResNet-18, relu: torch.nn.ReLU (torchvision.models.resnet18).
The stem's ReLU after conv1 and bn1 on a 224x224 image: 64 channels at 112x112.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [
        torch.empty(1, 64, 112, 112).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
