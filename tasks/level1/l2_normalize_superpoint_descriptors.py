"""PyTorch twin of the task `l2_normalize_superpoint_descriptors`.

SuperPoint, forward (descriptors = torch.nn.functional.normalize(descriptors, p=2, dim=1)):
torch.nn.functional.normalize (magicleap/SuperGluePretrainedNetwork models/superpoint.py).
L2 normalisation of the dense 256-d descriptors over the channel axis for a 640x480 image (60x80
cells): x / max(sqrt(sum(x^2)), 1e-12).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, descriptors):
        return torch.nn.functional.normalize(descriptors, p=2, dim=1)


def get_inputs():
    return [
        torch.empty(1, 256, 60, 80).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
