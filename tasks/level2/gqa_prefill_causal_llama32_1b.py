"""PyTorch twin of the task `gqa_prefill_causal_llama32_1b`.

Llama-3.2-1B, model.layers.0.self_attn: LlamaAttention (32 query heads, 8 key/value heads,
head_dim 64), prefill with the causal mask (eager attention) (transformers LlamaAttention (meta-
llama/Llama-3.2-1B)).
Self-attention of a 32-token prefill in Llama-3.2-1B: q/k/v projections 2048 -> 2048, 512, 512,
rotary embedding with the cos/sin tables the model passes in (inputs), repeat_kv of the 8
key/value heads to 32 (expand), scaled scores plus the causal mask (torch.finfo(float32).min
above the diagonal, built from iota, greater and where), softmax, weighted values, output
projection 2048 -> 2048 without bias. A 32-token prefill chunk keeps the block under 700 MFLOP
(the projections dominate).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(2048, 2048, bias=False)
        self.k_proj = nn.Linear(2048, 512, bias=False)
        self.v_proj = nn.Linear(2048, 512, bias=False)
        self.o_proj = nn.Linear(2048, 2048, bias=False)

    def forward(self, hidden_states, cos, sin):
        q_proj = self.q_proj(hidden_states)
        q_proj_view = q_proj.view(1, 32, 32, 64)
        q_proj_states = q_proj_view.transpose(1, 2)
        k_proj = self.k_proj(hidden_states)
        k_proj_view = k_proj.view(1, 32, 8, 64)
        k_proj_states = k_proj_view.transpose(1, 2)
        v_proj = self.v_proj(hidden_states)
        v_proj_view = v_proj.view(1, 32, 8, 64)
        v_proj_states = v_proj_view.transpose(1, 2)
        cos_heads = cos.unsqueeze(1)
        sin_heads = sin.unsqueeze(1)
        q_x1 = q_proj_states[:, :, :, 0:32]
        q_x2 = q_proj_states[:, :, :, 32:64]
        q_neg_x2 = -q_x2
        q_rot = torch.cat([q_neg_x2, q_x1], 3)
        q_cos = q_proj_states * cos_heads
        q_sin = q_rot * sin_heads
        q_embed = q_cos + q_sin
        k_x1 = k_proj_states[:, :, :, 0:32]
        k_x2 = k_proj_states[:, :, :, 32:64]
        k_neg_x2 = -k_x2
        k_rot = torch.cat([k_neg_x2, k_x1], 3)
        k_cos = k_proj_states * cos_heads
        k_sin = k_rot * sin_heads
        k_embed = k_cos + k_sin
        key_unsqueeze = k_embed[:, :, None, :, :]
        key_expand = key_unsqueeze.expand(1, 8, 4, 32, 64)
        key_repeated = key_expand.reshape(1, 32, 32, 64)
        value_unsqueeze = v_proj_states[:, :, None, :, :]
        value_expand = value_unsqueeze.expand(1, 8, 4, 32, 64)
        value_repeated = value_expand.reshape(1, 32, 32, 64)
        scores = torch.matmul(q_embed, key_repeated.transpose(2, 3))
        scaling = 64 ** -0.5
        scores_scaled = scores * scaling
        row = torch.arange(32, device=hidden_states.device)[:, None]
        col = torch.arange(32, device=hidden_states.device)[None, :]
        future = col > row
        min_value = torch.finfo(torch.float32).min
        zero = 0.0
        causal_mask = torch.where(future, torch.full((), min_value, device=future.device), torch.full((), zero, device=future.device))
        scores_masked = scores_scaled + causal_mask
        attn_weights = torch.softmax(scores_masked, dim=-1)
        attn_output = torch.matmul(attn_weights, value_repeated)
        attn_t = attn_output.transpose(1, 2)
        attn_merge = attn_t.reshape(1, 32, 2048)
        o_proj = self.o_proj(attn_merge)
        return o_proj


def get_inputs():
    return [
        torch.empty(1, 32, 2048).normal_(0, 1),
        torch.empty(1, 32, 64).uniform_(-1, 1),
        torch.empty(1, 32, 64).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
