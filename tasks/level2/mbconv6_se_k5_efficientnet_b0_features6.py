"""PyTorch twin of the task `mbconv6_se_k5_efficientnet_b0_features6`.

EfficientNet-B0, features.6.1: torchvision MBConv(MBConvConfig(6, 5, 1, 192, 192, ...)) with
SqueezeExcitation(1152, 48) (torchvision.models.efficientnet_b0).
An MBConv of EfficientNet-B0's widest stage at 7x7 (224x224 image): expansion 192 -> 1152, 5x5
depthwise, squeeze-excitation 1152 -> 48 -> 1152, projection 1152 -> 192, input added.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.silu = nn.SiLU(inplace=True)
        self.expand_conv = nn.Conv2d(192, 1152, 1, bias=False)
        self.expand_bn = nn.BatchNorm2d(1152)
        self.dw_conv = nn.Conv2d(1152, 1152, 5, padding=2, groups=1152, bias=False)
        self.dw_bn = nn.BatchNorm2d(1152)
        self.se_avgpool = nn.AdaptiveAvgPool2d(1)
        self.se_fc1 = nn.Conv2d(1152, 48, 1)
        self.se_fc2 = nn.Conv2d(48, 1152, 1)
        self.se_scale_activation = nn.Sigmoid()
        self.project_conv = nn.Conv2d(1152, 192, 1, bias=False)
        self.project_bn = nn.BatchNorm2d(192)

    def forward(self, x):
        result = self.silu(self.expand_bn(self.expand_conv(x)))
        result = self.silu(self.dw_bn(self.dw_conv(result)))
        # SqueezeExcitation
        scale = self.se_avgpool(result)
        scale = self.se_fc1(scale)
        scale = self.silu(scale)
        scale = self.se_fc2(scale)
        scale = self.se_scale_activation(scale)
        result = scale * result
        result = self.project_bn(self.project_conv(result))
        # stochastic depth is the identity at inference
        result += x
        return result


def get_inputs():
    return [
        torch.empty(1, 192, 7, 7).uniform_(-3, 3),
    ]


def get_init_inputs():
    return []
