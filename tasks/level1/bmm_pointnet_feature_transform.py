"""PyTorch twin of the task `bmm_pointnet_feature_transform`.

PointNet (classification, feature transform), feat (x = torch.bmm(x, trans_feat)): torch.bmm
(fxia22/pointnet.pytorch pointnet/model.py).
The learned 64x64 feature alignment applied to the 64-d features of 1024 points, for a batch of
8 object clusters segmented from one LiDAR frame.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, trans_feat):
        return torch.bmm(x, trans_feat)


def get_inputs():
    return [
        torch.empty(8, 1024, 64).uniform_(-1, 1),
        torch.empty(8, 64, 64).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
