"""PyTorch twin of the task `resnet18_112`.

ResNet-18, full model: torchvision ResNet(BasicBlock, [2, 2, 2, 2]): conv1, bn1, relu, maxpool,
layer1-4, avgpool, fc (torchvision.models.resnet18).
The whole ResNet-18, batch 1, in inference form (batch norm with running statistics). The input
is reduced from 224x224 to 112x112 (a quarter of the work: 0.9 instead of 3.6 GFLOP) so that the
f64 reference stays fast; channels are the model's, and the feature maps run 56, 28, 14, 7 and 4
pixels wide. The output is the 1000 class logits.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.layer1_0_conv1 = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.layer1_0_bn1 = nn.BatchNorm2d(64)
        self.layer1_0_conv2 = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.layer1_0_bn2 = nn.BatchNorm2d(64)
        self.layer1_1_conv1 = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.layer1_1_bn1 = nn.BatchNorm2d(64)
        self.layer1_1_conv2 = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.layer1_1_bn2 = nn.BatchNorm2d(64)
        self.layer2_0_conv1 = nn.Conv2d(64, 128, 3, stride=2, padding=1, bias=False)
        self.layer2_0_bn1 = nn.BatchNorm2d(128)
        self.layer2_0_conv2 = nn.Conv2d(128, 128, 3, padding=1, bias=False)
        self.layer2_0_bn2 = nn.BatchNorm2d(128)
        self.layer2_0_downsample_0 = nn.Conv2d(64, 128, 1, stride=2, bias=False)
        self.layer2_0_downsample_1 = nn.BatchNorm2d(128)
        self.layer2_1_conv1 = nn.Conv2d(128, 128, 3, padding=1, bias=False)
        self.layer2_1_bn1 = nn.BatchNorm2d(128)
        self.layer2_1_conv2 = nn.Conv2d(128, 128, 3, padding=1, bias=False)
        self.layer2_1_bn2 = nn.BatchNorm2d(128)
        self.layer3_0_conv1 = nn.Conv2d(128, 256, 3, stride=2, padding=1, bias=False)
        self.layer3_0_bn1 = nn.BatchNorm2d(256)
        self.layer3_0_conv2 = nn.Conv2d(256, 256, 3, padding=1, bias=False)
        self.layer3_0_bn2 = nn.BatchNorm2d(256)
        self.layer3_0_downsample_0 = nn.Conv2d(128, 256, 1, stride=2, bias=False)
        self.layer3_0_downsample_1 = nn.BatchNorm2d(256)
        self.layer3_1_conv1 = nn.Conv2d(256, 256, 3, padding=1, bias=False)
        self.layer3_1_bn1 = nn.BatchNorm2d(256)
        self.layer3_1_conv2 = nn.Conv2d(256, 256, 3, padding=1, bias=False)
        self.layer3_1_bn2 = nn.BatchNorm2d(256)
        self.layer4_0_conv1 = nn.Conv2d(256, 512, 3, stride=2, padding=1, bias=False)
        self.layer4_0_bn1 = nn.BatchNorm2d(512)
        self.layer4_0_conv2 = nn.Conv2d(512, 512, 3, padding=1, bias=False)
        self.layer4_0_bn2 = nn.BatchNorm2d(512)
        self.layer4_0_downsample_0 = nn.Conv2d(256, 512, 1, stride=2, bias=False)
        self.layer4_0_downsample_1 = nn.BatchNorm2d(512)
        self.layer4_1_conv1 = nn.Conv2d(512, 512, 3, padding=1, bias=False)
        self.layer4_1_bn1 = nn.BatchNorm2d(512)
        self.layer4_1_conv2 = nn.Conv2d(512, 512, 3, padding=1, bias=False)
        self.layer4_1_bn2 = nn.BatchNorm2d(512)
        self.fc = nn.Linear(512, 1000)

    def forward(self, x):
        maxpool = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 3, 2, 1)
        layer1_0_conv2 = self.layer1_0_conv2(F.relu(self.layer1_0_bn1(self.layer1_0_conv1(maxpool))))
        layer1_0 = F.relu((self.layer1_0_bn2(layer1_0_conv2) + maxpool))
        layer1_1_conv2 = self.layer1_1_conv2(F.relu(self.layer1_1_bn1(self.layer1_1_conv1(layer1_0))))
        layer1_1 = F.relu((self.layer1_1_bn2(layer1_1_conv2) + layer1_0))
        layer2_0_conv2 = self.layer2_0_conv2(F.relu(self.layer2_0_bn1(self.layer2_0_conv1(layer1_1))))
        layer2_0_add = self.layer2_0_bn2(layer2_0_conv2) + self.layer2_0_downsample_1(self.layer2_0_downsample_0(layer1_1))
        layer2_0 = F.relu(layer2_0_add)
        layer2_1_conv2 = self.layer2_1_conv2(F.relu(self.layer2_1_bn1(self.layer2_1_conv1(layer2_0))))
        layer2_1 = F.relu((self.layer2_1_bn2(layer2_1_conv2) + layer2_0))
        layer3_0_conv2 = self.layer3_0_conv2(F.relu(self.layer3_0_bn1(self.layer3_0_conv1(layer2_1))))
        layer3_0_add = self.layer3_0_bn2(layer3_0_conv2) + self.layer3_0_downsample_1(self.layer3_0_downsample_0(layer2_1))
        layer3_0 = F.relu(layer3_0_add)
        layer3_1_conv2 = self.layer3_1_conv2(F.relu(self.layer3_1_bn1(self.layer3_1_conv1(layer3_0))))
        layer3_1 = F.relu((self.layer3_1_bn2(layer3_1_conv2) + layer3_0))
        layer4_0_conv2 = self.layer4_0_conv2(F.relu(self.layer4_0_bn1(self.layer4_0_conv1(layer3_1))))
        layer4_0_add = self.layer4_0_bn2(layer4_0_conv2) + self.layer4_0_downsample_1(self.layer4_0_downsample_0(layer3_1))
        layer4_0 = F.relu(layer4_0_add)
        layer4_1_conv2 = self.layer4_1_conv2(F.relu(self.layer4_1_bn1(self.layer4_1_conv1(layer4_0))))
        layer4_1 = F.relu((self.layer4_1_bn2(layer4_1_conv2) + layer4_0))
        fc = self.fc(torch.flatten(F.adaptive_avg_pool2d(layer4_1, 1), 1))
        return fc


def get_inputs():
    return [
        torch.empty(1, 3, 112, 112).uniform_(-1.0, 1.0),
    ]


def get_init_inputs():
    return []
