"""PyTorch twin of the task `resize_bilinear16x_deeplabv3_mobilenetv3`.

DeepLabV3 MobileNetV3-Large (21 classes), F.interpolate(x, size=input_shape, mode='bilinear',
align_corners=False): torch.nn.functional.interpolate (torchvision.models.segmentation
(_SimpleSegmentationModel.forward)).
Upsampling the 21 class logits from the stride-16 output (20x20) to the 320x320 input, bilinear
without corner alignment: each output pixel weighs the 2x2 source pixels around (o + 0.5) / 16 -
0.5, clamped at the border.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, height, width):
        super().__init__()
        self.input_shape = (height, width)

    def forward(self, x):
        return F.interpolate(x, size=self.input_shape, mode="bilinear", align_corners=False)


def get_inputs():
    return [
        torch.empty(1, 21, 20, 20).uniform_(-4, 4),
    ]


def get_init_inputs():
    return [320, 320]
