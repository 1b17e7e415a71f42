"""PyTorch twin of the task `deit_tiny_112`.

DeiT-Tiny, full model: timm VisionTransformer (deit_tiny_patch16_224, img_size=112): patch_embed
(16x16 conv), cls_token, pos_embed, 12 Blocks (LayerNorm eps 1e-6, Attention with 3 heads, Mlp
192 -> 768 -> 192, GELU), norm, head on the class token (timm deit_tiny_patch16_224).
The whole DeiT-Tiny, batch 1, inference form (dropout and drop path as identities). The input is
reduced from 224x224 to 112x112 (49 patches and the class token, 50 tokens instead of 197; timm
builds it with img_size=112, the position embedding resized) so the f64 reference stays fast
(0.57 instead of 2.5 GFLOP). Class token and position embedding are drawn normal(0, 0.02). The
output is the 1000 class logits.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.cls_token = nn.Parameter(torch.empty(1, 1, 192))
        self.pos_embed = nn.Parameter(torch.empty(1, 50, 192))
        self.patch_embed_proj = nn.Conv2d(3, 192, 16, stride=16)
        self.blocks_0_norm1 = nn.LayerNorm(192, eps=1e-06)
        self.blocks_0_attn_qkv = nn.Linear(192, 576)
        self.blocks_0_attn_proj = nn.Linear(192, 192)
        self.blocks_0_norm2 = nn.LayerNorm(192, eps=1e-06)
        self.blocks_0_mlp_fc1 = nn.Linear(192, 768)
        self.blocks_0_mlp_fc2 = nn.Linear(768, 192)
        self.blocks_1_norm1 = nn.LayerNorm(192, eps=1e-06)
        self.blocks_1_attn_qkv = nn.Linear(192, 576)
        self.blocks_1_attn_proj = nn.Linear(192, 192)
        self.blocks_1_norm2 = nn.LayerNorm(192, eps=1e-06)
        self.blocks_1_mlp_fc1 = nn.Linear(192, 768)
        self.blocks_1_mlp_fc2 = nn.Linear(768, 192)
        self.blocks_2_norm1 = nn.LayerNorm(192, eps=1e-06)
        self.blocks_2_attn_qkv = nn.Linear(192, 576)
        self.blocks_2_attn_proj = nn.Linear(192, 192)
        self.blocks_2_norm2 = nn.LayerNorm(192, eps=1e-06)
        self.blocks_2_mlp_fc1 = nn.Linear(192, 768)
        self.blocks_2_mlp_fc2 = nn.Linear(768, 192)
        self.blocks_3_norm1 = nn.LayerNorm(192, eps=1e-06)
        self.blocks_3_attn_qkv = nn.Linear(192, 576)
        self.blocks_3_attn_proj = nn.Linear(192, 192)
        self.blocks_3_norm2 = nn.LayerNorm(192, eps=1e-06)
        self.blocks_3_mlp_fc1 = nn.Linear(192, 768)
        self.blocks_3_mlp_fc2 = nn.Linear(768, 192)
        self.blocks_4_norm1 = nn.LayerNorm(192, eps=1e-06)
        self.blocks_4_attn_qkv = nn.Linear(192, 576)
        self.blocks_4_attn_proj = nn.Linear(192, 192)
        self.blocks_4_norm2 = nn.LayerNorm(192, eps=1e-06)
        self.blocks_4_mlp_fc1 = nn.Linear(192, 768)
        self.blocks_4_mlp_fc2 = nn.Linear(768, 192)
        self.blocks_5_norm1 = nn.LayerNorm(192, eps=1e-06)
        self.blocks_5_attn_qkv = nn.Linear(192, 576)
        self.blocks_5_attn_proj = nn.Linear(192, 192)
        self.blocks_5_norm2 = nn.LayerNorm(192, eps=1e-06)
        self.blocks_5_mlp_fc1 = nn.Linear(192, 768)
        self.blocks_5_mlp_fc2 = nn.Linear(768, 192)
        self.blocks_6_norm1 = nn.LayerNorm(192, eps=1e-06)
        self.blocks_6_attn_qkv = nn.Linear(192, 576)
        self.blocks_6_attn_proj = nn.Linear(192, 192)
        self.blocks_6_norm2 = nn.LayerNorm(192, eps=1e-06)
        self.blocks_6_mlp_fc1 = nn.Linear(192, 768)
        self.blocks_6_mlp_fc2 = nn.Linear(768, 192)
        self.blocks_7_norm1 = nn.LayerNorm(192, eps=1e-06)
        self.blocks_7_attn_qkv = nn.Linear(192, 576)
        self.blocks_7_attn_proj = nn.Linear(192, 192)
        self.blocks_7_norm2 = nn.LayerNorm(192, eps=1e-06)
        self.blocks_7_mlp_fc1 = nn.Linear(192, 768)
        self.blocks_7_mlp_fc2 = nn.Linear(768, 192)
        self.blocks_8_norm1 = nn.LayerNorm(192, eps=1e-06)
        self.blocks_8_attn_qkv = nn.Linear(192, 576)
        self.blocks_8_attn_proj = nn.Linear(192, 192)
        self.blocks_8_norm2 = nn.LayerNorm(192, eps=1e-06)
        self.blocks_8_mlp_fc1 = nn.Linear(192, 768)
        self.blocks_8_mlp_fc2 = nn.Linear(768, 192)
        self.blocks_9_norm1 = nn.LayerNorm(192, eps=1e-06)
        self.blocks_9_attn_qkv = nn.Linear(192, 576)
        self.blocks_9_attn_proj = nn.Linear(192, 192)
        self.blocks_9_norm2 = nn.LayerNorm(192, eps=1e-06)
        self.blocks_9_mlp_fc1 = nn.Linear(192, 768)
        self.blocks_9_mlp_fc2 = nn.Linear(768, 192)
        self.blocks_10_norm1 = nn.LayerNorm(192, eps=1e-06)
        self.blocks_10_attn_qkv = nn.Linear(192, 576)
        self.blocks_10_attn_proj = nn.Linear(192, 192)
        self.blocks_10_norm2 = nn.LayerNorm(192, eps=1e-06)
        self.blocks_10_mlp_fc1 = nn.Linear(192, 768)
        self.blocks_10_mlp_fc2 = nn.Linear(768, 192)
        self.blocks_11_norm1 = nn.LayerNorm(192, eps=1e-06)
        self.blocks_11_attn_qkv = nn.Linear(192, 576)
        self.blocks_11_attn_proj = nn.Linear(192, 192)
        self.blocks_11_norm2 = nn.LayerNorm(192, eps=1e-06)
        self.blocks_11_mlp_fc1 = nn.Linear(192, 768)
        self.blocks_11_mlp_fc2 = nn.Linear(768, 192)
        self.norm = nn.LayerNorm(192, eps=1e-06)
        self.head = nn.Linear(192, 1000)

    def forward(self, x):
        x = torch.cat((self.cls_token.expand(1, -1, -1), self.patch_embed_proj(x).flatten(2).transpose(1, 2)), dim=1)
        x = x + self.pos_embed
        shortcut = x
        # blocks.0
        qkv = self.blocks_0_attn_qkv(self.blocks_0_norm1(x)).reshape(1, 50, 3, 3, 64).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q * 0.125) @ k.transpose(-2, -1)
        x = (attn.softmax(dim=-1) @ v).transpose(1, 2).reshape(1, 50, 192)
        x = shortcut + self.blocks_0_attn_proj(x)
        shortcut = x
        blocks_0_mlp_fc2 = self.blocks_0_mlp_fc2(F.gelu(self.blocks_0_mlp_fc1(self.blocks_0_norm2(x))))
        x = shortcut + blocks_0_mlp_fc2
        shortcut = x
        # blocks.1
        qkv = self.blocks_1_attn_qkv(self.blocks_1_norm1(x)).reshape(1, 50, 3, 3, 64).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q * 0.125) @ k.transpose(-2, -1)
        x = (attn.softmax(dim=-1) @ v).transpose(1, 2).reshape(1, 50, 192)
        x = shortcut + self.blocks_1_attn_proj(x)
        shortcut = x
        blocks_1_mlp_fc2 = self.blocks_1_mlp_fc2(F.gelu(self.blocks_1_mlp_fc1(self.blocks_1_norm2(x))))
        x = shortcut + blocks_1_mlp_fc2
        shortcut = x
        # blocks.2
        qkv = self.blocks_2_attn_qkv(self.blocks_2_norm1(x)).reshape(1, 50, 3, 3, 64).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q * 0.125) @ k.transpose(-2, -1)
        x = (attn.softmax(dim=-1) @ v).transpose(1, 2).reshape(1, 50, 192)
        x = shortcut + self.blocks_2_attn_proj(x)
        shortcut = x
        blocks_2_mlp_fc2 = self.blocks_2_mlp_fc2(F.gelu(self.blocks_2_mlp_fc1(self.blocks_2_norm2(x))))
        x = shortcut + blocks_2_mlp_fc2
        shortcut = x
        # blocks.3
        qkv = self.blocks_3_attn_qkv(self.blocks_3_norm1(x)).reshape(1, 50, 3, 3, 64).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q * 0.125) @ k.transpose(-2, -1)
        x = (attn.softmax(dim=-1) @ v).transpose(1, 2).reshape(1, 50, 192)
        x = shortcut + self.blocks_3_attn_proj(x)
        shortcut = x
        blocks_3_mlp_fc2 = self.blocks_3_mlp_fc2(F.gelu(self.blocks_3_mlp_fc1(self.blocks_3_norm2(x))))
        x = shortcut + blocks_3_mlp_fc2
        shortcut = x
        # blocks.4
        qkv = self.blocks_4_attn_qkv(self.blocks_4_norm1(x)).reshape(1, 50, 3, 3, 64).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q * 0.125) @ k.transpose(-2, -1)
        x = (attn.softmax(dim=-1) @ v).transpose(1, 2).reshape(1, 50, 192)
        x = shortcut + self.blocks_4_attn_proj(x)
        shortcut = x
        blocks_4_mlp_fc2 = self.blocks_4_mlp_fc2(F.gelu(self.blocks_4_mlp_fc1(self.blocks_4_norm2(x))))
        x = shortcut + blocks_4_mlp_fc2
        shortcut = x
        # blocks.5
        qkv = self.blocks_5_attn_qkv(self.blocks_5_norm1(x)).reshape(1, 50, 3, 3, 64).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q * 0.125) @ k.transpose(-2, -1)
        x = (attn.softmax(dim=-1) @ v).transpose(1, 2).reshape(1, 50, 192)
        x = shortcut + self.blocks_5_attn_proj(x)
        shortcut = x
        blocks_5_mlp_fc2 = self.blocks_5_mlp_fc2(F.gelu(self.blocks_5_mlp_fc1(self.blocks_5_norm2(x))))
        x = shortcut + blocks_5_mlp_fc2
        shortcut = x
        # blocks.6
        qkv = self.blocks_6_attn_qkv(self.blocks_6_norm1(x)).reshape(1, 50, 3, 3, 64).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q * 0.125) @ k.transpose(-2, -1)
        x = (attn.softmax(dim=-1) @ v).transpose(1, 2).reshape(1, 50, 192)
        x = shortcut + self.blocks_6_attn_proj(x)
        shortcut = x
        blocks_6_mlp_fc2 = self.blocks_6_mlp_fc2(F.gelu(self.blocks_6_mlp_fc1(self.blocks_6_norm2(x))))
        x = shortcut + blocks_6_mlp_fc2
        shortcut = x
        # blocks.7
        qkv = self.blocks_7_attn_qkv(self.blocks_7_norm1(x)).reshape(1, 50, 3, 3, 64).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q * 0.125) @ k.transpose(-2, -1)
        x = (attn.softmax(dim=-1) @ v).transpose(1, 2).reshape(1, 50, 192)
        x = shortcut + self.blocks_7_attn_proj(x)
        shortcut = x
        blocks_7_mlp_fc2 = self.blocks_7_mlp_fc2(F.gelu(self.blocks_7_mlp_fc1(self.blocks_7_norm2(x))))
        x = shortcut + blocks_7_mlp_fc2
        shortcut = x
        # blocks.8
        qkv = self.blocks_8_attn_qkv(self.blocks_8_norm1(x)).reshape(1, 50, 3, 3, 64).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q * 0.125) @ k.transpose(-2, -1)
        x = (attn.softmax(dim=-1) @ v).transpose(1, 2).reshape(1, 50, 192)
        x = shortcut + self.blocks_8_attn_proj(x)
        shortcut = x
        blocks_8_mlp_fc2 = self.blocks_8_mlp_fc2(F.gelu(self.blocks_8_mlp_fc1(self.blocks_8_norm2(x))))
        x = shortcut + blocks_8_mlp_fc2
        shortcut = x
        # blocks.9
        qkv = self.blocks_9_attn_qkv(self.blocks_9_norm1(x)).reshape(1, 50, 3, 3, 64).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q * 0.125) @ k.transpose(-2, -1)
        x = (attn.softmax(dim=-1) @ v).transpose(1, 2).reshape(1, 50, 192)
        x = shortcut + self.blocks_9_attn_proj(x)
        shortcut = x
        blocks_9_mlp_fc2 = self.blocks_9_mlp_fc2(F.gelu(self.blocks_9_mlp_fc1(self.blocks_9_norm2(x))))
        x = shortcut + blocks_9_mlp_fc2
        shortcut = x
        # blocks.10
        qkv = self.blocks_10_attn_qkv(self.blocks_10_norm1(x)).reshape(1, 50, 3, 3, 64).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q * 0.125) @ k.transpose(-2, -1)
        x = (attn.softmax(dim=-1) @ v).transpose(1, 2).reshape(1, 50, 192)
        x = shortcut + self.blocks_10_attn_proj(x)
        shortcut = x
        blocks_10_mlp_fc2 = self.blocks_10_mlp_fc2(F.gelu(self.blocks_10_mlp_fc1(self.blocks_10_norm2(x))))
        x = shortcut + blocks_10_mlp_fc2
        shortcut = x
        # blocks.11
        qkv = self.blocks_11_attn_qkv(self.blocks_11_norm1(x)).reshape(1, 50, 3, 3, 64).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q * 0.125) @ k.transpose(-2, -1)
        x = (attn.softmax(dim=-1) @ v).transpose(1, 2).reshape(1, 50, 192)
        x = shortcut + self.blocks_11_attn_proj(x)
        shortcut = x
        blocks_11_mlp_fc2 = self.blocks_11_mlp_fc2(F.gelu(self.blocks_11_mlp_fc1(self.blocks_11_norm2(x))))
        x = shortcut + blocks_11_mlp_fc2
        x = self.norm(x)
        head = self.head(x[:, 0])
        return head


def get_inputs():
    return [
        torch.empty(1, 3, 112, 112).uniform_(-1.0, 1.0),
    ]


def get_init_inputs():
    return []
