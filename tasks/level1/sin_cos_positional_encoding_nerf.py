"""PyTorch twin of the task `sin_cos_positional_encoding_nerf`.

NeRF, embed_fn (Embedder.embed, multires=10): torch.sin + torch.cos + torch.cat (Embedder)
(yenchenlin/nerf-pytorch run_nerf_helpers.py).
Positional encoding of 65536 sample points (1024 rays x 64 coarse samples): each coordinate in [-1,
1] and its sine and cosine at frequencies 2^0 .. 2^9, concatenated to 63 features (x, sin(x),
cos(x), sin(2x), ...); the frequencies are 2 to the power of an iota.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, multires):
        super().__init__()
        self.max_freq = multires - 1
        self.num_freqs = multires

    def forward(self, inputs):
        # Embedder(include_input=True, log_sampling=True, periodic_fns=[torch.sin, torch.cos])
        freq_bands = 2.0 ** torch.linspace(0.0, self.max_freq, steps=self.num_freqs, device=inputs.device)
        embed_fns = [lambda x: x]
        for freq in freq_bands:
            for p_fn in [torch.sin, torch.cos]:
                embed_fns.append(lambda x, p_fn=p_fn, freq=freq: p_fn(x * freq))
        return torch.cat([fn(inputs) for fn in embed_fns], -1)


def get_inputs():
    return [
        torch.empty(65536, 3).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [10]
