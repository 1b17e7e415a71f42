"""PyTorch twin of the task `argmax_lraspp_mobilenetv3_segmentation`.

LR-ASPP MobileNetV3-Large (Pascal VOC, 21 classes), output['out'].argmax(1): torch.argmax
(torchvision.models.segmentation.lraspp_mobilenet_v3_large).
Per-pixel class of the 21-class segmentation logits, upsampled to a 320x320 input.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.argmax(1)


def get_inputs():
    return [
        torch.empty(1, 21, 320, 320).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
