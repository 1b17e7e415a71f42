"""PyTorch twin of the task `anchor_head_pointpillars`.

PointPillars (KITTI), dense_head (AnchorHeadSingle): conv_cls Conv2d(384, 18, 1) + conv_box
Conv2d(384, 42, 1) + conv_dir_cls Conv2d(384, 12, 1), each permuted to NHWC (open-
mmlab/OpenPCDet pcdet/models/dense_heads/anchor_head_single.py).
The single-stage anchor head on the 384-channel BEV features (three classes x two rotations = 6
anchors a cell): class scores (18), box regression (42) and direction classification (12) 1x1
convolutions with bias, each permuted to channels-last. The 248x216 feature map is reduced to
62x54 (a quarter in each dimension) for the reference interpreter; the input is the
concatenation of ReLU outputs, drawn from [0, 2].
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_cls = nn.Conv2d(384, 18, 1)
        self.conv_box = nn.Conv2d(384, 42, 1)
        self.conv_dir_cls = nn.Conv2d(384, 12, 1)

    def forward(self, spatial_features_2d):
        cls_preds = self.conv_cls(spatial_features_2d)
        box_preds = self.conv_box(spatial_features_2d)
        dir_cls_preds = self.conv_dir_cls(spatial_features_2d)
        cls_preds = cls_preds.permute(0, 2, 3, 1).contiguous()  # [N, H, W, C]
        box_preds = box_preds.permute(0, 2, 3, 1).contiguous()  # [N, H, W, C]
        dir_cls_preds = dir_cls_preds.permute(0, 2, 3, 1).contiguous()
        return cls_preds, box_preds, dir_cls_preds


def get_inputs():
    return [
        torch.empty(1, 384, 62, 54).uniform_(0, 2),
    ]


def get_init_inputs():
    return []
