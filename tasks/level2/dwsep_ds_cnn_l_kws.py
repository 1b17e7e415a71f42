"""PyTorch twin of the task `dwsep_ds_cnn_l_kws`.

DS-CNN-L (keyword spotting), DS-CNN layer 3 (second depthwise_separable_conv):
separable_convolution2d 3x3 + batch_norm + ReLU, convolution2d 1x1 + batch_norm + ReLU (ARM-
software/ML-KWS-for-MCU models.py create_ds_cnn_model).
A depthwise-separable layer of the large DS-CNN keyword spotter (Hello Edge): 276 channels on
the 13x5 feature map of a 49x10 MFCC window (after the 10x4 stride-(2, 1) convolution and the
first, stride-2 separable layer), depthwise 3x3 and pointwise 276 -> 276, each with batch norm
(TensorFlow's epsilon 1e-3) and ReLU. The input is the previous layer's ReLU output.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.relu = nn.ReLU()
        self.dw_conv = nn.Conv2d(276, 276, 3, padding=1, groups=276, bias=False)
        self.dw_bn = nn.BatchNorm2d(276, eps=0.001)
        self.pw_conv = nn.Conv2d(276, 276, 1, bias=False)
        self.pw_bn = nn.BatchNorm2d(276, eps=0.001)

    def forward(self, x):
        x = self.relu(self.dw_bn(self.dw_conv(x)))
        x = self.relu(self.pw_bn(self.pw_conv(x)))
        return x


def get_inputs():
    return [
        torch.empty(1, 276, 13, 5).uniform_(0, 2),
    ]


def get_init_inputs():
    return []
