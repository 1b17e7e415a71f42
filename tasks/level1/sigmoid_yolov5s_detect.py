"""PyTorch twin of the task `sigmoid_yolov5s_detect`.

YOLOv5s, model.24 (Detect): y = x[i].sigmoid(), stride-8 level: torch.Tensor.sigmoid
(ultralytics/yolov5 models/yolo.py).
Sigmoid of the stride-8 head output (3 anchors x 85 values on an 80x80 grid) for a 640x640
image, after the view/permute to [1,3,80,80,85].
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.sigmoid()


def get_inputs():
    return [
        torch.empty(1, 3, 80, 80, 85).uniform_(-6, 6),
    ]


def get_init_inputs():
    return []
