"""PyTorch twin of the task `shuffle_unit_s2_shufflenetv2_stage2`.

ShuffleNetV2 x1.0, stage2.0: torchvision shufflenetv2.InvertedResidual(24, 116, stride=2)
(torchvision.models.shufflenet_v2_x1_0).
The downsampling unit opening stage 2 (224x224 image): both branches see all 24 channels at
56x56; branch 1 is a stride-2 depthwise 3x3 then pointwise 24 -> 58, branch 2 pointwise 24 ->
58, stride-2 depthwise, pointwise 58 -> 58 (batch norm everywhere, ReLU after the pointwise
convolutions); the 28x28 outputs are concatenated and channel-shuffled with 2 groups.
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
        self.branch1_dw_conv = nn.Conv2d(24, 24, 3, stride=2, padding=1, groups=24, bias=False)
        self.branch1_dw_bn = nn.BatchNorm2d(24)
        self.branch1_pw_conv = nn.Conv2d(24, 58, 1, bias=False)
        self.branch1_pw_bn = nn.BatchNorm2d(58)
        self.branch2_pw1_conv = nn.Conv2d(24, 58, 1, bias=False)
        self.branch2_pw1_bn = nn.BatchNorm2d(58)
        self.branch2_dw_conv = nn.Conv2d(58, 58, 3, stride=2, padding=1, groups=58, bias=False)
        self.branch2_dw_bn = nn.BatchNorm2d(58)
        self.branch2_pw2_conv = nn.Conv2d(58, 58, 1, bias=False)
        self.branch2_pw2_bn = nn.BatchNorm2d(58)

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
        torch.empty(1, 24, 56, 56).uniform_(0, 2),
    ]


def get_init_inputs():
    return []
