"""PyTorch twin of the task `inverted_residual_se_s2_mobilenetv3_large_features4`.

MobileNetV3-Large, features.4: torchvision InvertedResidual(InvertedResidualConfig(24, 5, 72,
40, use_se=True, activation="RE", stride=2)) (torchvision.models.mobilenet_v3_large).
A downsampling MobileNetV3-Large block with squeeze-excitation (224x224 image): expansion 24 ->
72 at 56x56, stride-2 5x5 depthwise (-> 28x28), each with batch norm (eps 1e-3) and ReLU, SE 72
-> 24 -> 72 with a hard-sigmoid gate, projection 72 -> 40.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)
        self.expand_conv = nn.Conv2d(24, 72, 1, bias=False)
        self.expand_bn = nn.BatchNorm2d(72, eps=0.001, momentum=0.01)
        self.dw_conv = nn.Conv2d(72, 72, 5, stride=2, padding=2, groups=72, bias=False)
        self.dw_bn = nn.BatchNorm2d(72, eps=0.001, momentum=0.01)
        self.se_avgpool = nn.AdaptiveAvgPool2d(1)
        self.se_fc1 = nn.Conv2d(72, 24, 1)
        self.se_fc2 = nn.Conv2d(24, 72, 1)
        self.se_activation = nn.ReLU()
        self.se_scale_activation = nn.Hardsigmoid()
        self.project_conv = nn.Conv2d(72, 40, 1, bias=False)
        self.project_bn = nn.BatchNorm2d(40, eps=0.001, momentum=0.01)

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
        return result


def get_inputs():
    return [
        torch.empty(1, 24, 56, 56).uniform_(-3, 3),
    ]


def get_init_inputs():
    return []
