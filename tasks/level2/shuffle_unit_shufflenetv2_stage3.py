"""PyTorch twin of the task `shuffle_unit_shufflenetv2_stage3`.

ShuffleNetV2 x1.0, stage3.3: torchvision shufflenetv2.InvertedResidual(232, 232, stride=1)
(torchvision.models.shufflenet_v2_x1_0).
A basic ShuffleNetV2 unit of stage 3 at 20x20 with 232 channels (320x320 input): split,
pointwise / depthwise / pointwise on one half, concatenation and channel shuffle.
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
        self.branch2_pw1_conv = nn.Conv2d(116, 116, 1, bias=False)
        self.branch2_pw1_bn = nn.BatchNorm2d(116)
        self.branch2_dw_conv = nn.Conv2d(116, 116, 3, padding=1, groups=116, bias=False)
        self.branch2_dw_bn = nn.BatchNorm2d(116)
        self.branch2_pw2_conv = nn.Conv2d(116, 116, 1, bias=False)
        self.branch2_pw2_bn = nn.BatchNorm2d(116)

    def forward(self, x):
        x1, x2 = x.chunk(2, dim=1)
        out2 = self.relu(self.branch2_pw1_bn(self.branch2_pw1_conv(x2)))
        out2 = self.branch2_dw_bn(self.branch2_dw_conv(out2))
        out2 = self.relu(self.branch2_pw2_bn(self.branch2_pw2_conv(out2)))
        out = torch.cat((x1, out2), dim=1)
        out = channel_shuffle(out, 2)
        return out


def get_inputs():
    return [
        torch.empty(1, 232, 20, 20).uniform_(0, 2),
    ]


def get_init_inputs():
    return []
