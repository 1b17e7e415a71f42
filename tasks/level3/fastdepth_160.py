"""PyTorch twin of the task `fastdepth_160`.

FastDepth, full model: MobileNetSkipAdd: MobileNet encoder conv0-13 (ReLU6), NNConv5 decoder
decode_conv1-5 (5x5 depthwise + pointwise, BN, ReLU, nearest x2 upsampling) with additive skips
from conv1, conv3, conv5, decode_conv6 (pointwise to depth) (dwofk/fast-depth models.py,
imagenet/mobilenet.py).
The whole FastDepth monocular depth network, batch 1, inference form. The input is reduced from
224x224 to 160x160 (1.5 to 0.78 GFLOP) for the f64 reference; channels are the model's, and the
skips meet at 20x20, 40x40 and 80x80. The output is the 160x160 depth map (ReLU).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv0_0 = nn.Conv2d(3, 32, 3, stride=2, padding=1, bias=False)
        self.conv0_1 = nn.BatchNorm2d(32)
        self.conv1_0 = nn.Conv2d(32, 32, 3, padding=1, groups=32, bias=False)
        self.conv1_1 = nn.BatchNorm2d(32)
        self.conv1_3 = nn.Conv2d(32, 64, 1, bias=False)
        self.conv1_4 = nn.BatchNorm2d(64)
        self.conv2_0 = nn.Conv2d(64, 64, 3, stride=2, padding=1, groups=64, bias=False)
        self.conv2_1 = nn.BatchNorm2d(64)
        self.conv2_3 = nn.Conv2d(64, 128, 1, bias=False)
        self.conv2_4 = nn.BatchNorm2d(128)
        self.conv3_0 = nn.Conv2d(128, 128, 3, padding=1, groups=128, bias=False)
        self.conv3_1 = nn.BatchNorm2d(128)
        self.conv3_3 = nn.Conv2d(128, 128, 1, bias=False)
        self.conv3_4 = nn.BatchNorm2d(128)
        self.conv4_0 = nn.Conv2d(128, 128, 3, stride=2, padding=1, groups=128, bias=False)
        self.conv4_1 = nn.BatchNorm2d(128)
        self.conv4_3 = nn.Conv2d(128, 256, 1, bias=False)
        self.conv4_4 = nn.BatchNorm2d(256)
        self.conv5_0 = nn.Conv2d(256, 256, 3, padding=1, groups=256, bias=False)
        self.conv5_1 = nn.BatchNorm2d(256)
        self.conv5_3 = nn.Conv2d(256, 256, 1, bias=False)
        self.conv5_4 = nn.BatchNorm2d(256)
        self.conv6_0 = nn.Conv2d(256, 256, 3, stride=2, padding=1, groups=256, bias=False)
        self.conv6_1 = nn.BatchNorm2d(256)
        self.conv6_3 = nn.Conv2d(256, 512, 1, bias=False)
        self.conv6_4 = nn.BatchNorm2d(512)
        self.conv7_0 = nn.Conv2d(512, 512, 3, padding=1, groups=512, bias=False)
        self.conv7_1 = nn.BatchNorm2d(512)
        self.conv7_3 = nn.Conv2d(512, 512, 1, bias=False)
        self.conv7_4 = nn.BatchNorm2d(512)
        self.conv8_0 = nn.Conv2d(512, 512, 3, padding=1, groups=512, bias=False)
        self.conv8_1 = nn.BatchNorm2d(512)
        self.conv8_3 = nn.Conv2d(512, 512, 1, bias=False)
        self.conv8_4 = nn.BatchNorm2d(512)
        self.conv9_0 = nn.Conv2d(512, 512, 3, padding=1, groups=512, bias=False)
        self.conv9_1 = nn.BatchNorm2d(512)
        self.conv9_3 = nn.Conv2d(512, 512, 1, bias=False)
        self.conv9_4 = nn.BatchNorm2d(512)
        self.conv10_0 = nn.Conv2d(512, 512, 3, padding=1, groups=512, bias=False)
        self.conv10_1 = nn.BatchNorm2d(512)
        self.conv10_3 = nn.Conv2d(512, 512, 1, bias=False)
        self.conv10_4 = nn.BatchNorm2d(512)
        self.conv11_0 = nn.Conv2d(512, 512, 3, padding=1, groups=512, bias=False)
        self.conv11_1 = nn.BatchNorm2d(512)
        self.conv11_3 = nn.Conv2d(512, 512, 1, bias=False)
        self.conv11_4 = nn.BatchNorm2d(512)
        self.conv12_0 = nn.Conv2d(512, 512, 3, stride=2, padding=1, groups=512, bias=False)
        self.conv12_1 = nn.BatchNorm2d(512)
        self.conv12_3 = nn.Conv2d(512, 1024, 1, bias=False)
        self.conv12_4 = nn.BatchNorm2d(1024)
        self.conv13_0 = nn.Conv2d(1024, 1024, 3, padding=1, groups=1024, bias=False)
        self.conv13_1 = nn.BatchNorm2d(1024)
        self.conv13_3 = nn.Conv2d(1024, 1024, 1, bias=False)
        self.conv13_4 = nn.BatchNorm2d(1024)
        self.decode_conv1_0_0 = nn.Conv2d(1024, 1024, 5, padding=2, groups=1024, bias=False)
        self.decode_conv1_0_1 = nn.BatchNorm2d(1024)
        self.decode_conv1_1_0 = nn.Conv2d(1024, 512, 1, bias=False)
        self.decode_conv1_1_1 = nn.BatchNorm2d(512)
        self.decode_conv2_0_0 = nn.Conv2d(512, 512, 5, padding=2, groups=512, bias=False)
        self.decode_conv2_0_1 = nn.BatchNorm2d(512)
        self.decode_conv2_1_0 = nn.Conv2d(512, 256, 1, bias=False)
        self.decode_conv2_1_1 = nn.BatchNorm2d(256)
        self.decode_conv3_0_0 = nn.Conv2d(256, 256, 5, padding=2, groups=256, bias=False)
        self.decode_conv3_0_1 = nn.BatchNorm2d(256)
        self.decode_conv3_1_0 = nn.Conv2d(256, 128, 1, bias=False)
        self.decode_conv3_1_1 = nn.BatchNorm2d(128)
        self.decode_conv4_0_0 = nn.Conv2d(128, 128, 5, padding=2, groups=128, bias=False)
        self.decode_conv4_0_1 = nn.BatchNorm2d(128)
        self.decode_conv4_1_0 = nn.Conv2d(128, 64, 1, bias=False)
        self.decode_conv4_1_1 = nn.BatchNorm2d(64)
        self.decode_conv5_0_0 = nn.Conv2d(64, 64, 5, padding=2, groups=64, bias=False)
        self.decode_conv5_0_1 = nn.BatchNorm2d(64)
        self.decode_conv5_1_0 = nn.Conv2d(64, 32, 1, bias=False)
        self.decode_conv5_1_1 = nn.BatchNorm2d(32)
        self.decode_conv6_0 = nn.Conv2d(32, 1, 1, bias=False)
        self.decode_conv6_1 = nn.BatchNorm2d(1)

    def forward(self, x):
        conv1_2 = F.relu6(self.conv1_1(self.conv1_0(F.relu6(self.conv0_1(self.conv0_0(x))))))
        conv1 = F.relu6(self.conv1_4(self.conv1_3(conv1_2)))
        conv2_5 = F.relu6(self.conv2_4(self.conv2_3(F.relu6(self.conv2_1(self.conv2_0(conv1))))))
        conv3_5 = F.relu6(self.conv3_4(self.conv3_3(F.relu6(self.conv3_1(self.conv3_0(conv2_5))))))
        conv4_5 = F.relu6(self.conv4_4(self.conv4_3(F.relu6(self.conv4_1(self.conv4_0(conv3_5))))))
        conv5_5 = F.relu6(self.conv5_4(self.conv5_3(F.relu6(self.conv5_1(self.conv5_0(conv4_5))))))
        conv6_5 = F.relu6(self.conv6_4(self.conv6_3(F.relu6(self.conv6_1(self.conv6_0(conv5_5))))))
        conv7_5 = F.relu6(self.conv7_4(self.conv7_3(F.relu6(self.conv7_1(self.conv7_0(conv6_5))))))
        conv8_5 = F.relu6(self.conv8_4(self.conv8_3(F.relu6(self.conv8_1(self.conv8_0(conv7_5))))))
        conv9_5 = F.relu6(self.conv9_4(self.conv9_3(F.relu6(self.conv9_1(self.conv9_0(conv8_5))))))
        conv10_4 = self.conv10_4(self.conv10_3(F.relu6(self.conv10_1(self.conv10_0(conv9_5)))))
        conv10 = F.relu6(conv10_4)
        conv11_4 = self.conv11_4(self.conv11_3(F.relu6(self.conv11_1(self.conv11_0(conv10)))))
        conv11 = F.relu6(conv11_4)
        conv12_4 = self.conv12_4(self.conv12_3(F.relu6(self.conv12_1(self.conv12_0(conv11)))))
        conv12 = F.relu6(conv12_4)
        conv13_4 = self.conv13_4(self.conv13_3(F.relu6(self.conv13_1(self.conv13_0(conv12)))))
        conv13 = F.relu6(conv13_4)
        decode_conv1_1_0 = self.decode_conv1_1_0(F.relu(self.decode_conv1_0_1(self.decode_conv1_0_0(conv13))))
        decode_conv1_up = F.interpolate(F.relu(self.decode_conv1_1_1(decode_conv1_1_0)), scale_factor=2, mode="nearest")
        decode_conv2_1_0 = self.decode_conv2_1_0(F.relu(self.decode_conv2_0_1(self.decode_conv2_0_0(decode_conv1_up))))
        decode_conv2_up = F.interpolate(F.relu(self.decode_conv2_1_1(decode_conv2_1_0)), scale_factor=2, mode="nearest")
        decode_conv2_skip = decode_conv2_up + conv5_5
        decode_conv3_1_0 = self.decode_conv3_1_0(F.relu(self.decode_conv3_0_1(self.decode_conv3_0_0(decode_conv2_skip))))
        decode_conv3_up = F.interpolate(F.relu(self.decode_conv3_1_1(decode_conv3_1_0)), scale_factor=2, mode="nearest")
        decode_conv3_skip = decode_conv3_up + conv3_5
        decode_conv4_1_0 = self.decode_conv4_1_0(F.relu(self.decode_conv4_0_1(self.decode_conv4_0_0(decode_conv3_skip))))
        decode_conv4_up = F.interpolate(F.relu(self.decode_conv4_1_1(decode_conv4_1_0)), scale_factor=2, mode="nearest")
        decode_conv4_skip = decode_conv4_up + conv1
        decode_conv5_1_0 = self.decode_conv5_1_0(F.relu(self.decode_conv5_0_1(self.decode_conv5_0_0(decode_conv4_skip))))
        decode_conv5_up = F.interpolate(F.relu(self.decode_conv5_1_1(decode_conv5_1_0)), scale_factor=2, mode="nearest")
        decode_conv6_2 = F.relu(self.decode_conv6_1(self.decode_conv6_0(decode_conv5_up)))
        return decode_conv6_2


def get_inputs():
    return [
        torch.empty(1, 3, 160, 160).uniform_(-1.0, 1.0),
    ]


def get_init_inputs():
    return []
