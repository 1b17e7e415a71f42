"""PyTorch twin of the task `patch_stem_layernorm2d_convnext_tiny`.

ConvNeXt-Tiny, features.0: torchvision Conv2dNormActivation(3, 96, kernel_size=4, stride=4,
norm_layer=LayerNorm2d, activation_layer=None, bias=True) (torchvision.models.convnext_tiny).
The patchify stem of ConvNeXt-Tiny on a 224x224 image: 4x4 stride-4 convolution 3 -> 96 with
bias, then LayerNorm2d (eps 1e-6) over the channels of the 56x56 map (permute, normalise,
permute back).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 96, 4, stride=4)
        self.norm = nn.LayerNorm(96, eps=1e-06)

    def forward(self, x):
        x = self.conv(x)
        # LayerNorm2d
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.norm.normalized_shape, self.norm.weight, self.norm.bias, self.norm.eps)
        return x.permute(0, 3, 1, 2)


def get_inputs():
    return [
        torch.empty(1, 3, 224, 224).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
