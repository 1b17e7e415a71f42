"""PyTorch twin of the task `add_resnet18_residual`.

ResNet-18, layer1.0 (BasicBlock: out += identity): torch.Tensor.__iadd__
(torchvision.models.resnet18).
The residual addition of the first basic block: 64 channels at 56x56 for a 224x224 image.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, residual, identity):
        # The block's `out += identity`, on its residual branch's output.
        residual += identity
        return residual


def get_inputs():
    return [
        torch.empty(1, 64, 56, 56).uniform_(-1, 1),
        torch.empty(1, 64, 56, 56).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
