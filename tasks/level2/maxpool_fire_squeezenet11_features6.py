"""PyTorch twin of the task `maxpool_fire_squeezenet11_features6`.

SqueezeNet 1.1, features.5-6: torch.nn.MaxPool2d(3, 2, ceil_mode=True) + torchvision Fire(128,
32, 128, 128) (torchvision.models.squeezenet1_1).
The max pool (3x3, stride 2, ceil mode; 55x55 -> 27x27) and the Fire module after it: squeeze
128 -> 32, expands 32 -> 128 + 128 with ReLUs and concatenation (224x224 image).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True)
        self.squeeze = nn.Conv2d(128, 32, 1)
        self.squeeze_activation = nn.ReLU(inplace=True)
        self.expand1x1 = nn.Conv2d(32, 128, 1)
        self.expand1x1_activation = nn.ReLU(inplace=True)
        self.expand3x3 = nn.Conv2d(32, 128, 3, padding=1)
        self.expand3x3_activation = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.pool(x)
        x = self.squeeze_activation(self.squeeze(x))
        return torch.cat(
            [self.expand1x1_activation(self.expand1x1(x)), self.expand3x3_activation(self.expand3x3(x))], 1
        )


def get_inputs():
    return [
        torch.empty(1, 128, 55, 55).uniform_(0, 2),
    ]


def get_init_inputs():
    return []
