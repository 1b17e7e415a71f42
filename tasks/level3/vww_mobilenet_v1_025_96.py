"""PyTorch twin of the task `vww_mobilenet_v1_025_96`.

MobileNetV1 0.25 (MLPerf Tiny visual wake words), full model: mobilenet_v1(): Conv2D(8, 3,
strides=2, SAME) + BN + ReLU, 13 depthwise-separable layers (alpha 0.25), AveragePooling2D,
Dense(2, softmax) (mlcommons/tiny benchmark/training/visual_wake_words vww_model.py).
The MLPerf Tiny visual wake words reference model (person / no person) on its 96x96 RGB input,
batch 1, inference form: Keras convolutions with biases and SAME padding (asymmetric pads at
stride 2), batch norm eps 1e-3, ReLU. The output is the two class probabilities.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_0 = nn.Conv2d(3, 8, 3, stride=2)
        self.bn_0 = nn.BatchNorm2d(8, eps=0.001)
        self.dw_1 = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.dw_bn_1 = nn.BatchNorm2d(8, eps=0.001)
        self.pw_1 = nn.Conv2d(8, 16, 1)
        self.pw_bn_1 = nn.BatchNorm2d(16, eps=0.001)
        self.dw_2 = nn.Conv2d(16, 16, 3, stride=2, groups=16)
        self.dw_bn_2 = nn.BatchNorm2d(16, eps=0.001)
        self.pw_2 = nn.Conv2d(16, 32, 1)
        self.pw_bn_2 = nn.BatchNorm2d(32, eps=0.001)
        self.dw_3 = nn.Conv2d(32, 32, 3, padding=1, groups=32)
        self.dw_bn_3 = nn.BatchNorm2d(32, eps=0.001)
        self.pw_3 = nn.Conv2d(32, 32, 1)
        self.pw_bn_3 = nn.BatchNorm2d(32, eps=0.001)
        self.dw_4 = nn.Conv2d(32, 32, 3, stride=2, groups=32)
        self.dw_bn_4 = nn.BatchNorm2d(32, eps=0.001)
        self.pw_4 = nn.Conv2d(32, 64, 1)
        self.pw_bn_4 = nn.BatchNorm2d(64, eps=0.001)
        self.dw_5 = nn.Conv2d(64, 64, 3, padding=1, groups=64)
        self.dw_bn_5 = nn.BatchNorm2d(64, eps=0.001)
        self.pw_5 = nn.Conv2d(64, 64, 1)
        self.pw_bn_5 = nn.BatchNorm2d(64, eps=0.001)
        self.dw_6 = nn.Conv2d(64, 64, 3, stride=2, groups=64)
        self.dw_bn_6 = nn.BatchNorm2d(64, eps=0.001)
        self.pw_6 = nn.Conv2d(64, 128, 1)
        self.pw_bn_6 = nn.BatchNorm2d(128, eps=0.001)
        self.dw_7 = nn.Conv2d(128, 128, 3, padding=1, groups=128)
        self.dw_bn_7 = nn.BatchNorm2d(128, eps=0.001)
        self.pw_7 = nn.Conv2d(128, 128, 1)
        self.pw_bn_7 = nn.BatchNorm2d(128, eps=0.001)
        self.dw_8 = nn.Conv2d(128, 128, 3, padding=1, groups=128)
        self.dw_bn_8 = nn.BatchNorm2d(128, eps=0.001)
        self.pw_8 = nn.Conv2d(128, 128, 1)
        self.pw_bn_8 = nn.BatchNorm2d(128, eps=0.001)
        self.dw_9 = nn.Conv2d(128, 128, 3, padding=1, groups=128)
        self.dw_bn_9 = nn.BatchNorm2d(128, eps=0.001)
        self.pw_9 = nn.Conv2d(128, 128, 1)
        self.pw_bn_9 = nn.BatchNorm2d(128, eps=0.001)
        self.dw_10 = nn.Conv2d(128, 128, 3, padding=1, groups=128)
        self.dw_bn_10 = nn.BatchNorm2d(128, eps=0.001)
        self.pw_10 = nn.Conv2d(128, 128, 1)
        self.pw_bn_10 = nn.BatchNorm2d(128, eps=0.001)
        self.dw_11 = nn.Conv2d(128, 128, 3, padding=1, groups=128)
        self.dw_bn_11 = nn.BatchNorm2d(128, eps=0.001)
        self.pw_11 = nn.Conv2d(128, 128, 1)
        self.pw_bn_11 = nn.BatchNorm2d(128, eps=0.001)
        self.dw_12 = nn.Conv2d(128, 128, 3, stride=2, groups=128)
        self.dw_bn_12 = nn.BatchNorm2d(128, eps=0.001)
        self.pw_12 = nn.Conv2d(128, 256, 1)
        self.pw_bn_12 = nn.BatchNorm2d(256, eps=0.001)
        self.dw_13 = nn.Conv2d(256, 256, 3, padding=1, groups=256)
        self.dw_bn_13 = nn.BatchNorm2d(256, eps=0.001)
        self.pw_13 = nn.Conv2d(256, 256, 1)
        self.pw_bn_13 = nn.BatchNorm2d(256, eps=0.001)
        self.dense = nn.Linear(256, 2)

    def forward(self, x):
        dw_bn_1 = self.dw_bn_1(self.dw_1(F.relu(self.bn_0(self.conv_0(F.pad(x, (0, 1, 0, 1)))))))
        block_1 = F.relu(self.pw_bn_1(self.pw_1(F.relu(dw_bn_1))))
        pw_bn_2 = self.pw_bn_2(self.pw_2(F.relu(self.dw_bn_2(self.dw_2(F.pad(block_1, (0, 1, 0, 1)))))))
        block_2 = F.relu(pw_bn_2)
        block_3 = F.relu(self.pw_bn_3(self.pw_3(F.relu(self.dw_bn_3(self.dw_3(block_2))))))
        pw_bn_4 = self.pw_bn_4(self.pw_4(F.relu(self.dw_bn_4(self.dw_4(F.pad(block_3, (0, 1, 0, 1)))))))
        block_4 = F.relu(pw_bn_4)
        block_5 = F.relu(self.pw_bn_5(self.pw_5(F.relu(self.dw_bn_5(self.dw_5(block_4))))))
        pw_bn_6 = self.pw_bn_6(self.pw_6(F.relu(self.dw_bn_6(self.dw_6(F.pad(block_5, (0, 1, 0, 1)))))))
        block_6 = F.relu(pw_bn_6)
        block_7 = F.relu(self.pw_bn_7(self.pw_7(F.relu(self.dw_bn_7(self.dw_7(block_6))))))
        block_8 = F.relu(self.pw_bn_8(self.pw_8(F.relu(self.dw_bn_8(self.dw_8(block_7))))))
        block_9 = F.relu(self.pw_bn_9(self.pw_9(F.relu(self.dw_bn_9(self.dw_9(block_8))))))
        block_10 = F.relu(self.pw_bn_10(self.pw_10(F.relu(self.dw_bn_10(self.dw_10(block_9))))))
        block_11 = F.relu(self.pw_bn_11(self.pw_11(F.relu(self.dw_bn_11(self.dw_11(block_10))))))
        pw_12 = self.pw_12(F.relu(self.dw_bn_12(self.dw_12(F.pad(block_11, (0, 1, 0, 1))))))
        block_12 = F.relu(self.pw_bn_12(pw_12))
        block_13 = F.relu(self.pw_bn_13(self.pw_13(F.relu(self.dw_bn_13(self.dw_13(block_12))))))
        softmax = F.softmax(self.dense(torch.flatten(F.avg_pool2d(block_13, 3), 1)), dim=-1)
        return softmax


def get_inputs():
    return [
        torch.empty(1, 3, 96, 96).uniform_(-1.0, 1.0),
    ]


def get_init_inputs():
    return []
