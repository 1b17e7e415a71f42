"""PyTorch twin of the task `mbconv6_se_k5_efficientnet_b0_features3`.

EfficientNet-B0, features.3.1: torchvision MBConv(MBConvConfig(6, 5, 1, 40, 40, ...)) with
SqueezeExcitation(240, 10) (torchvision.models.efficientnet_b0).
An MBConv with a 5x5 depthwise kernel and its residual (224x224 image): expansion 40 -> 240 at
28x28, 5x5 depthwise, squeeze-excitation 240 -> 10 -> 240, projection 240 -> 40, input added.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.silu = nn.SiLU(inplace=True)
        self.expand_conv = nn.Conv2d(40, 240, 1, bias=False)
        self.expand_bn = nn.BatchNorm2d(240)
        self.dw_conv = nn.Conv2d(240, 240, 5, padding=2, groups=240, bias=False)
        self.dw_bn = nn.BatchNorm2d(240)
        self.se_avgpool = nn.AdaptiveAvgPool2d(1)
        self.se_fc1 = nn.Conv2d(240, 10, 1)
        self.se_fc2 = nn.Conv2d(10, 240, 1)
        self.se_scale_activation = nn.Sigmoid()
        self.project_conv = nn.Conv2d(240, 40, 1, bias=False)
        self.project_bn = nn.BatchNorm2d(40)

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
        torch.empty(1, 40, 28, 28).uniform_(-3, 3),
    ]


def get_init_inputs():
    return []
