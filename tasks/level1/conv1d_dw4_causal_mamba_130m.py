"""PyTorch twin of the task `conv1d_dw4_causal_mamba_130m`.

Mamba-130M (state-spaces/mamba-130m), layers.0.mixer.conv1d: torch.nn.Conv1d(1536, 1536,
kernel_size=4, groups=1536, padding=3) + [..., :seqlen] (state-spaces/mamba
mamba_ssm/modules/mamba_simple.py (Mamba.forward without the causal_conv1d kernel)).
The causal depthwise convolution of the selective-scan block for a 1024-token prefill: d_inner =
1536 channels, kernel 4 with bias, padded 3 on both sides and cut back to the first 1024 outputs so
that each output sees only its own and the 3 previous tokens (the SiLU after it is left out).
Written as a depthwise 2-D convolution over a height-1 image.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, d_inner, d_conv):
        super().__init__()
        # The parameters of nn.Conv1d(d_inner, d_inner, bias=True, kernel_size=d_conv, groups=d_inner,
        # padding=d_conv - 1), applied functionally.
        self.weight = nn.Parameter(torch.empty(d_inner, 1, d_conv))
        self.bias = nn.Parameter(torch.empty(d_inner))
        self.d_inner = d_inner
        self.d_conv = d_conv

    def forward(self, x):
        seqlen = x.shape[-1]
        x = F.conv1d(x, self.weight, self.bias, padding=self.d_conv - 1, groups=self.d_inner)
        return x[..., :seqlen]


def get_inputs():
    return [
        torch.empty(1, 1536, 1024).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [1536, 4]
