"""PyTorch twin of the task `instance_norm_fast_neural_style`.

Fast neural style (TransformerNet), in1: torch.nn.InstanceNorm2d(32, affine=True) (pytorch/examples
fast_neural_style/neural_style/transformer_net.py).
Instance normalisation after the first 9x9 convolution of the style-transfer network: each of the 32
channels of a 256x256 image normalised over its own positions, then scaled and shifted (a group norm
with one channel per group).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, num_features):
        super().__init__()
        # The affine parameters of torch.nn.InstanceNorm2d(num_features, affine=True), applied with
        # F.instance_norm (statistics of each instance; no running statistics are tracked).
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))

    def forward(self, x):
        return F.instance_norm(x, weight=self.weight, bias=self.bias, eps=1e-05)


def get_inputs():
    return [
        torch.empty(1, 32, 256, 256).normal_(0.0, 2.0),
    ]


def get_init_inputs():
    return [32]
