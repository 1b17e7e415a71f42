"""PyTorch twin of the task `quick_gelu_clip_vit_b16`.

CLIP ViT-B/16 (OpenAI), visual.transformer.resblocks.0.mlp.gelu: QuickGELU (x * torch.sigmoid(1.702
* x)) (openai/CLIP clip/model.py).
The sigmoid approximation of GELU in the image encoder's MLP: 197 tokens (196 patches and the class
token, sequence-first layout) x 3072 features.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(1.702 * x)


def get_inputs():
    return [
        torch.empty(197, 1, 3072).uniform_(-4, 4),
    ]


def get_init_inputs():
    return []
