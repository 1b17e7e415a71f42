"""PyTorch twin of the task `inverted_residual_se_hswish_mobilenetv3_large_features12`.

MobileNetV3-Large, features.12: torchvision InvertedResidual(InvertedResidualConfig(112, 3, 672,
112, use_se=True, activation="HS", stride=1)) (torchvision.models.mobilenet_v3_large).
A MobileNetV3-Large block with hardswish and squeeze-excitation at 14x14 (224x224 image):
expansion 112 -> 672, 3x3 depthwise, SE 672 -> 168 -> 672 with a hard-sigmoid gate, projection
672 -> 112, and the residual add.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.Hardswish()
        self.expand_conv = nn.Conv2d(112, 672, 1, bias=False)
        self.expand_bn = nn.BatchNorm2d(672, eps=0.001, momentum=0.01)
        self.dw_conv = nn.Conv2d(672, 672, 3, padding=1, groups=672, bias=False)
        self.dw_bn = nn.BatchNorm2d(672, eps=0.001, momentum=0.01)
        self.se_avgpool = nn.AdaptiveAvgPool2d(1)
        self.se_fc1 = nn.Conv2d(672, 168, 1)
        self.se_fc2 = nn.Conv2d(168, 672, 1)
        self.se_activation = nn.ReLU()
        self.se_scale_activation = nn.Hardsigmoid()
        self.project_conv = nn.Conv2d(672, 112, 1, bias=False)
        self.project_bn = nn.BatchNorm2d(112, eps=0.001, momentum=0.01)

    def forward(self, x):
        result = self.act(self.expand_bn(self.expand_conv(x)))
        result = self.act(self.dw_bn(self.dw_conv(result)))
        # SqueezeExcitation
        scale = self.se_avgpool(result)
        scale = self.se_fc1(scale)
        scale = self.se_activation(scale)
        scale = self.se_fc2(scale)
        scale = self.se_scale_activation(scale)
        result = scale * result
        result = self.project_bn(self.project_conv(result))
        result += x
        return result


def get_inputs():
    return [
        torch.empty(1, 112, 14, 14).uniform_(-3, 3),
    ]


def get_init_inputs():
    return []
