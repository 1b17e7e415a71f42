"""PyTorch twin of the task `pad_replicate_raft_sintel`.

RAFT (optical flow), InputPadder.pad (mode 'sintel'): torch.nn.functional.pad(mode='replicate')
(princeton-vl/RAFT core/utils/utils.py).
Replicate padding of a 1024x436 Sintel frame to a multiple of 8 in height (2 rows at the top and
2 at the bottom).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        return F.pad(x, [0, 0, 2, 2], mode="replicate")


def get_inputs():
    return [
        torch.empty(1, 3, 436, 1024).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
