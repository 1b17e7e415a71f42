"""PyTorch twin of the task `resize_bilinear_align_corners_depth_anything_v2_small`.

Depth Anything V2 Small (ViT-S/14), depth_head (F.interpolate(out, (patch_h * 14, patch_w * 14),
mode='bilinear', align_corners=True)): torch.nn.functional.interpolate (DepthAnything/Depth-
Anything-V2 depth_anything_v2/dpt.py (DPTHead.forward)).
Resizing the 32-channel head features from 296x296 (8x the 37x37 patch grid) to the 518x518 input
before the last convolutions: bilinear with aligned corners at a non-integer ratio (source position
o * 295 / 517).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, patch_h, patch_w):
        super().__init__()
        self.patch_h = patch_h
        self.patch_w = patch_w

    def forward(self, out):
        return F.interpolate(out, (int(self.patch_h * 14), int(self.patch_w * 14)), mode="bilinear",
                             align_corners=True)


def get_inputs():
    return [
        torch.empty(1, 32, 296, 296).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [37, 37]
