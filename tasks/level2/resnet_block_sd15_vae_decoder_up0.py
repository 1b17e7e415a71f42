"""PyTorch twin of the task `resnet_block_sd15_vae_decoder_up0`.

Stable Diffusion 1.5 VAE, decoder.up_blocks.0.resnets.0: ResnetBlock2D(in_channels=512,
out_channels=512, temb_channels=None, groups=32, eps=1e-06) (huggingface/diffusers
src/diffusers/models/resnet.py).
A ResNet block of the VAE decoder (no time embedding, eps 1e-6, 512 channels): GroupNorm(32),
SiLU, 3x3 convolution 512 -> 512, GroupNorm(32), SiLU, 3x3 convolution 512 -> 512, residual add
(output_scale_factor 1). The latent is reduced to 8x8 so that the block stays under 700 MFLOP;
channels are the model's.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1 = nn.GroupNorm(32, 512, eps=1e-06)
        self.conv1 = nn.Conv2d(512, 512, 3, padding=1)
        self.norm2 = nn.GroupNorm(32, 512, eps=1e-06)
        self.conv2 = nn.Conv2d(512, 512, 3, padding=1)

    def forward(self, input_tensor):
        norm1 = self.norm1(input_tensor)
        silu1 = F.silu(norm1)
        conv1 = self.conv1(silu1)
        norm2 = self.norm2(conv1)
        silu2 = F.silu(norm2)
        conv2 = self.conv2(silu2)
        output_tensor = input_tensor + conv2
        return output_tensor


def get_inputs():
    return [
        torch.empty(1, 512, 8, 8).normal_(0, 1),
    ]


def get_init_inputs():
    return []
