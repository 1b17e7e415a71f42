"""PyTorch twin of the task `eca_ecaresnet50d_layer1`.

ECA-ResNet-50d, layer1.0.se: timm EcaModule(256) (Conv1d(1, 1, 5, padding=2, bias=False) over
channels) (timm ecaresnet50d).
Efficient channel attention: spatial mean of 256 channels at 56x56, a 5-tap 1-D convolution
across the channel axis (a 1x5 convolution of the pooled row), sigmoid, and the rescaling of the
input (224x224 image). The twin holds the Conv1d weight [1, 1, 5] as a parameter.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_weight = nn.Parameter(torch.empty(1, 1, 5))

    def forward(self, x):
        y = x.mean((2, 3)).view(x.shape[0], 1, -1)
        y = F.conv1d(y, self.conv_weight, padding=2)
        y = torch.sigmoid(y).view(x.shape[0], -1, 1, 1)
        return x * y.expand_as(x)


def get_inputs():
    return [
        torch.empty(1, 256, 56, 56).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
