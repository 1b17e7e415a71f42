"""PyTorch twin of the task `crop_skip_unet`.

U-Net (valid convolutions, 572x572 input), up_path.0 (UNetUpBlock.center_crop of the skip
connection): torch.Tensor.__getitem__ (slices) (jvanvugt/pytorch-unet unet.py).
Center crop of the 512-channel 64x64 contracting-path map to the 56x56 of the upsampled decoder
map, before their concatenation.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, target_size):
        super().__init__()
        self.target_size = target_size

    def forward(self, bridge):
        _, _, layer_height, layer_width = bridge.size()
        diff_y = (layer_height - self.target_size) // 2
        diff_x = (layer_width - self.target_size) // 2
        return bridge[:, :, diff_y : diff_y + self.target_size, diff_x : diff_x + self.target_size]


def get_inputs():
    return [
        torch.empty(1, 512, 64, 64).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [56]
