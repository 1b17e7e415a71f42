"""PyTorch twin of the task `timestep_embedding_diffusion_policy`.

Diffusion Policy (CNN, Push-T image), model.diffusion_step_encoder: SinusoidalPosEmb(128) +
Linear(128, 512) + Mish + Linear(512, 128) (real-stanford/diffusion_policy
diffusion_policy/model/diffusion/conditional_unet1d.py).
The diffusion-step encoder of a CNN diffusion policy, for a batch of 64 denoising requests (8
environments x 8 candidate action sequences): sinusoidal embedding of the timestep (exp(-i
log(10000)/63) frequencies from iota, sin and cos), Linear 128 -> 512, Mish, Linear 512 -> 128.
Timesteps are drawn from [0, 100) (100 DDPM steps).
"""

import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.dim = 128
        self.linear1 = nn.Linear(128, 512)
        self.mish = nn.Mish()
        self.linear2 = nn.Linear(512, 128)

    def forward(self, timestep):
        # SinusoidalPosEmb
        half_dim = self.dim // 2
        emb = math.log(10000) / (half_dim - 1)
        emb = torch.exp(torch.arange(half_dim, dtype=timestep.dtype, device=timestep.device) * -emb)
        emb = timestep[:, None] * emb[None, :]
        emb = torch.cat((emb.sin(), emb.cos()), dim=-1)
        return self.linear2(self.mish(self.linear1(emb)))


def get_inputs():
    return [
        torch.empty(64).uniform_(0, 100),
    ]


def get_init_inputs():
    return []
