"""PyTorch twin of the task `group_norm_sd15_unet`.

Stable Diffusion v1.5 UNet, up_blocks.3.resnets.0.norm1: torch.nn.GroupNorm(num_groups=32,
num_channels=960, eps=1e-05, affine=True) (diffusers ResnetBlock2D (runwayml/stable-
diffusion-v1-5)).
Group normalisation opening the first ResNet block of the last up block, whose input concatenates
the 640 upsampled channels with the 320-channel skip: 960 channels in 32 groups of 30, each group
normalised over its channels and the 64x64 latent of a 512x512 image, then a per-channel scale and
shift.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1 = nn.GroupNorm(num_groups=32, num_channels=960, eps=1e-05, affine=True)

    def forward(self, hidden_states):
        return self.norm1(hidden_states)


def get_inputs():
    return [
        torch.empty(1, 960, 64, 64).normal_(0.0, 1.0),
    ]


def get_init_inputs():
    return []
