"""PyTorch twin of the task `espcn_x3_64x96`.

ESPCN (x3), full model: ESPCN(scale_factor=3, num_channels=1): first_part (Conv2d 5x5 1 -> 64,
Tanh, Conv2d 3x3 64 -> 32, Tanh), last_part (Conv2d 3x3 32 -> 9, PixelShuffle(3))
(yjn870/ESPCN-pytorch models.py).
The whole ESPCN x3 super-resolution network on the luminance of a 64x96 frame (values in [0, 1])
giving 192x288, batch 1; the pixel shuffle is a reshape to [1, 1, 3, 3, H, W], a transpose and a
reshape. Weights are drawn at He scale (bound sqrt(6 / fan_in)) as the model's own normal init
does. The output is the upscaled luminance.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.first_part_0 = nn.Conv2d(1, 64, 5, padding=2)
        self.first_part_2 = nn.Conv2d(64, 32, 3, padding=1)
        self.last_part_0 = nn.Conv2d(32, 9, 3, padding=1)

    def forward(self, x):
        last_part_0 = self.last_part_0(torch.tanh(self.first_part_2(torch.tanh(self.first_part_0(x)))))
        last_part_1 = F.pixel_shuffle(last_part_0, 3)
        return last_part_1


def get_inputs():
    return [
        torch.empty(1, 1, 64, 96).uniform_(0.0, 1.0),
    ]


def get_init_inputs():
    return []
