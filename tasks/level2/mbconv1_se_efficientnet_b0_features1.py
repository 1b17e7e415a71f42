"""PyTorch twin of the task `mbconv1_se_efficientnet_b0_features1`.

EfficientNet-B0, features.1.0: torchvision MBConv(MBConvConfig(1, 3, 1, 32, 16, ...)) with
SqueezeExcitation(32, 8) (torchvision.models.efficientnet_b0).
EfficientNet-B0's first MBConv has expansion 1: 3x3 depthwise convolution of 32 channels at
112x112 with batch norm and SiLU, squeeze-excitation 32 -> 8 -> 32 (SiLU, sigmoid gate), and the
projection 32 -> 16 with batch norm (224x224 image).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.silu = nn.SiLU(inplace=True)
        self.dw_conv = nn.Conv2d(32, 32, 3, padding=1, groups=32, bias=False)
        self.dw_bn = nn.BatchNorm2d(32)
        self.se_avgpool = nn.AdaptiveAvgPool2d(1)
        self.se_fc1 = nn.Conv2d(32, 8, 1)
        self.se_fc2 = nn.Conv2d(8, 32, 1)
        self.se_scale_activation = nn.Sigmoid()
        self.project_conv = nn.Conv2d(32, 16, 1, bias=False)
        self.project_bn = nn.BatchNorm2d(16)

    def forward(self, x):
        result = self.silu(self.dw_bn(self.dw_conv(x)))
        # SqueezeExcitation
        scale = self.se_avgpool(result)
        scale = self.se_fc1(scale)
        scale = self.silu(scale)
        scale = self.se_fc2(scale)
        scale = self.se_scale_activation(scale)
        result = scale * result
        result = self.project_bn(self.project_conv(result))
        return result


def get_inputs():
    return [
        torch.empty(1, 32, 112, 112).uniform_(-3, 3),
    ]


def get_init_inputs():
    return []
