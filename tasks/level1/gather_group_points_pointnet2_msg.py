"""PyTorch twin of the task `gather_group_points_pointnet2_msg`.

PointNet++ (MSG classification), sa2 (PointNetSetAbstractionMsg, third scale: grouped_points =
index_points(points, group_idx)): index_points (points[batch_indices, idx, :])
(yanx27/Pointnet_Pointnet2_pytorch models/pointnet2_utils.py).
Grouping for the widest scale of the second multi-scale set abstraction (radius 0.8): the 320-d
features of the 512 points left after the first level are gathered for 128 centroids x 128 ball-
query neighbours (indices in [0, 512)); features non-negative (after the first level's ReLU MLPs and
max pooling).
"""

import torch
import torch.nn as nn


def index_points(points, idx):
    device = points.device
    B = points.shape[0]
    view_shape = list(idx.shape)
    view_shape[1:] = [1] * (len(view_shape) - 1)
    repeat_shape = list(idx.shape)
    repeat_shape[0] = 1
    batch_indices = torch.arange(B, dtype=torch.long).to(device).view(view_shape).repeat(repeat_shape)
    new_points = points[batch_indices, idx, :]
    return new_points


class Model(nn.Module):
    def forward(self, points, group_idx):
        return index_points(points, group_idx)


def get_inputs():
    return [
        torch.empty(1, 512, 320).uniform_(0, 2),
        torch.randint(0, 512, (1, 128, 128)),
    ]


def get_init_inputs():
    return []
