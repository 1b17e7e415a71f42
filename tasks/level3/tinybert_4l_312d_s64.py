"""PyTorch twin of the task `tinybert_4l_312d_s64`.

TinyBERT-4L-312D, full model: transformers BertModel (4 layers, hidden 312, 12 heads of 26,
intermediate 1200, GELU, LayerNorm eps 1e-12): embeddings (word, position, token type), encoder,
pooler (transformers BertModel (huawei-noah/TinyBERT_General_4L_312D)).
The whole TinyBERT (general distillation, 4 layers, 312 wide) on a 64-token sentence pair, batch
1, eager attention, no padding (an all-ones attention mask adds nothing), dropout as identity:
token, position (iota) and token-type embeddings by gather, four post-norm encoder layers, and
the tanh pooler on the first token. Embedding tables are drawn normal(0, 0.02) as BERT
initialises them. Outputs: the last hidden states and the pooled output.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embeddings_word_embeddings_weight = nn.Parameter(torch.empty(30522, 312))
        self.embeddings_position_embeddings_weight = nn.Parameter(torch.empty(512, 312))
        self.embeddings_token_type_embeddings_weight = nn.Parameter(torch.empty(2, 312))
        self.embeddings_LayerNorm = nn.LayerNorm(312, eps=1e-12)
        self.encoder_layer_0_attention_self_query = nn.Linear(312, 312)
        self.encoder_layer_0_attention_self_key = nn.Linear(312, 312)
        self.encoder_layer_0_attention_self_value = nn.Linear(312, 312)
        self.encoder_layer_0_attention_output_dense = nn.Linear(312, 312)
        self.encoder_layer_0_attention_output_LayerNorm = nn.LayerNorm(312, eps=1e-12)
        self.encoder_layer_0_intermediate_dense = nn.Linear(312, 1200)
        self.encoder_layer_0_output_dense = nn.Linear(1200, 312)
        self.encoder_layer_0_output_LayerNorm = nn.LayerNorm(312, eps=1e-12)
        self.encoder_layer_1_attention_self_query = nn.Linear(312, 312)
        self.encoder_layer_1_attention_self_key = nn.Linear(312, 312)
        self.encoder_layer_1_attention_self_value = nn.Linear(312, 312)
        self.encoder_layer_1_attention_output_dense = nn.Linear(312, 312)
        self.encoder_layer_1_attention_output_LayerNorm = nn.LayerNorm(312, eps=1e-12)
        self.encoder_layer_1_intermediate_dense = nn.Linear(312, 1200)
        self.encoder_layer_1_output_dense = nn.Linear(1200, 312)
        self.encoder_layer_1_output_LayerNorm = nn.LayerNorm(312, eps=1e-12)
        self.encoder_layer_2_attention_self_query = nn.Linear(312, 312)
        self.encoder_layer_2_attention_self_key = nn.Linear(312, 312)
        self.encoder_layer_2_attention_self_value = nn.Linear(312, 312)
        self.encoder_layer_2_attention_output_dense = nn.Linear(312, 312)
        self.encoder_layer_2_attention_output_LayerNorm = nn.LayerNorm(312, eps=1e-12)
        self.encoder_layer_2_intermediate_dense = nn.Linear(312, 1200)
        self.encoder_layer_2_output_dense = nn.Linear(1200, 312)
        self.encoder_layer_2_output_LayerNorm = nn.LayerNorm(312, eps=1e-12)
        self.encoder_layer_3_attention_self_query = nn.Linear(312, 312)
        self.encoder_layer_3_attention_self_key = nn.Linear(312, 312)
        self.encoder_layer_3_attention_self_value = nn.Linear(312, 312)
        self.encoder_layer_3_attention_output_dense = nn.Linear(312, 312)
        self.encoder_layer_3_attention_output_LayerNorm = nn.LayerNorm(312, eps=1e-12)
        self.encoder_layer_3_intermediate_dense = nn.Linear(312, 1200)
        self.encoder_layer_3_output_dense = nn.Linear(1200, 312)
        self.encoder_layer_3_output_LayerNorm = nn.LayerNorm(312, eps=1e-12)
        self.pooler_dense = nn.Linear(312, 312)

    def forward(self, input_ids, token_type_ids):
        position_ids = torch.arange(64, device=input_ids.device)[None, :]
        embeddings = F.embedding(input_ids, self.embeddings_word_embeddings_weight) + F.embedding(token_type_ids, self.embeddings_token_type_embeddings_weight)
        embeddings = embeddings + F.embedding(position_ids, self.embeddings_position_embeddings_weight)
        hidden_states = self.embeddings_LayerNorm(embeddings)
        # encoder.layer.0
        query = self.encoder_layer_0_attention_self_query(hidden_states).view(1, 64, 12, 26).transpose(1, 2)
        key = self.encoder_layer_0_attention_self_key(hidden_states).view(1, 64, 12, 26).transpose(1, 2)
        value = self.encoder_layer_0_attention_self_value(hidden_states).view(1, 64, 12, 26).transpose(1, 2)
        scores = torch.matmul(query, key.transpose(-1, -2)) * 0.19611613513818404
        context = torch.matmul(F.softmax(scores, dim=-1), value).transpose(1, 2).reshape(1, 64, 312)
        attention_output = self.encoder_layer_0_attention_output_dense(context) + hidden_states
        attention_output = self.encoder_layer_0_attention_output_LayerNorm(attention_output)
        encoder_layer_0_output_dense = self.encoder_layer_0_output_dense(F.gelu(self.encoder_layer_0_intermediate_dense(attention_output)))
        hidden_states = encoder_layer_0_output_dense + attention_output
        hidden_states = self.encoder_layer_0_output_LayerNorm(hidden_states)
        # encoder.layer.1
        query = self.encoder_layer_1_attention_self_query(hidden_states).view(1, 64, 12, 26).transpose(1, 2)
        key = self.encoder_layer_1_attention_self_key(hidden_states).view(1, 64, 12, 26).transpose(1, 2)
        value = self.encoder_layer_1_attention_self_value(hidden_states).view(1, 64, 12, 26).transpose(1, 2)
        scores = torch.matmul(query, key.transpose(-1, -2)) * 0.19611613513818404
        context = torch.matmul(F.softmax(scores, dim=-1), value).transpose(1, 2).reshape(1, 64, 312)
        attention_output = self.encoder_layer_1_attention_output_dense(context) + hidden_states
        attention_output = self.encoder_layer_1_attention_output_LayerNorm(attention_output)
        encoder_layer_1_output_dense = self.encoder_layer_1_output_dense(F.gelu(self.encoder_layer_1_intermediate_dense(attention_output)))
        hidden_states = encoder_layer_1_output_dense + attention_output
        hidden_states = self.encoder_layer_1_output_LayerNorm(hidden_states)
        # encoder.layer.2
        query = self.encoder_layer_2_attention_self_query(hidden_states).view(1, 64, 12, 26).transpose(1, 2)
        key = self.encoder_layer_2_attention_self_key(hidden_states).view(1, 64, 12, 26).transpose(1, 2)
        value = self.encoder_layer_2_attention_self_value(hidden_states).view(1, 64, 12, 26).transpose(1, 2)
        scores = torch.matmul(query, key.transpose(-1, -2)) * 0.19611613513818404
        context = torch.matmul(F.softmax(scores, dim=-1), value).transpose(1, 2).reshape(1, 64, 312)
        attention_output = self.encoder_layer_2_attention_output_dense(context) + hidden_states
        attention_output = self.encoder_layer_2_attention_output_LayerNorm(attention_output)
        encoder_layer_2_output_dense = self.encoder_layer_2_output_dense(F.gelu(self.encoder_layer_2_intermediate_dense(attention_output)))
        hidden_states = encoder_layer_2_output_dense + attention_output
        hidden_states = self.encoder_layer_2_output_LayerNorm(hidden_states)
        # encoder.layer.3
        query = self.encoder_layer_3_attention_self_query(hidden_states).view(1, 64, 12, 26).transpose(1, 2)
        key = self.encoder_layer_3_attention_self_key(hidden_states).view(1, 64, 12, 26).transpose(1, 2)
        value = self.encoder_layer_3_attention_self_value(hidden_states).view(1, 64, 12, 26).transpose(1, 2)
        scores = torch.matmul(query, key.transpose(-1, -2)) * 0.19611613513818404
        context = torch.matmul(F.softmax(scores, dim=-1), value).transpose(1, 2).reshape(1, 64, 312)
        attention_output = self.encoder_layer_3_attention_output_dense(context) + hidden_states
        attention_output = self.encoder_layer_3_attention_output_LayerNorm(attention_output)
        encoder_layer_3_output_dense = self.encoder_layer_3_output_dense(F.gelu(self.encoder_layer_3_intermediate_dense(attention_output)))
        hidden_states = encoder_layer_3_output_dense + attention_output
        hidden_states = self.encoder_layer_3_output_LayerNorm(hidden_states)
        pooler_output = torch.tanh(self.pooler_dense(hidden_states[:, 0]))
        return hidden_states, pooler_output


def get_inputs():
    return [
        torch.randint(0, 30522, (1, 64,)),
        torch.randint(0, 2, (1, 64,)),
    ]


def get_init_inputs():
    return []
