"""PyTorch twin of the task `dcgan_generator_64`.

DCGAN generator, full model: Generator(nz=100, ngf=64, nc=3): ConvTranspose2d(100, 512, 4, 1,
0), 3x ConvTranspose2d(4, 2, 1) to 256, 128, 64 (each + BatchNorm2d + ReLU), ConvTranspose2d(64,
3, 4, 2, 1) + Tanh (pytorch/examples dcgan/main.py).
The whole DCGAN generator: one 100-d latent vector (normal(0, 1)) to a 64x64 RGB image, batch 1,
inference form. Transposed-convolution weights are drawn normal(0, 0.02) as the example's
weights_init does; batch norm with running statistics. The output is the tanh image.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.main_0_weight = nn.Parameter(torch.empty(100, 512, 4, 4))
        self.main_3_weight = nn.Parameter(torch.empty(512, 256, 4, 4))
        self.main_6_weight = nn.Parameter(torch.empty(256, 128, 4, 4))
        self.main_9_weight = nn.Parameter(torch.empty(128, 64, 4, 4))
        self.main_12_weight = nn.Parameter(torch.empty(64, 3, 4, 4))
        self.main_1 = nn.BatchNorm2d(512)
        self.main_4 = nn.BatchNorm2d(256)
        self.main_7 = nn.BatchNorm2d(128)
        self.main_10 = nn.BatchNorm2d(64)

    def forward(self, z):
        main_3 = F.conv_transpose2d(F.relu(self.main_1(F.conv_transpose2d(z, self.main_0_weight, stride=1))), self.main_3_weight, stride=2, padding=1)
        main_6 = F.conv_transpose2d(F.relu(self.main_4(main_3)), self.main_6_weight, stride=2, padding=1)
        main_9 = F.conv_transpose2d(F.relu(self.main_7(main_6)), self.main_9_weight, stride=2, padding=1)
        main_12 = F.conv_transpose2d(F.relu(self.main_10(main_9)), self.main_12_weight, stride=2, padding=1)
        main_13 = torch.tanh(main_12)
        return main_13


def get_inputs():
    return [
        torch.empty(1, 100, 1, 1).normal_(0.0, 1.0),
    ]


def get_init_inputs():
    return []
