"""PyTorch twin of the task `resnet8_cifar10`.

ResNet-8 (MLPerf Tiny image classification), full model: resnet_v1_eembc(): Conv2D(16, 3) + BN +
ReLU, three residual stacks (16, 32, 64 filters; strided stacks with a 1x1 convolution
shortcut), AveragePooling2D(8), Dense(10, softmax) (mlcommons/tiny
benchmark/training/image_classification keras_model.py).
The MLPerf Tiny CIFAR-10 reference ResNet on its 32x32 RGB input, batch 1, inference form: Keras
convolutions with biases and SAME padding (a bottom/right pad at stride 2), batch norm eps 1e-3.
The output is the ten class probabilities.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16, eps=0.001)
        self.stack1_conv1 = nn.Conv2d(16, 16, 3, padding=1)
        self.stack1_bn1 = nn.BatchNorm2d(16, eps=0.001)
        self.stack1_conv2 = nn.Conv2d(16, 16, 3, padding=1)
        self.stack1_bn2 = nn.BatchNorm2d(16, eps=0.001)
        self.stack2_conv1 = nn.Conv2d(16, 32, 3, stride=2)
        self.stack2_bn1 = nn.BatchNorm2d(32, eps=0.001)
        self.stack2_conv2 = nn.Conv2d(32, 32, 3, padding=1)
        self.stack2_bn2 = nn.BatchNorm2d(32, eps=0.001)
        self.stack2_shortcut = nn.Conv2d(16, 32, 1, stride=2)
        self.stack3_conv1 = nn.Conv2d(32, 64, 3, stride=2)
        self.stack3_bn1 = nn.BatchNorm2d(64, eps=0.001)
        self.stack3_conv2 = nn.Conv2d(64, 64, 3, padding=1)
        self.stack3_bn2 = nn.BatchNorm2d(64, eps=0.001)
        self.stack3_shortcut = nn.Conv2d(32, 64, 1, stride=2)
        self.dense = nn.Linear(64, 10)

    def forward(self, x):
        relu1 = F.relu(self.bn1(self.conv1(x)))
        stack1_bn2 = self.stack1_bn2(self.stack1_conv2(F.relu(self.stack1_bn1(self.stack1_conv1(relu1)))))
        stack1 = F.relu((relu1 + stack1_bn2))
        stack2_conv2 = self.stack2_conv2(F.relu(self.stack2_bn1(self.stack2_conv1(F.pad(stack1, (0, 1, 0, 1))))))
        stack2 = F.relu((self.stack2_shortcut(stack1) + self.stack2_bn2(stack2_conv2)))
        stack3_conv2 = self.stack3_conv2(F.relu(self.stack3_bn1(self.stack3_conv1(F.pad(stack2, (0, 1, 0, 1))))))
        stack3 = F.relu((self.stack3_shortcut(stack2) + self.stack3_bn2(stack3_conv2)))
        softmax = F.softmax(self.dense(torch.flatten(F.avg_pool2d(stack3, 8), 1)), dim=-1)
        return softmax


def get_inputs():
    return [
        torch.empty(1, 3, 32, 32).uniform_(-1.0, 1.0),
    ]


def get_init_inputs():
    return []
