"""PyTorch twin of the task `resnet_block_sd15_down0`.

Stable Diffusion 1.5 UNet, down_blocks.0.resnets.0: ResnetBlock2D(in_channels=320,
out_channels=320, temb_channels=1280, groups=32, eps=1e-05) (huggingface/diffusers
src/diffusers/models/resnet.py).
The first ResNet block of the Stable Diffusion 1.5 UNet: GroupNorm(32), SiLU, 3x3 convolution
320 -> 320, plus the projected time embedding (SiLU, Linear 1280 -> 320) per channel,
GroupNorm(32), SiLU, 3x3 convolution 320 -> 320, residual add (output_scale_factor 1). The
latent is reduced to 12x12 so that the block stays under 700 MFLOP; channels are the model's.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1 = nn.GroupNorm(32, 320)
        self.conv1 = nn.Conv2d(320, 320, 3, padding=1)
        self.time_emb_proj = nn.Linear(1280, 320)
        self.norm2 = nn.GroupNorm(32, 320)
        self.conv2 = nn.Conv2d(320, 320, 3, padding=1)

    def forward(self, input_tensor, temb):
        norm1 = self.norm1(input_tensor)
        silu1 = F.silu(norm1)
        conv1 = self.conv1(silu1)
        temb_silu = F.silu(temb)
        time_emb_proj = self.time_emb_proj(temb_silu)
        temb_4d = time_emb_proj[:, :, None, None]
        temb_add = conv1 + temb_4d
        norm2 = self.norm2(temb_add)
        silu2 = F.silu(norm2)
        conv2 = self.conv2(silu2)
        output_tensor = input_tensor + conv2
        return output_tensor


def get_inputs():
    return [
        torch.empty(1, 320, 12, 12).normal_(0, 1),
        torch.empty(1, 1280).normal_(0, 1),
    ]


def get_init_inputs():
    return []
