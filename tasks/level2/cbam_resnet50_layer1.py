"""PyTorch twin of the task `cbam_resnet50_layer1`.

CBAM-ResNet-50, layer1.0.cbam: CBAM(256, reduction_ratio=16): ChannelGate (avg and max pool,
shared MLP) + SpatialGate (ChannelPool, 7x7 BasicConv, sigmoid) (Jongchan/attention-module
MODELS/cbam.py).
Convolutional block attention on a ResNet-50 bottleneck output, 256 channels at 56x56 (224x224
image): channel attention from the average- and max-pooled vectors through a shared MLP 256 ->
16 -> 256, summed and passed through a sigmoid; then spatial attention from the channel-wise max
and mean, a 7x7 convolution with batch norm (one channel), and a sigmoid.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp_fc1 = nn.Linear(256, 16)
        self.mlp_fc2 = nn.Linear(16, 256)
        self.spatial_conv = nn.Conv2d(2, 1, 7, padding=3, bias=False)
        self.spatial_bn = nn.BatchNorm2d(1, momentum=0.01)

    def forward(self, x):
        def mlp(p):
            return self.mlp_fc2(torch.relu(self.mlp_fc1(p.flatten(1))))

        # ChannelGate
        avg_pool = F.avg_pool2d(x, (x.size(2), x.size(3)), stride=(x.size(2), x.size(3)))
        max_pool = F.max_pool2d(x, (x.size(2), x.size(3)), stride=(x.size(2), x.size(3)))
        channel_att_sum = mlp(avg_pool) + mlp(max_pool)
        scale = torch.sigmoid(channel_att_sum).unsqueeze(2).unsqueeze(3).expand_as(x)
        x = x * scale
        # SpatialGate
        x_compress = torch.cat((torch.max(x, 1)[0].unsqueeze(1), torch.mean(x, 1).unsqueeze(1)), dim=1)
        x_out = self.spatial_bn(self.spatial_conv(x_compress))
        scale = torch.sigmoid(x_out)
        return x * scale


def get_inputs():
    return [
        torch.empty(1, 256, 56, 56).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
