"""PyTorch twin of the task `shuffle_unit_s2_shufflenetv2_stage4`.

ShuffleNetV2 x1.0, stage4.0: torchvision shufflenetv2.InvertedResidual(232, 464, stride=2)
(torchvision.models.shufflenet_v2_x1_0).
The downsampling unit opening stage 4 (320x320 input): 232 channels at 20x20 go through both
branches (stride-2 depthwise + pointwise, and pointwise + stride-2 depthwise + pointwise) to 232
+ 232 channels at 10x10, then the channel shuffle.
"""

import torch
import torch.nn as nn


def channel_shuffle(x, groups):
    batchsize, num_channels, height, width = x.size()
    channels_per_group = num_channels // groups
    x = x.view(batchsize, groups, channels_per_group, height, width)
    x = torch.transpose(x, 1, 2).contiguous()
    return x.view(batchsize, num_channels, height, width)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.relu = nn.ReLU(inplace=True)
        self.branch1_dw_conv = nn.Conv2d(232, 232, 3, stride=2, padding=1, groups=232, bias=False)
        self.branch1_dw_bn = nn.BatchNorm2d(232)
        self.branch1_pw_conv = nn.Conv2d(232, 232, 1, bias=False)
        self.branch1_pw_bn = nn.BatchNorm2d(232)
        self.branch2_pw1_conv = nn.Conv2d(232, 232, 1, bias=False)
        self.branch2_pw1_bn = nn.BatchNorm2d(232)
        self.branch2_dw_conv = nn.Conv2d(232, 232, 3, stride=2, padding=1, groups=232, bias=False)
        self.branch2_dw_bn = nn.BatchNorm2d(232)
        self.branch2_pw2_conv = nn.Conv2d(232, 232, 1, bias=False)
        self.branch2_pw2_bn = nn.BatchNorm2d(232)

    def forward(self, x):
        out1 = self.branch1_dw_bn(self.branch1_dw_conv(x))
        out1 = self.relu(self.branch1_pw_bn(self.branch1_pw_conv(out1)))
        out2 = self.relu(self.branch2_pw1_bn(self.branch2_pw1_conv(x)))
        out2 = self.branch2_dw_bn(self.branch2_dw_conv(out2))
        out2 = self.relu(self.branch2_pw2_bn(self.branch2_pw2_conv(out2)))
        out = torch.cat((out1, out2), dim=1)
        out = channel_shuffle(out, 2)
        return out


def get_inputs():
    return [
        torch.empty(1, 232, 20, 20).uniform_(0, 2),
    ]


def get_init_inputs():
    return []
