"""PyTorch twin of the task `leaky_relu_yolov4_tiny_stem`.

YOLOv4-tiny, layer 0 ([convolutional] 3x3/2, 32 filters, activation=leaky):
torch.nn.LeakyReLU(0.1) (AlexeyAB/darknet cfg/yolov4-tiny.cfg).
Darknet's leaky activation (slope 0.1) after the first stride-2 convolution of a 416x416 image.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.LeakyReLU(0.1)

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [
        torch.empty(1, 32, 208, 208).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
