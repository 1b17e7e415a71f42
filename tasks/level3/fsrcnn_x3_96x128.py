"""PyTorch twin of the task `fsrcnn_x3_96x128`.

FSRCNN (x3), full model: FSRCNN(scale_factor=3, num_channels=1, d=56, s=12, m=4): first_part
(5x5 conv, PReLU), mid_part (shrink 1x1, 4x 3x3 maps, expand 1x1, PReLU), last_part
ConvTranspose2d(56, 1, 9, stride=3, padding=4, output_padding=2) (yjn870/FSRCNN-pytorch
models.py).
The whole FSRCNN x3 super-resolution network on the luminance of a 96x128 frame (values in [0,
1]) giving 288x384, batch 1: PReLU slopes drawn from [0.1, 0.4]; weights drawn at He scale
(kaiming_uniform with the ReLU gain, the deconvolution at the same scale over its 56 x 9
contributing taps) as the model's own He-normal init does, so activations keep their range. The
output is the upscaled luminance.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.last_part_weight = nn.Parameter(torch.empty(56, 1, 9, 9))
        self.last_part_bias = nn.Parameter(torch.empty(1))
        self.first_part_0 = nn.Conv2d(1, 56, 5, padding=2)
        self.first_part_1 = nn.PReLU(56)
        self.mid_part_0 = nn.Conv2d(56, 12, 1)
        self.mid_part_1 = nn.PReLU(12)
        self.mid_part_2 = nn.Conv2d(12, 12, 3, padding=1)
        self.mid_part_3 = nn.PReLU(12)
        self.mid_part_4 = nn.Conv2d(12, 12, 3, padding=1)
        self.mid_part_5 = nn.PReLU(12)
        self.mid_part_6 = nn.Conv2d(12, 12, 3, padding=1)
        self.mid_part_7 = nn.PReLU(12)
        self.mid_part_8 = nn.Conv2d(12, 12, 3, padding=1)
        self.mid_part_9 = nn.PReLU(12)
        self.mid_part_10 = nn.Conv2d(12, 56, 1)
        self.mid_part_11 = nn.PReLU(56)

    def forward(self, x):
        first_part_0 = self.first_part_0(x)
        mid_part_0 = self.mid_part_0(self.first_part_1(first_part_0))
        mid_part_2 = self.mid_part_2(self.mid_part_1(mid_part_0))
        mid_part_4 = self.mid_part_4(self.mid_part_3(mid_part_2))
        mid_part_6 = self.mid_part_6(self.mid_part_5(mid_part_4))
        mid_part_8 = self.mid_part_8(self.mid_part_7(mid_part_6))
        mid_part_10 = self.mid_part_10(self.mid_part_9(mid_part_8))
        last_part = F.conv_transpose2d(self.mid_part_11(mid_part_10), self.last_part_weight, self.last_part_bias, stride=3, padding=4, output_padding=2)
        return last_part


def get_inputs():
    return [
        torch.empty(1, 1, 96, 128).uniform_(0.0, 1.0),
    ]


def get_init_inputs():
    return []
