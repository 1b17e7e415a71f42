"""PyTorch twin of the task `sum_pillar_points_pointpillars`.

PointPillars (KITTI), vfe (PillarVFE: voxel_features[:, :, :3].sum(dim=1, keepdim=True)):
torch.Tensor.sum (open-mmlab/OpenPCDet pcdet/models/backbones_3d/vfe/pillar_vfe.py).
Sum of the xyz coordinates of the up to 32 points of each of 12000 pillars (the numerator of the
pillar's point mean), from the [x, y, z, intensity] point features.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, voxel_features):
        return voxel_features[:, :, :3].sum(dim=1, keepdim=True)


def get_inputs():
    return [
        torch.empty(12000, 32, 4).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
