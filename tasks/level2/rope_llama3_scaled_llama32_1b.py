"""PyTorch twin of the task `rope_llama3_scaled_llama32_1b`.

Llama-3.2-1B, model.rotary_emb + apply_rotary_pos_emb: LlamaRotaryEmbedding with rope_type
llama3 (theta 500000, factor 32, low_freq_factor 1, high_freq_factor 4, original context 8192)
and apply_rotary_pos_emb (transformers modeling_llama,
modeling_rope_utils._compute_llama3_parameters (meta-llama/Llama-3.2-1B)).
Rotary position embedding of Llama-3.2-1B for a 128-token prefill, with Llama 3's frequency
scaling computed in the graph: inverse frequencies 1 / 500000^(2i/64), wavelengths 2 pi / f, low
frequencies divided by 32, the middle band blended (compare and where), then positions (iota),
cos and sin of the doubled table, and the rotation of 32 query and 8 key heads.
"""

import math

import torch
import torch.nn as nn


def rotate_half(x):
    """Rotates half the hidden dims of the input."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


def llama3_inv_freq(dtype, device, base=500000.0, dim=64, factor=32.0, low_freq_factor=1.0, high_freq_factor=4.0,
                    old_context_len=8192):
    """transformers _compute_default_rope_parameters + _compute_llama3_parameters."""
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(device=device, dtype=dtype) / dim))
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    # wavelen < high_freq_wavelen: do nothing
    # wavelen > low_freq_wavelen: divide by factor
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    # otherwise: interpolate between the two, using a smooth factor
    smooth_factor = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    return torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k):
        inv_freq = llama3_inv_freq(q.dtype, q.device)
        position_ids = torch.arange(q.shape[2], device=q.device)[None, :]
        inv_freq_expanded = inv_freq[None, :, None].expand(position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].to(q.dtype)
        freqs = (inv_freq_expanded @ position_ids_expanded).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        return apply_rotary_pos_emb(q, k, cos, sin)


def get_inputs():
    return [
        torch.empty(1, 32, 128, 64).uniform_(-1, 1),
        torch.empty(1, 8, 128, 64).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
