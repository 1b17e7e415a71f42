"""PyTorch twin of the task `resize_bilinear4x_mobile_sam_masks`.

MobileSAM, postprocess_masks (first F.interpolate to img_size): torch.nn.functional.interpolate
(ChaoningZhang/MobileSAM mobile_sam/modeling/sam.py (Sam.postprocess_masks)).
Upscaling the three 256x256 low-resolution mask logits of a multimask prediction to the 1024x1024
encoder input, bilinear without corner alignment (4x).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, img_size):
        super().__init__()
        self.img_size = img_size

    def forward(self, masks):
        return F.interpolate(masks, (self.img_size, self.img_size), mode="bilinear", align_corners=False)


def get_inputs():
    return [
        torch.empty(1, 3, 256, 256).uniform_(-8, 8),
    ]


def get_init_inputs():
    return [1024]
