"""PyTorch twin of the task `yamnet_96x64`.

YAMNet, full model: yamnet(): _conv(3x3, stride 2, 32) and 13 _separable_conv layers
(MobileNetV1 body, ReLU, batch norm eps 1e-4 with center and no scale), global average pooling,
Dense(521), sigmoid (tensorflow/models research/audioset/yamnet yamnet.py).
The YAMNet sound-event classifier (AudioSet, 521 classes) on one 0.96 s patch of 96 log-mel
frames x 64 bands (values drawn from [-4, 1], the log-mel range), batch 1, inference form:
TensorFlow SAME padding (bottom/right pads at stride 2), batch norm without scale (gamma is
ones). The output is the 521 class scores.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1_conv = nn.Conv2d(1, 32, 3, stride=2, bias=False)
        self.layer1_conv_bn = nn.BatchNorm2d(32, eps=0.0001)
        self.layer2_depthwise_conv = nn.Conv2d(32, 32, 3, padding=1, groups=32, bias=False)
        self.layer2_depthwise_conv_bn = nn.BatchNorm2d(32, eps=0.0001)
        self.layer2_pointwise_conv = nn.Conv2d(32, 64, 1, bias=False)
        self.layer2_pointwise_conv_bn = nn.BatchNorm2d(64, eps=0.0001)
        self.layer3_depthwise_conv = nn.Conv2d(64, 64, 3, stride=2, groups=64, bias=False)
        self.layer3_depthwise_conv_bn = nn.BatchNorm2d(64, eps=0.0001)
        self.layer3_pointwise_conv = nn.Conv2d(64, 128, 1, bias=False)
        self.layer3_pointwise_conv_bn = nn.BatchNorm2d(128, eps=0.0001)
        self.layer4_depthwise_conv = nn.Conv2d(128, 128, 3, padding=1, groups=128, bias=False)
        self.layer4_depthwise_conv_bn = nn.BatchNorm2d(128, eps=0.0001)
        self.layer4_pointwise_conv = nn.Conv2d(128, 128, 1, bias=False)
        self.layer4_pointwise_conv_bn = nn.BatchNorm2d(128, eps=0.0001)
        self.layer5_depthwise_conv = nn.Conv2d(128, 128, 3, stride=2, groups=128, bias=False)
        self.layer5_depthwise_conv_bn = nn.BatchNorm2d(128, eps=0.0001)
        self.layer5_pointwise_conv = nn.Conv2d(128, 256, 1, bias=False)
        self.layer5_pointwise_conv_bn = nn.BatchNorm2d(256, eps=0.0001)
        self.layer6_depthwise_conv = nn.Conv2d(256, 256, 3, padding=1, groups=256, bias=False)
        self.layer6_depthwise_conv_bn = nn.BatchNorm2d(256, eps=0.0001)
        self.layer6_pointwise_conv = nn.Conv2d(256, 256, 1, bias=False)
        self.layer6_pointwise_conv_bn = nn.BatchNorm2d(256, eps=0.0001)
        self.layer7_depthwise_conv = nn.Conv2d(256, 256, 3, stride=2, groups=256, bias=False)
        self.layer7_depthwise_conv_bn = nn.BatchNorm2d(256, eps=0.0001)
        self.layer7_pointwise_conv = nn.Conv2d(256, 512, 1, bias=False)
        self.layer7_pointwise_conv_bn = nn.BatchNorm2d(512, eps=0.0001)
        self.layer8_depthwise_conv = nn.Conv2d(512, 512, 3, padding=1, groups=512, bias=False)
        self.layer8_depthwise_conv_bn = nn.BatchNorm2d(512, eps=0.0001)
        self.layer8_pointwise_conv = nn.Conv2d(512, 512, 1, bias=False)
        self.layer8_pointwise_conv_bn = nn.BatchNorm2d(512, eps=0.0001)
        self.layer9_depthwise_conv = nn.Conv2d(512, 512, 3, padding=1, groups=512, bias=False)
        self.layer9_depthwise_conv_bn = nn.BatchNorm2d(512, eps=0.0001)
        self.layer9_pointwise_conv = nn.Conv2d(512, 512, 1, bias=False)
        self.layer9_pointwise_conv_bn = nn.BatchNorm2d(512, eps=0.0001)
        self.layer10_depthwise_conv = nn.Conv2d(512, 512, 3, padding=1, groups=512, bias=False)
        self.layer10_depthwise_conv_bn = nn.BatchNorm2d(512, eps=0.0001)
        self.layer10_pointwise_conv = nn.Conv2d(512, 512, 1, bias=False)
        self.layer10_pointwise_conv_bn = nn.BatchNorm2d(512, eps=0.0001)
        self.layer11_depthwise_conv = nn.Conv2d(512, 512, 3, padding=1, groups=512, bias=False)
        self.layer11_depthwise_conv_bn = nn.BatchNorm2d(512, eps=0.0001)
        self.layer11_pointwise_conv = nn.Conv2d(512, 512, 1, bias=False)
        self.layer11_pointwise_conv_bn = nn.BatchNorm2d(512, eps=0.0001)
        self.layer12_depthwise_conv = nn.Conv2d(512, 512, 3, padding=1, groups=512, bias=False)
        self.layer12_depthwise_conv_bn = nn.BatchNorm2d(512, eps=0.0001)
        self.layer12_pointwise_conv = nn.Conv2d(512, 512, 1, bias=False)
        self.layer12_pointwise_conv_bn = nn.BatchNorm2d(512, eps=0.0001)
        self.layer13_depthwise_conv = nn.Conv2d(512, 512, 3, stride=2, groups=512, bias=False)
        self.layer13_depthwise_conv_bn = nn.BatchNorm2d(512, eps=0.0001)
        self.layer13_pointwise_conv = nn.Conv2d(512, 1024, 1, bias=False)
        self.layer13_pointwise_conv_bn = nn.BatchNorm2d(1024, eps=0.0001)
        self.layer14_depthwise_conv = nn.Conv2d(1024, 1024, 3, padding=1, groups=1024, bias=False)
        self.layer14_depthwise_conv_bn = nn.BatchNorm2d(1024, eps=0.0001)
        self.layer14_pointwise_conv = nn.Conv2d(1024, 1024, 1, bias=False)
        self.layer14_pointwise_conv_bn = nn.BatchNorm2d(1024, eps=0.0001)
        self.logits = nn.Linear(1024, 521)

    def forward(self, x):
        layer2_depthwise_conv = self.layer2_depthwise_conv(F.relu(self.layer1_conv_bn(self.layer1_conv(F.pad(x, (0, 1, 0, 1))))))
        layer2_pointwise_conv = self.layer2_pointwise_conv(F.relu(self.layer2_depthwise_conv_bn(layer2_depthwise_conv)))
        layer2 = F.relu(self.layer2_pointwise_conv_bn(layer2_pointwise_conv))
        layer3_depthwise_conv_bn = self.layer3_depthwise_conv_bn(self.layer3_depthwise_conv(F.pad(layer2, (0, 1, 0, 1))))
        layer3_pointwise_conv_bn = self.layer3_pointwise_conv_bn(self.layer3_pointwise_conv(F.relu(layer3_depthwise_conv_bn)))
        layer3 = F.relu(layer3_pointwise_conv_bn)
        layer4_dw_relu = F.relu(self.layer4_depthwise_conv_bn(self.layer4_depthwise_conv(layer3)))
        layer4_pointwise_conv_bn = self.layer4_pointwise_conv_bn(self.layer4_pointwise_conv(layer4_dw_relu))
        layer4 = F.relu(layer4_pointwise_conv_bn)
        layer5_depthwise_conv_bn = self.layer5_depthwise_conv_bn(self.layer5_depthwise_conv(F.pad(layer4, (0, 1, 0, 1))))
        layer5_pointwise_conv_bn = self.layer5_pointwise_conv_bn(self.layer5_pointwise_conv(F.relu(layer5_depthwise_conv_bn)))
        layer5 = F.relu(layer5_pointwise_conv_bn)
        layer6_dw_relu = F.relu(self.layer6_depthwise_conv_bn(self.layer6_depthwise_conv(layer5)))
        layer6_pointwise_conv_bn = self.layer6_pointwise_conv_bn(self.layer6_pointwise_conv(layer6_dw_relu))
        layer6 = F.relu(layer6_pointwise_conv_bn)
        layer7_depthwise_conv_bn = self.layer7_depthwise_conv_bn(self.layer7_depthwise_conv(F.pad(layer6, (0, 1, 0, 1))))
        layer7_pointwise_conv_bn = self.layer7_pointwise_conv_bn(self.layer7_pointwise_conv(F.relu(layer7_depthwise_conv_bn)))
        layer7 = F.relu(layer7_pointwise_conv_bn)
        layer8_dw_relu = F.relu(self.layer8_depthwise_conv_bn(self.layer8_depthwise_conv(layer7)))
        layer8_pointwise_conv_bn = self.layer8_pointwise_conv_bn(self.layer8_pointwise_conv(layer8_dw_relu))
        layer8 = F.relu(layer8_pointwise_conv_bn)
        layer9_dw_relu = F.relu(self.layer9_depthwise_conv_bn(self.layer9_depthwise_conv(layer8)))
        layer9_pointwise_conv_bn = self.layer9_pointwise_conv_bn(self.layer9_pointwise_conv(layer9_dw_relu))
        layer9 = F.relu(layer9_pointwise_conv_bn)
        layer10_dw_relu = F.relu(self.layer10_depthwise_conv_bn(self.layer10_depthwise_conv(layer9)))
        layer10_pointwise_conv_bn = self.layer10_pointwise_conv_bn(self.layer10_pointwise_conv(layer10_dw_relu))
        layer10 = F.relu(layer10_pointwise_conv_bn)
        layer11_dw_relu = F.relu(self.layer11_depthwise_conv_bn(self.layer11_depthwise_conv(layer10)))
        layer11_pointwise_conv_bn = self.layer11_pointwise_conv_bn(self.layer11_pointwise_conv(layer11_dw_relu))
        layer11 = F.relu(layer11_pointwise_conv_bn)
        layer12_dw_relu = F.relu(self.layer12_depthwise_conv_bn(self.layer12_depthwise_conv(layer11)))
        layer12_pointwise_conv_bn = self.layer12_pointwise_conv_bn(self.layer12_pointwise_conv(layer12_dw_relu))
        layer12 = F.relu(layer12_pointwise_conv_bn)
        layer13_depthwise_conv_bn = self.layer13_depthwise_conv_bn(self.layer13_depthwise_conv(F.pad(layer12, (0, 1, 0, 1))))
        layer13_pointwise_conv_bn = self.layer13_pointwise_conv_bn(self.layer13_pointwise_conv(F.relu(layer13_depthwise_conv_bn)))
        layer13 = F.relu(layer13_pointwise_conv_bn)
        layer14_dw_relu = F.relu(self.layer14_depthwise_conv_bn(self.layer14_depthwise_conv(layer13)))
        layer14_pointwise_conv_bn = self.layer14_pointwise_conv_bn(self.layer14_pointwise_conv(layer14_dw_relu))
        layer14 = F.relu(layer14_pointwise_conv_bn)
        predictions = torch.sigmoid(self.logits(torch.flatten(F.adaptive_avg_pool2d(layer14, 1), 1)))
        return predictions


def get_inputs():
    return [
        torch.empty(1, 1, 96, 64).uniform_(-4.0, 1.0),
    ]


def get_init_inputs():
    return []
