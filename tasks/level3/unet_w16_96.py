"""PyTorch twin of the task `unet_w16_96`.

U-Net (width-reduced), full model: UNet(n_channels=3, n_classes=2, bilinear=False): inc, down1-4
(MaxPool2d(2) + DoubleConv), up1-4 (ConvTranspose2d(2, stride 2), concatenation with the skip,
DoubleConv), outc (milesial/Pytorch-UNet unet/unet_model.py, unet/unet_parts.py).
The whole U-Net with transposed-convolution up-sampling on a 96x96 RGB image, batch 1, inference
form. The width is reduced by 4 (16, 32, 64, 128, 256 channels instead of 64 to 1024, as
lightweight edge U-Nets use; at full width even 64x64 costs 4.5 GFLOP) so the f64 reference
stays fast. Sizes divide by 16, so the skip padding of Up is zero and left out. The output is
the 2-class logits map.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.up1_up_weight = nn.Parameter(torch.empty(256, 128, 2, 2))
        self.up1_up_bias = nn.Parameter(torch.empty(128))
        self.up2_up_weight = nn.Parameter(torch.empty(128, 64, 2, 2))
        self.up2_up_bias = nn.Parameter(torch.empty(64))
        self.up3_up_weight = nn.Parameter(torch.empty(64, 32, 2, 2))
        self.up3_up_bias = nn.Parameter(torch.empty(32))
        self.up4_up_weight = nn.Parameter(torch.empty(32, 16, 2, 2))
        self.up4_up_bias = nn.Parameter(torch.empty(16))
        self.inc_double_conv_0 = nn.Conv2d(3, 16, 3, padding=1, bias=False)
        self.inc_double_conv_1 = nn.BatchNorm2d(16)
        self.inc_double_conv_3 = nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.inc_double_conv_4 = nn.BatchNorm2d(16)
        self.down1_maxpool_conv_1_double_conv_0 = nn.Conv2d(16, 32, 3, padding=1, bias=False)
        self.down1_maxpool_conv_1_double_conv_1 = nn.BatchNorm2d(32)
        self.down1_maxpool_conv_1_double_conv_3 = nn.Conv2d(32, 32, 3, padding=1, bias=False)
        self.down1_maxpool_conv_1_double_conv_4 = nn.BatchNorm2d(32)
        self.down2_maxpool_conv_1_double_conv_0 = nn.Conv2d(32, 64, 3, padding=1, bias=False)
        self.down2_maxpool_conv_1_double_conv_1 = nn.BatchNorm2d(64)
        self.down2_maxpool_conv_1_double_conv_3 = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.down2_maxpool_conv_1_double_conv_4 = nn.BatchNorm2d(64)
        self.down3_maxpool_conv_1_double_conv_0 = nn.Conv2d(64, 128, 3, padding=1, bias=False)
        self.down3_maxpool_conv_1_double_conv_1 = nn.BatchNorm2d(128)
        self.down3_maxpool_conv_1_double_conv_3 = nn.Conv2d(128, 128, 3, padding=1, bias=False)
        self.down3_maxpool_conv_1_double_conv_4 = nn.BatchNorm2d(128)
        self.down4_maxpool_conv_1_double_conv_0 = nn.Conv2d(128, 256, 3, padding=1, bias=False)
        self.down4_maxpool_conv_1_double_conv_1 = nn.BatchNorm2d(256)
        self.down4_maxpool_conv_1_double_conv_3 = nn.Conv2d(256, 256, 3, padding=1, bias=False)
        self.down4_maxpool_conv_1_double_conv_4 = nn.BatchNorm2d(256)
        self.up1_conv_double_conv_0 = nn.Conv2d(256, 128, 3, padding=1, bias=False)
        self.up1_conv_double_conv_1 = nn.BatchNorm2d(128)
        self.up1_conv_double_conv_3 = nn.Conv2d(128, 128, 3, padding=1, bias=False)
        self.up1_conv_double_conv_4 = nn.BatchNorm2d(128)
        self.up2_conv_double_conv_0 = nn.Conv2d(128, 64, 3, padding=1, bias=False)
        self.up2_conv_double_conv_1 = nn.BatchNorm2d(64)
        self.up2_conv_double_conv_3 = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.up2_conv_double_conv_4 = nn.BatchNorm2d(64)
        self.up3_conv_double_conv_0 = nn.Conv2d(64, 32, 3, padding=1, bias=False)
        self.up3_conv_double_conv_1 = nn.BatchNorm2d(32)
        self.up3_conv_double_conv_3 = nn.Conv2d(32, 32, 3, padding=1, bias=False)
        self.up3_conv_double_conv_4 = nn.BatchNorm2d(32)
        self.up4_conv_double_conv_0 = nn.Conv2d(32, 16, 3, padding=1, bias=False)
        self.up4_conv_double_conv_1 = nn.BatchNorm2d(16)
        self.up4_conv_double_conv_3 = nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.up4_conv_double_conv_4 = nn.BatchNorm2d(16)
        self.outc_conv = nn.Conv2d(16, 2, 1)

    def forward(self, x):
        inc_double_conv_3 = self.inc_double_conv_3(F.relu(self.inc_double_conv_1(self.inc_double_conv_0(x))))
        inc = F.relu(self.inc_double_conv_4(inc_double_conv_3))
        down1_maxpool_conv_1_double_conv_1 = self.down1_maxpool_conv_1_double_conv_1(self.down1_maxpool_conv_1_double_conv_0(F.max_pool2d(inc, 2, 2)))
        down1_maxpool_conv_1_double_conv_3 = self.down1_maxpool_conv_1_double_conv_3(F.relu(down1_maxpool_conv_1_double_conv_1))
        down1_maxpool_conv_1_double_conv_4 = self.down1_maxpool_conv_1_double_conv_4(down1_maxpool_conv_1_double_conv_3)
        down1_maxpool_conv_1 = F.relu(down1_maxpool_conv_1_double_conv_4)
        down2_maxpool_conv_1_double_conv_0 = self.down2_maxpool_conv_1_double_conv_0(F.max_pool2d(down1_maxpool_conv_1, 2, 2))
        down2_maxpool_conv_1_double_conv_1 = self.down2_maxpool_conv_1_double_conv_1(down2_maxpool_conv_1_double_conv_0)
        down2_maxpool_conv_1_double_conv_3 = self.down2_maxpool_conv_1_double_conv_3(F.relu(down2_maxpool_conv_1_double_conv_1))
        down2_maxpool_conv_1_double_conv_4 = self.down2_maxpool_conv_1_double_conv_4(down2_maxpool_conv_1_double_conv_3)
        down2_maxpool_conv_1 = F.relu(down2_maxpool_conv_1_double_conv_4)
        down3_maxpool_conv_1_double_conv_0 = self.down3_maxpool_conv_1_double_conv_0(F.max_pool2d(down2_maxpool_conv_1, 2, 2))
        down3_maxpool_conv_1_double_conv_1 = self.down3_maxpool_conv_1_double_conv_1(down3_maxpool_conv_1_double_conv_0)
        down3_maxpool_conv_1_double_conv_3 = self.down3_maxpool_conv_1_double_conv_3(F.relu(down3_maxpool_conv_1_double_conv_1))
        down3_maxpool_conv_1_double_conv_4 = self.down3_maxpool_conv_1_double_conv_4(down3_maxpool_conv_1_double_conv_3)
        down3_maxpool_conv_1 = F.relu(down3_maxpool_conv_1_double_conv_4)
        down4_maxpool_conv_1_double_conv_0 = self.down4_maxpool_conv_1_double_conv_0(F.max_pool2d(down3_maxpool_conv_1, 2, 2))
        down4_maxpool_conv_1_double_conv_1 = self.down4_maxpool_conv_1_double_conv_1(down4_maxpool_conv_1_double_conv_0)
        down4_maxpool_conv_1_double_conv_3 = self.down4_maxpool_conv_1_double_conv_3(F.relu(down4_maxpool_conv_1_double_conv_1))
        down4_maxpool_conv_1_double_conv_4 = self.down4_maxpool_conv_1_double_conv_4(down4_maxpool_conv_1_double_conv_3)
        down4_maxpool_conv_1 = F.relu(down4_maxpool_conv_1_double_conv_4)
        up1_up = F.conv_transpose2d(down4_maxpool_conv_1, self.up1_up_weight, self.up1_up_bias, stride=2)
        up1_conv_double_conv_0 = self.up1_conv_double_conv_0(torch.cat([down3_maxpool_conv_1, up1_up], dim=1))
        up1_conv_double_conv_3 = self.up1_conv_double_conv_3(F.relu(self.up1_conv_double_conv_1(up1_conv_double_conv_0)))
        up1_conv = F.relu(self.up1_conv_double_conv_4(up1_conv_double_conv_3))
        up2_up = F.conv_transpose2d(up1_conv, self.up2_up_weight, self.up2_up_bias, stride=2)
        up2_conv_double_conv_0 = self.up2_conv_double_conv_0(torch.cat([down2_maxpool_conv_1, up2_up], dim=1))
        up2_conv_double_conv_3 = self.up2_conv_double_conv_3(F.relu(self.up2_conv_double_conv_1(up2_conv_double_conv_0)))
        up2_conv = F.relu(self.up2_conv_double_conv_4(up2_conv_double_conv_3))
        up3_up = F.conv_transpose2d(up2_conv, self.up3_up_weight, self.up3_up_bias, stride=2)
        up3_conv_double_conv_0 = self.up3_conv_double_conv_0(torch.cat([down1_maxpool_conv_1, up3_up], dim=1))
        up3_conv_double_conv_3 = self.up3_conv_double_conv_3(F.relu(self.up3_conv_double_conv_1(up3_conv_double_conv_0)))
        up3_conv = F.relu(self.up3_conv_double_conv_4(up3_conv_double_conv_3))
        up4_up = F.conv_transpose2d(up3_conv, self.up4_up_weight, self.up4_up_bias, stride=2)
        up4_conv_double_conv_1 = self.up4_conv_double_conv_1(self.up4_conv_double_conv_0(torch.cat([inc, up4_up], dim=1)))
        up4_conv_double_conv_4 = self.up4_conv_double_conv_4(self.up4_conv_double_conv_3(F.relu(up4_conv_double_conv_1)))
        up4_conv = F.relu(up4_conv_double_conv_4)
        outc_conv = self.outc_conv(up4_conv)
        return outc_conv


def get_inputs():
    return [
        torch.empty(1, 3, 96, 96).uniform_(-1.0, 1.0),
    ]


def get_init_inputs():
    return []
