"""PyTorch twin of the task `conv1d_k127_s64_moonshine_tiny_stem`.

Moonshine Tiny (UsefulSensors/moonshine-tiny), model.encoder.conv1: torch.nn.Conv1d(1, 288,
kernel_size=127, stride=64, bias=False) (transformers MoonshineEncoder).
The first convolution of the edge speech recogniser's learned front end on 10 s of 16 kHz audio in
[-1, 1]: a long kernel (127 samples, about 8 ms) with stride 64, 160000 samples -> 288 channels x
2499 frames (the tanh after it is left out). Written as a 2-D convolution over a height-1 image.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super().__init__()
        # The parameter of nn.Conv1d(1, 288, kernel_size=127, stride=64, bias=False), applied functionally.
        self.weight = nn.Parameter(torch.empty(out_channels, in_channels, kernel_size))
        self.stride = stride

    def forward(self, x):
        return F.conv1d(x, self.weight, stride=self.stride)


def get_inputs():
    return [
        torch.empty(1, 1, 160000).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [1, 288, 127, 64]
