"""PyTorch twin of the task `mish_yolov4_cspdarknet53`.

YOLOv4 (CSPDarknet53, 416x416), down1.conv2.conv.2: Mish (x * torch.tanh(F.softplus(x)))
(Tianxiaomo/pytorch-YOLOv4 models.py).
Mish after the first stride-2 convolution and batch norm of the backbone: 64 channels at 208x208 for
a 416x416 image; softplus, tanh and a product.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        x = x * (torch.tanh(torch.nn.functional.softplus(x)))
        return x


def get_inputs():
    return [
        torch.empty(1, 64, 208, 208).uniform_(-4, 4),
    ]


def get_init_inputs():
    return []
