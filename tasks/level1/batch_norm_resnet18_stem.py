"""PyTorch twin of the task `batch_norm_resnet18_stem`.

ResNet-18, bn1: torch.nn.BatchNorm2d(64) (inference) (torchvision.models.resnet18).
Inference-mode batch norm of the stem convolution's 64x112x112 output (224x224 image), with
running statistics.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels, eps):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels, eps=eps)

    def forward(self, x):
        return self.bn(x)


def get_inputs():
    return [
        torch.empty(1, 64, 112, 112).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [64, 1e-05]
