"""PyTorch twin of the task `greater_mask_threshold_mobile_sam`.

MobileSAM, SamPredictor.predict_torch (masks = masks > self.model.mask_threshold):
torch.Tensor.__gt__ (ChaoningZhang/MobileSAM mobile_sam/predictor.py).
Binarising the three upscaled mask logits of a multimask prediction on a 1024x1024 image at the
model's mask_threshold 0.0; the boolean masks are i32 0/1 here.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, mask_threshold):
        super().__init__()
        self.mask_threshold = mask_threshold

    def forward(self, masks):
        return masks > self.mask_threshold


def get_inputs():
    return [
        torch.empty(1, 3, 1024, 1024).uniform_(-8, 8),
    ]


def get_init_inputs():
    return [0.0]
