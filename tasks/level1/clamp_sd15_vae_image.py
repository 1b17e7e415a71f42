"""PyTorch twin of the task `clamp_sd15_vae_image`.

Stable Diffusion v1.5, VaeImageProcessor.denormalize: (image / 2 + 0.5).clamp(0, 1):
torch.Tensor.clamp (diffusers image_processor.py).
The clamp to [0, 1] of the decoded 512x512 RGB image (after the affine x/2 + 0.5); about a sixth
of the values fall on each side.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.clamp(0, 1)


def get_inputs():
    return [
        torch.empty(1, 3, 512, 512).uniform_(-0.25, 1.25),
    ]


def get_init_inputs():
    return []
