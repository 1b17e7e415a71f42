"""PyTorch twin of the task `shuffle_unit_shufflenetv2_stage2`.

ShuffleNetV2 x1.0, stage2.1: torchvision shufflenetv2.InvertedResidual(116, 116, stride=1)
(torchvision.models.shufflenet_v2_x1_0).
A basic ShuffleNetV2 unit at 40x40 with 116 channels (a 320x320 input, as edge detectors such as
NanoDet run this backbone): the input is split in two halves, one half goes through pointwise 58
-> 58, depthwise 3x3 and pointwise again (batch norm, ReLU after the pointwise convolutions),
the halves are concatenated and channel-shuffled.
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
        self.branch2_pw1_conv = nn.Conv2d(58, 58, 1, bias=False)
        self.branch2_pw1_bn = nn.BatchNorm2d(58)
        self.branch2_dw_conv = nn.Conv2d(58, 58, 3, padding=1, groups=58, bias=False)
        self.branch2_dw_bn = nn.BatchNorm2d(58)
        self.branch2_pw2_conv = nn.Conv2d(58, 58, 1, bias=False)
        self.branch2_pw2_bn = nn.BatchNorm2d(58)

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
        torch.empty(1, 116, 40, 40).uniform_(0, 2),
    ]


def get_init_inputs():
    return []
