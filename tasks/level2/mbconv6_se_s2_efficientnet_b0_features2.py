"""PyTorch twin of the task `mbconv6_se_s2_efficientnet_b0_features2`.

EfficientNet-B0, features.2.0: torchvision MBConv(MBConvConfig(6, 3, 2, 16, 24, ...)) with
SqueezeExcitation(96, 4) (torchvision.models.efficientnet_b0).
The first downsampling MBConv of EfficientNet-B0 (224x224 image): expansion 16 -> 96 at 112x112,
stride-2 3x3 depthwise (-> 56x56), squeeze-excitation 96 -> 4 -> 96, projection 96 -> 24; no
residual.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.silu = nn.SiLU(inplace=True)
        self.expand_conv = nn.Conv2d(16, 96, 1, bias=False)
        self.expand_bn = nn.BatchNorm2d(96)
        self.dw_conv = nn.Conv2d(96, 96, 3, stride=2, padding=1, groups=96, bias=False)
        self.dw_bn = nn.BatchNorm2d(96)
        self.se_avgpool = nn.AdaptiveAvgPool2d(1)
        self.se_fc1 = nn.Conv2d(96, 4, 1)
        self.se_fc2 = nn.Conv2d(4, 96, 1)
        self.se_scale_activation = nn.Sigmoid()
        self.project_conv = nn.Conv2d(96, 24, 1, bias=False)
        self.project_bn = nn.BatchNorm2d(24)

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
        return result


def get_inputs():
    return [
        torch.empty(1, 16, 112, 112).uniform_(-3, 3),
    ]


def get_init_inputs():
    return []
