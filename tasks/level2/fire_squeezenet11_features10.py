"""PyTorch twin of the task `fire_squeezenet11_features10`.

SqueezeNet 1.1, features.10: torchvision Fire(384, 48, 192, 192)
(torchvision.models.squeezenet1_1).
A Fire module of SqueezeNet 1.1 at 13x13 (224x224 image): squeeze 384 -> 48, expands 48 -> 192
(1x1) and 48 -> 192 (3x3) with ReLUs, concatenated to 384 channels.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.squeeze = nn.Conv2d(384, 48, 1)
        self.squeeze_activation = nn.ReLU(inplace=True)
        self.expand1x1 = nn.Conv2d(48, 192, 1)
        self.expand1x1_activation = nn.ReLU(inplace=True)
        self.expand3x3 = nn.Conv2d(48, 192, 3, padding=1)
        self.expand3x3_activation = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.squeeze_activation(self.squeeze(x))
        return torch.cat(
            [self.expand1x1_activation(self.expand1x1(x)), self.expand3x3_activation(self.expand3x3(x))], 1
        )


def get_inputs():
    return [
        torch.empty(1, 384, 13, 13).uniform_(0, 2),
    ]


def get_init_inputs():
    return []
