"""PyTorch twin of the task `log_softmax_ctc_wenet_conformer`.

WeNet Conformer (AISHELL-1, 4233 units), ctc.log_softmax (F.log_softmax(self.ctc_lo(hs_pad),
dim=2)): torch.nn.functional.log_softmax (wenet-e2e/wenet wenet/transformer/ctc.py).
CTC log-probabilities over the 4233 output units for 250 encoder frames (10 s of speech after 4x
subsampling); logits drawn normal(0, 3).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, logits):
        return F.log_softmax(logits, dim=2)


def get_inputs():
    return [
        torch.empty(1, 250, 4233).normal_(0.0, 3.0),
    ]


def get_init_inputs():
    return []
