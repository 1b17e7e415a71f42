"""PyTorch twin of the task `gemv_mobilenetv2_classifier`.

MobileNetV2, classifier.1: torch.nn.Linear(1280, 1000) (torchvision.models.mobilenet_v2).
The ImageNet classifier on the pooled 1280-d feature of one image: a matrix-vector product that
streams 5 MB of weights.
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
        torch.empty(1, 1280).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [1280, 1000, True]
