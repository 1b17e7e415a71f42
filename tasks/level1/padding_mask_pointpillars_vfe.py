"""PyTorch twin of the task `padding_mask_pointpillars_vfe`.

PointPillars (KITTI), vfe (PillarVFE: get_paddings_indicator, features *= mask): torch.Tensor.__gt__
+ torch.Tensor.__imul__ (open-mmlab/OpenPCDet pcdet/models/backbones_3d/vfe/pillar_vfe.py).
Zeroing the padded point slots of 12000 pillars x 32 points x 10 decorated features: a slot is kept
when its index is below the pillar's point count (1 to 32; arange compared with the counts,
broadcast), and the mask multiplies the features.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    @staticmethod
    def get_paddings_indicator(actual_num, max_num, axis=0):
        actual_num = torch.unsqueeze(actual_num, axis + 1)
        max_num_shape = [1] * len(actual_num.shape)
        max_num_shape[axis + 1] = -1
        max_num = torch.arange(max_num, dtype=torch.int, device=actual_num.device).view(max_num_shape)
        paddings_indicator = actual_num.int() > max_num
        return paddings_indicator

    def forward(self, features, voxel_num_points):
        voxel_count = features.shape[1]
        mask = self.get_paddings_indicator(voxel_num_points, voxel_count, axis=0)
        mask = torch.unsqueeze(mask, -1).type_as(features)
        features *= mask
        return features


def get_inputs():
    return [
        torch.empty(12000, 32, 10).uniform_(-1, 1),
        torch.randint(1, 33, (12000,)),
    ]


def get_init_inputs():
    return []
