"""PyTorch twin of the task `deeplabv3plus_decoder_mobilenetv2`.

DeepLabV3+ (MobileNetV2 encoder), decoder (block1, up, block2): DeepLabV3PlusDecoder:
UpsamplingBilinear2d(scale_factor=4) (align_corners=True) of the ASPP output, Conv2d(24, 48, 1)
+ BN + ReLU on the stride-4 features, concatenation, SeparableConv2d(304, 256, 3) + BN + ReLU
(qubvel/segmentation_models.pytorch segmentation_models_pytorch/decoders/deeplabv3/decoder.py).
The DeepLabV3+ decoder on a 224x224 image: the ASPP output (256 channels at stride 16, 14x14) is
upsampled 4x bilinearly to 56x56 (nn.UpsamplingBilinear2d, so align_corners=True), the stride-4
MobileNetV2 features (24 channels) pass a 1x1 convolution to 48 channels with batch norm and
ReLU, the two are concatenated (304 channels), and a separable 3x3 convolution (depthwise, then
pointwise 304 -> 256, no bias) with batch norm and ReLU fuses them.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.block1_conv = nn.Conv2d(24, 48, 1, bias=False)
        self.block1_bn = nn.BatchNorm2d(48)
        self.block2_depthwise = nn.Conv2d(304, 304, 3, padding=1, groups=304, bias=False)
        self.block2_pointwise = nn.Conv2d(304, 256, 1, bias=False)
        self.block2_bn = nn.BatchNorm2d(256)

    def forward(self, aspp_features, high_res_features):
        block1_conv = self.block1_conv(high_res_features)
        block1_bn = self.block1_bn(block1_conv)
        block1_relu = torch.relu(block1_bn)
        upsample = F.interpolate(aspp_features, scale_factor=4.0, mode="bilinear", align_corners=True)  # nn.UpsamplingBilinear2d
        cat = torch.cat([upsample, block1_relu], 1)
        block2_depthwise = self.block2_depthwise(cat)
        block2_pointwise = self.block2_pointwise(block2_depthwise)
        block2_bn = self.block2_bn(block2_pointwise)
        block2_relu = torch.relu(block2_bn)
        return block2_relu


def get_inputs():
    return [
        torch.empty(1, 256, 14, 14).uniform_(0, 2),
        torch.empty(1, 24, 56, 56).uniform_(0, 2),
    ]


def get_init_inputs():
    return []
