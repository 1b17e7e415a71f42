"""PyTorch twin of the task `whisper_tiny_encoder_1s`.

Whisper tiny, encoder: whisper AudioEncoder(n_mels=80, n_ctx reduced, n_state=384, n_head=6,
n_layer=4): conv1, GELU, conv2 (stride 2), GELU, sinusoidal positional embedding, 4
ResidualAttentionBlocks, ln_post (openai/whisper whisper/model.py).
The whole Whisper-tiny audio encoder on 1 s of audio (100 log-mel frames of 80 bands, values in
[-1, 1] as Whisper's (log-mel + 4) / 4 scaling gives), batch 1. Whisper pads audio to 30 s (3000
frames, 1500 positions); here the audio context is 50 positions, as whisper.cpp's audio_ctx
option shortens it for short commands, so the f64 reference stays fast. The sinusoidal
positional embedding is computed in the graph (iota, exp, sin, cos); the convolutions are Conv1d
written as 1xK conv2d on a [1, C, 1, L] view; attention scales q and k by head_dim^-0.25 each
(one scale of head_dim^-0.5 in the graph).
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def sinusoids(length, channels, max_timescale=10000, dtype=torch.float32, device=None):
    """Returns sinusoids for positional embedding (whisper.model.sinusoids, in the model's dtype)."""
    assert channels % 2 == 0
    log_timescale_increment = math.log(max_timescale) / (channels // 2 - 1)
    inv_timescales = torch.exp(-log_timescale_increment * torch.arange(channels // 2, dtype=dtype, device=device))
    scaled_time = torch.arange(length, dtype=dtype, device=device)[:, None] * inv_timescales[None, :]
    return torch.cat([torch.sin(scaled_time), torch.cos(scaled_time)], dim=1)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1_weight = nn.Parameter(torch.empty(384, 80, 3))
        self.conv1_bias = nn.Parameter(torch.empty(384))
        self.conv2_weight = nn.Parameter(torch.empty(384, 384, 3))
        self.conv2_bias = nn.Parameter(torch.empty(384))
        self.blocks_0_attn_ln = nn.LayerNorm(384)
        self.blocks_0_attn_query = nn.Linear(384, 384)
        self.blocks_0_attn_key = nn.Linear(384, 384, bias=False)
        self.blocks_0_attn_value = nn.Linear(384, 384)
        self.blocks_0_attn_out = nn.Linear(384, 384)
        self.blocks_0_mlp_ln = nn.LayerNorm(384)
        self.blocks_0_mlp_0 = nn.Linear(384, 1536)
        self.blocks_0_mlp_2 = nn.Linear(1536, 384)
        self.blocks_1_attn_ln = nn.LayerNorm(384)
        self.blocks_1_attn_query = nn.Linear(384, 384)
        self.blocks_1_attn_key = nn.Linear(384, 384, bias=False)
        self.blocks_1_attn_value = nn.Linear(384, 384)
        self.blocks_1_attn_out = nn.Linear(384, 384)
        self.blocks_1_mlp_ln = nn.LayerNorm(384)
        self.blocks_1_mlp_0 = nn.Linear(384, 1536)
        self.blocks_1_mlp_2 = nn.Linear(1536, 384)
        self.blocks_2_attn_ln = nn.LayerNorm(384)
        self.blocks_2_attn_query = nn.Linear(384, 384)
        self.blocks_2_attn_key = nn.Linear(384, 384, bias=False)
        self.blocks_2_attn_value = nn.Linear(384, 384)
        self.blocks_2_attn_out = nn.Linear(384, 384)
        self.blocks_2_mlp_ln = nn.LayerNorm(384)
        self.blocks_2_mlp_0 = nn.Linear(384, 1536)
        self.blocks_2_mlp_2 = nn.Linear(1536, 384)
        self.blocks_3_attn_ln = nn.LayerNorm(384)
        self.blocks_3_attn_query = nn.Linear(384, 384)
        self.blocks_3_attn_key = nn.Linear(384, 384, bias=False)
        self.blocks_3_attn_value = nn.Linear(384, 384)
        self.blocks_3_attn_out = nn.Linear(384, 384)
        self.blocks_3_mlp_ln = nn.LayerNorm(384)
        self.blocks_3_mlp_0 = nn.Linear(384, 1536)
        self.blocks_3_mlp_2 = nn.Linear(1536, 384)
        self.ln_post = nn.LayerNorm(384)

    def forward(self, mel):
        x = F.gelu(F.conv1d(mel, self.conv1_weight, self.conv1_bias, padding=1))
        x = F.gelu(F.conv1d(x, self.conv2_weight, self.conv2_bias, stride=2, padding=1))
        x = x.permute(0, 2, 1)
        x = x + sinusoids(50, 384, dtype=x.dtype, device=x.device)
        # blocks.0
        xa = self.blocks_0_attn_ln(x)
        q = self.blocks_0_attn_query(xa).view(1, 50, 6, -1).permute(0, 2, 1, 3) * 0.3535533905932738
        k = self.blocks_0_attn_key(xa).view(1, 50, 6, -1).permute(0, 2, 3, 1) * 0.3535533905932738
        v = self.blocks_0_attn_value(xa).view(1, 50, 6, -1).permute(0, 2, 1, 3)
        w = F.softmax(q @ k, dim=-1)
        wv = (w @ v).permute(0, 2, 1, 3).flatten(start_dim=2)
        x = x + self.blocks_0_attn_out(wv)
        blocks_0_mlp_2 = self.blocks_0_mlp_2(F.gelu(self.blocks_0_mlp_0(self.blocks_0_mlp_ln(x))))
        x = x + blocks_0_mlp_2
        # blocks.1
        xa = self.blocks_1_attn_ln(x)
        q = self.blocks_1_attn_query(xa).view(1, 50, 6, -1).permute(0, 2, 1, 3) * 0.3535533905932738
        k = self.blocks_1_attn_key(xa).view(1, 50, 6, -1).permute(0, 2, 3, 1) * 0.3535533905932738
        v = self.blocks_1_attn_value(xa).view(1, 50, 6, -1).permute(0, 2, 1, 3)
        w = F.softmax(q @ k, dim=-1)
        wv = (w @ v).permute(0, 2, 1, 3).flatten(start_dim=2)
        x = x + self.blocks_1_attn_out(wv)
        blocks_1_mlp_2 = self.blocks_1_mlp_2(F.gelu(self.blocks_1_mlp_0(self.blocks_1_mlp_ln(x))))
        x = x + blocks_1_mlp_2
        # blocks.2
        xa = self.blocks_2_attn_ln(x)
        q = self.blocks_2_attn_query(xa).view(1, 50, 6, -1).permute(0, 2, 1, 3) * 0.3535533905932738
        k = self.blocks_2_attn_key(xa).view(1, 50, 6, -1).permute(0, 2, 3, 1) * 0.3535533905932738
        v = self.blocks_2_attn_value(xa).view(1, 50, 6, -1).permute(0, 2, 1, 3)
        w = F.softmax(q @ k, dim=-1)
        wv = (w @ v).permute(0, 2, 1, 3).flatten(start_dim=2)
        x = x + self.blocks_2_attn_out(wv)
        blocks_2_mlp_2 = self.blocks_2_mlp_2(F.gelu(self.blocks_2_mlp_0(self.blocks_2_mlp_ln(x))))
        x = x + blocks_2_mlp_2
        # blocks.3
        xa = self.blocks_3_attn_ln(x)
        q = self.blocks_3_attn_query(xa).view(1, 50, 6, -1).permute(0, 2, 1, 3) * 0.3535533905932738
        k = self.blocks_3_attn_key(xa).view(1, 50, 6, -1).permute(0, 2, 3, 1) * 0.3535533905932738
        v = self.blocks_3_attn_value(xa).view(1, 50, 6, -1).permute(0, 2, 1, 3)
        w = F.softmax(q @ k, dim=-1)
        wv = (w @ v).permute(0, 2, 1, 3).flatten(start_dim=2)
        x = x + self.blocks_3_attn_out(wv)
        blocks_3_mlp_2 = self.blocks_3_mlp_2(F.gelu(self.blocks_3_mlp_0(self.blocks_3_mlp_ln(x))))
        x = x + blocks_3_mlp_2
        ln_post = self.ln_post(x)
        return ln_post


def get_inputs():
    return [
        torch.empty(1, 80, 100).uniform_(-1.0, 1.0),
    ]


def get_init_inputs():
    return []
