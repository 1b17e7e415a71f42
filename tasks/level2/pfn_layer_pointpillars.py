"""PyTorch twin of the task `pfn_layer_pointpillars`.

PointPillars (KITTI), vfe.pfn_layers.0: PFNLayer(10, 64, use_norm=True, last_layer=True):
Linear(10, 64, bias=False) + BatchNorm1d(64, eps=1e-3, momentum=0.01) + ReLU + max over points
(open-mmlab/OpenPCDet pcdet/models/backbones_3d/vfe/pillar_vfe.py).
The pillar feature net: each of 4096 pillars holds 32 points with 10 decorated features (x, y,
z, reflectance, offsets to the points' mean and to the pillar centre); a shared linear 10 -> 64,
batch norm over the 64 channels (as BatchNorm1d on the permuted tensor), ReLU, and the max over
the points of each pillar. 4096 non-empty pillars is a typical KITTI frame.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(10, 64, bias=False)
        self.norm = nn.BatchNorm1d(64, eps=0.001, momentum=0.01)

    def forward(self, inputs):
        x = self.linear(inputs)
        x = self.norm(x.permute(0, 2, 1)).permute(0, 2, 1)
        x = F.relu(x)
        x_max = torch.max(x, dim=1, keepdim=True)[0]
        return x_max


def get_inputs():
    return [
        torch.empty(4096, 32, 10).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
