"""PyTorch twin of the task `fire_squeezenet11_features3`.

SqueezeNet 1.1, features.3: torchvision Fire(64, 16, 64, 64) (torchvision.models.squeezenet1_1).
The first Fire module of SqueezeNet 1.1 at 55x55 (224x224 image): 1x1 squeeze 64 -> 16 with
ReLU, then 1x1 and 3x3 expands 16 -> 64 each with ReLU, concatenated to 128 channels.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.squeeze = nn.Conv2d(64, 16, 1)
        self.squeeze_activation = nn.ReLU(inplace=True)
        self.expand1x1 = nn.Conv2d(16, 64, 1)
        self.expand1x1_activation = nn.ReLU(inplace=True)
        self.expand3x3 = nn.Conv2d(16, 64, 3, padding=1)
        self.expand3x3_activation = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.squeeze_activation(self.squeeze(x))
        return torch.cat(
            [self.expand1x1_activation(self.expand1x1(x)), self.expand3x3_activation(self.expand3x3(x))], 1
        )


def get_inputs():
    return [
        torch.empty(1, 64, 55, 55).uniform_(0, 2),
    ]


def get_init_inputs():
    return []
