"""PyTorch twin of the task `linear_convnext_tiny_stage4_fc1`.

ConvNeXt-Tiny, features.7.0.block.3: torch.nn.Linear(768, 3072) (torchvision.models.convnext_tiny
(CNBlock)).
The first pointwise (inverted-bottleneck) linear of the last stage, channels last: 7x7 positions of
a 224x224 image, 768 -> 3072 features, with bias.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features, bias):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=bias)

    def forward(self, x):
        return self.linear(x)


def get_inputs():
    return [
        torch.empty(1, 7, 7, 768).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [768, 3072, True]
