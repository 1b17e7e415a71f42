"""PyTorch twin of the task `squeezenet1_1_224`.

SqueezeNet 1.1, full model: torchvision SqueezeNet(version="1_1"): features (conv, 3 max pools
with ceil_mode, 8 Fire modules), classifier (Dropout, final_conv, ReLU, AdaptiveAvgPool2d),
flatten (torchvision.models.squeezenet1_1).
The whole SqueezeNet 1.1 at 224x224, batch 1, inference form. The model has no batch norm:
convolution weights are drawn as torchvision initialises them (kaiming_uniform_ with the ReLU
gain, bound sqrt(6/fan_in), the final convolution too) so activations keep their scale through
the depth. The output is the 1000 class scores after ReLU and average pooling.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.features_0 = nn.Conv2d(3, 64, 3, stride=2)
        self.features_3_squeeze = nn.Conv2d(64, 16, 1)
        self.features_3_expand1x1 = nn.Conv2d(16, 64, 1)
        self.features_3_expand3x3 = nn.Conv2d(16, 64, 3, padding=1)
        self.features_4_squeeze = nn.Conv2d(128, 16, 1)
        self.features_4_expand1x1 = nn.Conv2d(16, 64, 1)
        self.features_4_expand3x3 = nn.Conv2d(16, 64, 3, padding=1)
        self.features_6_squeeze = nn.Conv2d(128, 32, 1)
        self.features_6_expand1x1 = nn.Conv2d(32, 128, 1)
        self.features_6_expand3x3 = nn.Conv2d(32, 128, 3, padding=1)
        self.features_7_squeeze = nn.Conv2d(256, 32, 1)
        self.features_7_expand1x1 = nn.Conv2d(32, 128, 1)
        self.features_7_expand3x3 = nn.Conv2d(32, 128, 3, padding=1)
        self.features_9_squeeze = nn.Conv2d(256, 48, 1)
        self.features_9_expand1x1 = nn.Conv2d(48, 192, 1)
        self.features_9_expand3x3 = nn.Conv2d(48, 192, 3, padding=1)
        self.features_10_squeeze = nn.Conv2d(384, 48, 1)
        self.features_10_expand1x1 = nn.Conv2d(48, 192, 1)
        self.features_10_expand3x3 = nn.Conv2d(48, 192, 3, padding=1)
        self.features_11_squeeze = nn.Conv2d(384, 64, 1)
        self.features_11_expand1x1 = nn.Conv2d(64, 256, 1)
        self.features_11_expand3x3 = nn.Conv2d(64, 256, 3, padding=1)
        self.features_12_squeeze = nn.Conv2d(512, 64, 1)
        self.features_12_expand1x1 = nn.Conv2d(64, 256, 1)
        self.features_12_expand3x3 = nn.Conv2d(64, 256, 3, padding=1)
        self.classifier_1 = nn.Conv2d(512, 1000, 1)

    def forward(self, x):
        features_3_squeeze = self.features_3_squeeze(F.max_pool2d(F.relu(self.features_0(x)), 3, 2, ceil_mode=True))
        features_3_squeeze_activation = F.relu(features_3_squeeze)
        features_3 = torch.cat([F.relu(self.features_3_expand1x1(features_3_squeeze_activation)), F.relu(self.features_3_expand3x3(features_3_squeeze_activation))], 1)
        features_4_squeeze_activation = F.relu(self.features_4_squeeze(features_3))
        features_4 = torch.cat([F.relu(self.features_4_expand1x1(features_4_squeeze_activation)), F.relu(self.features_4_expand3x3(features_4_squeeze_activation))], 1)
        features_6_squeeze_activation = F.relu(self.features_6_squeeze(F.max_pool2d(features_4, 3, 2, ceil_mode=True)))
        features_6 = torch.cat([F.relu(self.features_6_expand1x1(features_6_squeeze_activation)), F.relu(self.features_6_expand3x3(features_6_squeeze_activation))], 1)
        features_7_squeeze_activation = F.relu(self.features_7_squeeze(features_6))
        features_7 = torch.cat([F.relu(self.features_7_expand1x1(features_7_squeeze_activation)), F.relu(self.features_7_expand3x3(features_7_squeeze_activation))], 1)
        features_9_squeeze_activation = F.relu(self.features_9_squeeze(F.max_pool2d(features_7, 3, 2, ceil_mode=True)))
        features_9 = torch.cat([F.relu(self.features_9_expand1x1(features_9_squeeze_activation)), F.relu(self.features_9_expand3x3(features_9_squeeze_activation))], 1)
        features_10_squeeze_activation = F.relu(self.features_10_squeeze(features_9))
        features_10 = torch.cat([F.relu(self.features_10_expand1x1(features_10_squeeze_activation)), F.relu(self.features_10_expand3x3(features_10_squeeze_activation))], 1)
        features_11_squeeze_activation = F.relu(self.features_11_squeeze(features_10))
        features_11 = torch.cat([F.relu(self.features_11_expand1x1(features_11_squeeze_activation)), F.relu(self.features_11_expand3x3(features_11_squeeze_activation))], 1)
        features_12_squeeze_activation = F.relu(self.features_12_squeeze(features_11))
        features_12 = torch.cat([F.relu(self.features_12_expand1x1(features_12_squeeze_activation)), F.relu(self.features_12_expand3x3(features_12_squeeze_activation))], 1)
        flatten = torch.flatten(F.adaptive_avg_pool2d(F.relu(self.classifier_1(features_12)), 1), 1)
        return flatten


def get_inputs():
    return [
        torch.empty(1, 3, 224, 224).uniform_(-1.0, 1.0),
    ]


def get_init_inputs():
    return []
