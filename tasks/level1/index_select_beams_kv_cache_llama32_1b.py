"""PyTorch twin of the task `index_select_beams_kv_cache_llama32_1b`.

Llama-3.2-1B, past_key_values.reorder_cache (key_cache[layer_idx].index_select(0, beam_idx)):
torch.Tensor.index_select (transformers DynamicCache.reorder_cache (meta-llama/Llama-3.2-1B)).
Beam search reordering the key cache of one layer after a step: 4 beams x 8 key/value heads x 2048
cached tokens x head size 64 (16.8 MB), rows of the beam axis picked by the surviving beams'
indices.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, key_cache, beam_idx):
        return key_cache.index_select(0, beam_idx)


def get_inputs():
    return [
        torch.empty(4, 8, 2048, 64).uniform_(-1, 1),
        torch.randint(0, 4, (4,)),
    ]


def get_init_inputs():
    return []
