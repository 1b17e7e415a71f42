"""PyTorch twin of the task `softmax_classes_fast_scnn`.

Fast-SCNN (Cityscapes, 19 classes), EncoderDecoder.inference (output = F.softmax(seg_logit, dim=1)):
torch.nn.functional.softmax (open-mmlab/mmsegmentation v0.x
mmseg/models/segmentors/encoder_decoder.py).
Per-pixel class probabilities over the 19 classes along the channel axis (stride H*W between the
elements of one softmax), on a 256x512 frame (reduced from Cityscapes' 1024x2048 so that the
reference stays fast).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, seg_logit):
        return F.softmax(seg_logit, dim=1)


def get_inputs():
    return [
        torch.empty(1, 19, 256, 512).uniform_(-4, 4),
    ]


def get_init_inputs():
    return []
