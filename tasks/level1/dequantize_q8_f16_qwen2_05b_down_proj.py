"""PyTorch twin of the task `dequantize_q8_f16_qwen2_05b_down_proj`.

Qwen2-0.5B, model.layers.0.mlp.down_proj.weight stored as int8 with one float scale per output
row: the weight dequantized to float16 for a half-precision matrix product.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, w, scale):
        return (w.to(torch.float32) * scale).to(torch.float16)


def get_inputs():
    return [
        torch.randint(-128, 128, (896, 4864), dtype=torch.int8),
        torch.empty(896, 1).uniform_(0.0005, 0.004),
    ]


def get_init_inputs():
    return []
