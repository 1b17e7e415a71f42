"""PyTorch twin of the task `timestep_embedding_sd15`.

Stable Diffusion 1.5 UNet, time_proj + time_embedding: Timesteps(320, flip_sin_to_cos=True,
downscale_freq_shift=0) + TimestepEmbedding(320, 1280) (huggingface/diffusers
src/diffusers/models/embeddings.py).
The timestep embedding of the Stable Diffusion 1.5 UNet for a classifier-free-guidance batch of
2: sinusoidal embedding (frequencies exp(-i log(10000)/160) from iota, cos and sin, flipped so
cos comes first), Linear 320 -> 1280, SiLU, Linear 1280 -> 1280. Timesteps are drawn from [0,
1000).
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear_1 = nn.Linear(320, 1280)
        self.linear_2 = nn.Linear(1280, 1280)

    def forward(self, timesteps):
        arange = torch.arange(start=0, end=160, dtype=timesteps.dtype, device=timesteps.device)
        arange_f = arange
        neg_log_max = -math.log(10000) / 160
        exponent = arange_f * neg_log_max
        freqs = torch.exp(exponent)
        t_col = timesteps[:, None]
        f_row = freqs[None, :]
        emb = t_col * f_row
        sin = torch.sin(emb)
        cos = torch.cos(emb)
        t_emb = torch.cat([cos, sin], 1)
        linear_1 = self.linear_1(t_emb)
        silu = F.silu(linear_1)
        linear_2 = self.linear_2(silu)
        return linear_2


def get_inputs():
    return [
        torch.empty(2).uniform_(0, 1000),
    ]


def get_init_inputs():
    return []
