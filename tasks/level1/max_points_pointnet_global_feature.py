"""PyTorch twin of the task `max_points_pointnet_global_feature`.

PointNet (classification), feat (PointNetEncoder: x = torch.max(x, 2, keepdim=True)[0]):
torch.max (fxia22/pointnet.pytorch pointnet/model.py).
The symmetric max over 2048 points of the 1024 per-point features, giving the global feature;
features are drawn normal(0, 1) as pre-activation features are roughly normal.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.max(x, 2, keepdim=True)[0]


def get_inputs():
    return [
        torch.empty(1, 1024, 2048).normal_(0.0, 1.0),
    ]


def get_init_inputs():
    return []
