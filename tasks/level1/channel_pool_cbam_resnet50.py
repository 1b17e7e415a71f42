"""PyTorch twin of the task `channel_pool_cbam_resnet50`.

CBAM-ResNet-50, layer1.0.cbam.SpatialGate.compress: ChannelPool (torch.max and torch.mean over
dim 1, cat) (Jongchan/attention-module MODELS/cbam.py).
CBAM's spatial-attention input: the channel-wise max and mean of the 256-channel 56x56
bottleneck output (224x224 image), stacked as 2 channels.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.cat((torch.max(x, 1)[0].unsqueeze(1), torch.mean(x, 1).unsqueeze(1)), dim=1)


def get_inputs():
    return [
        torch.empty(1, 256, 56, 56).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
