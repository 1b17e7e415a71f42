"""PyTorch twin of the task `cond_resblock1d_diffusion_policy_down0`.

Diffusion Policy (CNN, Push-T image), model.down_modules.0.0: ConditionalResidualBlock1D(2, 512,
cond_dim=1156, kernel_size=5, n_groups=8, cond_predict_scale=True) (real-
stanford/diffusion_policy diffusion_policy/model/diffusion/conditional_unet1d.py).
The first conditional residual block of the 1-D U-Net denoiser of a CNN diffusion policy (Push-T
with images): the noisy action sequence (2-D actions, horizon 16) through Conv1d 5 -> 512,
GroupNorm(8), Mish, FiLM from the 1156-dimensional condition (Mish, Linear to scale and bias),
Conv1d 512 -> 512, GroupNorm, Mish, plus the 1x1 residual convolution 2 -> 512.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.out_channels = 512
        self.blocks0_conv_weight = nn.Parameter(torch.empty(512, 2, 5))
        self.blocks0_conv_bias = nn.Parameter(torch.zeros(512))
        self.blocks1_conv_weight = nn.Parameter(torch.empty(512, 512, 5))
        self.blocks1_conv_bias = nn.Parameter(torch.zeros(512))
        self.residual_conv_weight = nn.Parameter(torch.empty(512, 2, 1))
        self.residual_conv_bias = nn.Parameter(torch.zeros(512))
        self.blocks0_norm = nn.GroupNorm(8, 512)
        self.cond_linear = nn.Linear(1156, 1024)
        self.blocks1_norm = nn.GroupNorm(8, 512)
        self.mish = nn.Mish()

    def forward(self, x, cond):
        def conv1d_block(i, v):
            # Conv1dBlock: Conv1d(padding=k // 2), GroupNorm, Mish
            w, b = getattr(self, f"blocks{i}_conv_weight"), getattr(self, f"blocks{i}_conv_bias")
            v = F.conv1d(v, w, b, padding=w.shape[-1] // 2)
            return self.mish(getattr(self, f"blocks{i}_norm")(v))

        out = conv1d_block(0, x)
        embed = self.cond_linear(self.mish(cond)).unsqueeze(-1)  # cond_encoder: Mish, Linear, 'batch t -> batch t 1'
        embed = embed.reshape(embed.shape[0], 2, self.out_channels, 1)
        scale = embed[:, 0, ...]
        bias = embed[:, 1, ...]
        out = scale * out + bias
        out = conv1d_block(1, out)
        return out + F.conv1d(x, self.residual_conv_weight, self.residual_conv_bias)


def get_inputs():
    return [
        torch.empty(1, 2, 16).uniform_(-1, 1),
        torch.empty(1, 1156).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
