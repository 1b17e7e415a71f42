"""PyTorch twin of the task `concat_fire_squeezenet11`.

SqueezeNet 1.1, features.3 (Fire): torch.cat([expand1x1, expand3x3], 1)
(torchvision.models.squeezenet1_1).
The Fire module's concatenation of its two 64-channel expand branches at 55x55.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, e1, e3):
        return torch.cat([e1, e3], 1)


def get_inputs():
    return [
        torch.empty(1, 64, 55, 55).uniform_(-1, 1),
        torch.empty(1, 64, 55, 55).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
