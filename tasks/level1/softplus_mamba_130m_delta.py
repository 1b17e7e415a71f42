"""PyTorch twin of the task `softplus_mamba_130m_delta`.

Mamba-130M, layers.0.mixer (selective scan: delta = softplus(delta + delta_bias)):
torch.nn.functional.softplus (state-spaces/mamba mamba_ssm/ops/selective_scan_interface.py).
Softplus of the time steps (d_inner 1536) for a 512-token sequence; inputs cover the small steps
the dt bias initialisation gives and the linear region.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        return F.softplus(x)


def get_inputs():
    return [
        torch.empty(1, 1536, 512).uniform_(-6, 2),
    ]


def get_init_inputs():
    return []
