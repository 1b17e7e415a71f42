"""PyTorch twin of the task `group_norm_fcos_head`.

FCOS (ResNet-50 FPN), head.classification_head.conv.1: torch.nn.GroupNorm(32, 256)
(torchvision.models.detection.fcos (FCOSClassificationHead)).
Group normalisation in the classification tower of the detection head, on the stride-8 FPN level:
256 channels in 32 groups of 8 at 100x136 for a 4:3 image resized to 800x1066 and padded to 800x1088
(GeneralizedRCNNTransform, min_size 800, size divisible by 32), input non-negative (the FPN output
after a convolution, earlier towers end in ReLU; drawn uniform in [0, 2)).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels):
        super().__init__()
        # FCOSClassificationHead's norm_layer: partial(nn.GroupNorm, 32)
        self.norm = nn.GroupNorm(32, in_channels)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [
        torch.empty(1, 256, 100, 136).uniform_(0, 2),
    ]


def get_init_inputs():
    return [256]
