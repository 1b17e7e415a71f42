"""PyTorch twin of the task `embedding_tinyllama_tokens`.

TinyLlama-1.1B, model.embed_tokens: torch.nn.Embedding(32000, 2048) (transformers LlamaModel
(TinyLlama/TinyLlama-1.1B-Chat-v1.0)).
Token embedding lookup of a 2048-token prompt (the model's whole context): rows of the 32000 x 2048
table (262 MB) picked by token ids; the table is drawn normal(0, 0.02) as the model initialises it.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, vocab_size, hidden_size):
        super().__init__()
        # The table of nn.Embedding(vocab_size, hidden_size), applied with F.embedding.
        self.weight = nn.Parameter(torch.empty(vocab_size, hidden_size).normal_(0.0, 0.02))

    def forward(self, input_ids):
        return F.embedding(input_ids, self.weight)


def get_inputs():
    return [
        torch.randint(0, 32000, (1, 2048)),
    ]


def get_init_inputs():
    return [32000, 2048]
