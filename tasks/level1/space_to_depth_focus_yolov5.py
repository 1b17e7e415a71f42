"""PyTorch twin of the task `space_to_depth_focus_yolov5`.

YOLOv5s (v5.0), model.0 (Focus): torch.cat([x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2,
1::2], x[..., 1::2, 1::2]], 1) (ultralytics/yolov5 v5.0 models/common.py).
The Focus layer's space-to-depth of a 640x640 RGB image into 12 channels at 320x320 (strided
slices and a concat; the convolution that follows is left out).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.cat([x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2], x[..., 1::2, 1::2]], 1)


def get_inputs():
    return [
        torch.empty(1, 3, 640, 640).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
