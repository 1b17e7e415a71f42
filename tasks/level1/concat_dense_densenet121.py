"""PyTorch twin of the task `concat_dense_densenet121`.

DenseNet-121, features.denseblock1.denselayer6 (bn_function: torch.cat(inputs, 1)): torch.cat
(torchvision.models.densenet121).
The dense connectivity of the sixth layer of block 1: the block input (64 channels) and the five
earlier layers' 32-channel outputs, concatenated at 56x56.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x0, x1, x2, x3, x4, x5):
        return torch.cat([x0, x1, x2, x3, x4, x5], 1)


def get_inputs():
    return [
        torch.empty(1, 64, 56, 56).uniform_(-1, 1),
        torch.empty(1, 32, 56, 56).uniform_(-1, 1),
        torch.empty(1, 32, 56, 56).uniform_(-1, 1),
        torch.empty(1, 32, 56, 56).uniform_(-1, 1),
        torch.empty(1, 32, 56, 56).uniform_(-1, 1),
        torch.empty(1, 32, 56, 56).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
