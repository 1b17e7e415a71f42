"""PyTorch twin of the task `fire_squeezenet11_features12`.

SqueezeNet 1.1, features.12: torchvision Fire(512, 64, 256, 256)
(torchvision.models.squeezenet1_1).
The last Fire module of SqueezeNet 1.1 at 13x13 (224x224 image): squeeze 512 -> 64, expands 64
-> 256 + 256 with ReLUs, concatenated to 512 channels.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.squeeze = nn.Conv2d(512, 64, 1)
        self.squeeze_activation = nn.ReLU(inplace=True)
        self.expand1x1 = nn.Conv2d(64, 256, 1)
        self.expand1x1_activation = nn.ReLU(inplace=True)
        self.expand3x3 = nn.Conv2d(64, 256, 3, padding=1)
        self.expand3x3_activation = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.squeeze_activation(self.squeeze(x))
        return torch.cat(
            [self.expand1x1_activation(self.expand1x1(x)), self.expand3x3_activation(self.expand3x3(x))], 1
        )


def get_inputs():
    return [
        torch.empty(1, 512, 13, 13).uniform_(0, 2),
    ]


def get_init_inputs():
    return []
