"""PyTorch twin of the task `pixel_shuffle_espcn_x3`.

ESPCN (x3 super-resolution), pixel_shuffle: torch.nn.PixelShuffle(3) (pytorch/examples
super_resolution/model.py).
Sub-pixel upscaling of the luminance of a 320x180 frame to 960x540: 9 channels into a 3x3 block
each (reshape and transpose).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.PixelShuffle(3)

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [
        torch.empty(1, 9, 180, 320).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
