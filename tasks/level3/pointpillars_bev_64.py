"""PyTorch twin of the task `pointpillars_bev_64`.

PointPillars (KITTI), backbone_2d, dense_head: OpenPCDet BaseBEVBackbone (LAYER_NUMS [3, 5, 5],
strides 2, filters 64/128/256, deblocks ConvTranspose2d to 128 x 3 with strides 1/2/4, BN eps
1e-3) + AnchorHeadSingle (conv_cls 18, conv_box 42, conv_dir_cls 12, permuted to NHWC)
(open-mmlab/OpenPCDet pcdet/models/backbones_2d/base_bev_backbone.py,
dense_heads/anchor_head_single.py).
The dense part of PointPillars after the pillar scatter: the 64-channel BEV pseudo-image
(non-negative pillar features, drawn from [0, 1]) through the three strided blocks (ZeroPad2d(1)
+ stride-2 convolution, then 3 or 5 3x3 convolutions), the transposed convolution deblocks,
their concatenation to 384 channels, and the anchor head (2 rotations x 3 classes per location).
KITTI's 432x496 pillar grid is reduced to 64x64 for the f64 reference; channels are the model's.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone_2d_deblocks_0_0_weight = nn.Parameter(torch.empty(64, 128, 1, 1))
        self.backbone_2d_deblocks_1_0_weight = nn.Parameter(torch.empty(128, 128, 2, 2))
        self.backbone_2d_deblocks_2_0_weight = nn.Parameter(torch.empty(256, 128, 4, 4))
        self.backbone_2d_blocks_0_1 = nn.Conv2d(64, 64, 3, stride=2, bias=False)
        self.backbone_2d_blocks_0_2 = nn.BatchNorm2d(64, eps=0.001, momentum=0.01)
        self.backbone_2d_blocks_0_4 = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.backbone_2d_blocks_0_5 = nn.BatchNorm2d(64, eps=0.001, momentum=0.01)
        self.backbone_2d_blocks_0_7 = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.backbone_2d_blocks_0_8 = nn.BatchNorm2d(64, eps=0.001, momentum=0.01)
        self.backbone_2d_blocks_0_10 = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.backbone_2d_blocks_0_11 = nn.BatchNorm2d(64, eps=0.001, momentum=0.01)
        self.backbone_2d_deblocks_0_1 = nn.BatchNorm2d(128, eps=0.001, momentum=0.01)
        self.backbone_2d_blocks_1_1 = nn.Conv2d(64, 128, 3, stride=2, bias=False)
        self.backbone_2d_blocks_1_2 = nn.BatchNorm2d(128, eps=0.001, momentum=0.01)
        self.backbone_2d_blocks_1_4 = nn.Conv2d(128, 128, 3, padding=1, bias=False)
        self.backbone_2d_blocks_1_5 = nn.BatchNorm2d(128, eps=0.001, momentum=0.01)
        self.backbone_2d_blocks_1_7 = nn.Conv2d(128, 128, 3, padding=1, bias=False)
        self.backbone_2d_blocks_1_8 = nn.BatchNorm2d(128, eps=0.001, momentum=0.01)
        self.backbone_2d_blocks_1_10 = nn.Conv2d(128, 128, 3, padding=1, bias=False)
        self.backbone_2d_blocks_1_11 = nn.BatchNorm2d(128, eps=0.001, momentum=0.01)
        self.backbone_2d_blocks_1_13 = nn.Conv2d(128, 128, 3, padding=1, bias=False)
        self.backbone_2d_blocks_1_14 = nn.BatchNorm2d(128, eps=0.001, momentum=0.01)
        self.backbone_2d_blocks_1_16 = nn.Conv2d(128, 128, 3, padding=1, bias=False)
        self.backbone_2d_blocks_1_17 = nn.BatchNorm2d(128, eps=0.001, momentum=0.01)
        self.backbone_2d_deblocks_1_1 = nn.BatchNorm2d(128, eps=0.001, momentum=0.01)
        self.backbone_2d_blocks_2_1 = nn.Conv2d(128, 256, 3, stride=2, bias=False)
        self.backbone_2d_blocks_2_2 = nn.BatchNorm2d(256, eps=0.001, momentum=0.01)
        self.backbone_2d_blocks_2_4 = nn.Conv2d(256, 256, 3, padding=1, bias=False)
        self.backbone_2d_blocks_2_5 = nn.BatchNorm2d(256, eps=0.001, momentum=0.01)
        self.backbone_2d_blocks_2_7 = nn.Conv2d(256, 256, 3, padding=1, bias=False)
        self.backbone_2d_blocks_2_8 = nn.BatchNorm2d(256, eps=0.001, momentum=0.01)
        self.backbone_2d_blocks_2_10 = nn.Conv2d(256, 256, 3, padding=1, bias=False)
        self.backbone_2d_blocks_2_11 = nn.BatchNorm2d(256, eps=0.001, momentum=0.01)
        self.backbone_2d_blocks_2_13 = nn.Conv2d(256, 256, 3, padding=1, bias=False)
        self.backbone_2d_blocks_2_14 = nn.BatchNorm2d(256, eps=0.001, momentum=0.01)
        self.backbone_2d_blocks_2_16 = nn.Conv2d(256, 256, 3, padding=1, bias=False)
        self.backbone_2d_blocks_2_17 = nn.BatchNorm2d(256, eps=0.001, momentum=0.01)
        self.backbone_2d_deblocks_2_1 = nn.BatchNorm2d(128, eps=0.001, momentum=0.01)
        self.dense_head_conv_cls = nn.Conv2d(384, 18, 1)
        self.dense_head_conv_box = nn.Conv2d(384, 42, 1)
        self.dense_head_conv_dir_cls = nn.Conv2d(384, 12, 1)

    def forward(self, spatial_features):
        backbone_2d_blocks_0_2 = self.backbone_2d_blocks_0_2(self.backbone_2d_blocks_0_1(F.pad(spatial_features, (1, 1, 1, 1))))
        backbone_2d_blocks_0_5 = self.backbone_2d_blocks_0_5(self.backbone_2d_blocks_0_4(F.relu(backbone_2d_blocks_0_2)))
        backbone_2d_blocks_0_8 = self.backbone_2d_blocks_0_8(self.backbone_2d_blocks_0_7(F.relu(backbone_2d_blocks_0_5)))
        backbone_2d_blocks_0_11 = self.backbone_2d_blocks_0_11(self.backbone_2d_blocks_0_10(F.relu(backbone_2d_blocks_0_8)))
        backbone_2d_blocks_0 = F.relu(backbone_2d_blocks_0_11)
        backbone_2d_deblocks_0_0 = F.conv_transpose2d(backbone_2d_blocks_0, self.backbone_2d_deblocks_0_0_weight, stride=1)
        backbone_2d_blocks_1_2 = self.backbone_2d_blocks_1_2(self.backbone_2d_blocks_1_1(F.pad(backbone_2d_blocks_0, (1, 1, 1, 1))))
        backbone_2d_blocks_1_5 = self.backbone_2d_blocks_1_5(self.backbone_2d_blocks_1_4(F.relu(backbone_2d_blocks_1_2)))
        backbone_2d_blocks_1_8 = self.backbone_2d_blocks_1_8(self.backbone_2d_blocks_1_7(F.relu(backbone_2d_blocks_1_5)))
        backbone_2d_blocks_1_11 = self.backbone_2d_blocks_1_11(self.backbone_2d_blocks_1_10(F.relu(backbone_2d_blocks_1_8)))
        backbone_2d_blocks_1_14 = self.backbone_2d_blocks_1_14(self.backbone_2d_blocks_1_13(F.relu(backbone_2d_blocks_1_11)))
        backbone_2d_blocks_1_17 = self.backbone_2d_blocks_1_17(self.backbone_2d_blocks_1_16(F.relu(backbone_2d_blocks_1_14)))
        backbone_2d_blocks_1 = F.relu(backbone_2d_blocks_1_17)
        backbone_2d_deblocks_1_0 = F.conv_transpose2d(backbone_2d_blocks_1, self.backbone_2d_deblocks_1_0_weight, stride=2)
        backbone_2d_blocks_2_2 = self.backbone_2d_blocks_2_2(self.backbone_2d_blocks_2_1(F.pad(backbone_2d_blocks_1, (1, 1, 1, 1))))
        backbone_2d_blocks_2_5 = self.backbone_2d_blocks_2_5(self.backbone_2d_blocks_2_4(F.relu(backbone_2d_blocks_2_2)))
        backbone_2d_blocks_2_8 = self.backbone_2d_blocks_2_8(self.backbone_2d_blocks_2_7(F.relu(backbone_2d_blocks_2_5)))
        backbone_2d_blocks_2_11 = self.backbone_2d_blocks_2_11(self.backbone_2d_blocks_2_10(F.relu(backbone_2d_blocks_2_8)))
        backbone_2d_blocks_2_14 = self.backbone_2d_blocks_2_14(self.backbone_2d_blocks_2_13(F.relu(backbone_2d_blocks_2_11)))
        backbone_2d_blocks_2_17 = self.backbone_2d_blocks_2_17(self.backbone_2d_blocks_2_16(F.relu(backbone_2d_blocks_2_14)))
        backbone_2d_blocks_2 = F.relu(backbone_2d_blocks_2_17)
        backbone_2d_deblocks_2_0 = F.conv_transpose2d(backbone_2d_blocks_2, self.backbone_2d_deblocks_2_0_weight, stride=4)
        spatial_features_2d = torch.cat([F.relu(self.backbone_2d_deblocks_0_1(backbone_2d_deblocks_0_0)), F.relu(self.backbone_2d_deblocks_1_1(backbone_2d_deblocks_1_0)), F.relu(self.backbone_2d_deblocks_2_1(backbone_2d_deblocks_2_0))], dim=1)
        conv_cls_preds = self.dense_head_conv_cls(spatial_features_2d).permute(0, 2, 3, 1).contiguous()
        conv_box_preds = self.dense_head_conv_box(spatial_features_2d).permute(0, 2, 3, 1).contiguous()
        conv_dir_cls_preds = self.dense_head_conv_dir_cls(spatial_features_2d).permute(0, 2, 3, 1).contiguous()
        return conv_cls_preds, conv_box_preds, conv_dir_cls_preds


def get_inputs():
    return [
        torch.empty(1, 64, 64, 64).uniform_(0.0, 1.0),
    ]


def get_init_inputs():
    return []
