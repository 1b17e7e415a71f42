"""PyTorch twin of the task `softmax_dfl_yolov8n`.

YOLOv8n, model.22.dfl (DFL: x.view(b, 4, 16, a).transpose(2, 1).softmax(1)):
torch.Tensor.softmax (ultralytics ultralytics/nn/modules/block.py).
Distribution focal loss decoding: a softmax over the 16 distance bins of each box side for the
8400 anchors of a 640x640 image, along a non-innermost axis after the view and transpose (the
1x1 projection that follows is left out).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        b, _, a = x.shape
        return x.view(b, 4, 16, a).transpose(2, 1).softmax(1)


def get_inputs():
    return [
        torch.empty(1, 64, 8400).uniform_(-4, 4),
    ]


def get_init_inputs():
    return []
