"""PyTorch twin of the task `bert_embeddings_minilm_l6`.

all-MiniLM-L6-v2, embeddings: transformers BertEmbeddings (word, position, token type;
LayerNorm(384, eps=1e-12)) (transformers BertModel (sentence-transformers/all-MiniLM-L6-v2)).
The input embedding of a 128-token sentence: word embedding lookup of the token ids (30522 x 384
table), plus the token-type embedding of type 0 and the position embeddings of positions 0..127,
then LayerNorm. Tables drawn normal(0, 0.02) as BERT initialises them.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.word_embeddings_weight = nn.Parameter(torch.randn(30522, 384) * 0.02)
        self.position_embeddings_weight = nn.Parameter(torch.randn(512, 384) * 0.02)
        self.token_type_embeddings_weight = nn.Parameter(torch.randn(2, 384) * 0.02)
        self.LayerNorm = nn.LayerNorm(384, eps=1e-12)

    def forward(self, input_ids):
        seq_length = input_ids.shape[1]
        position_ids = torch.arange(seq_length, device=input_ids.device)[None, :]
        token_type_ids = torch.zeros_like(input_ids)  # the buffered all-zero token types
        inputs_embeds = F.embedding(input_ids, self.word_embeddings_weight)
        token_type_embeddings = F.embedding(token_type_ids, self.token_type_embeddings_weight)
        embeddings = inputs_embeds + token_type_embeddings
        embeddings = embeddings + F.embedding(position_ids, self.position_embeddings_weight)
        return self.LayerNorm(embeddings)


def get_inputs():
    return [
        torch.randint(0, 30522, (1, 128,)),
    ]


def get_init_inputs():
    return []
