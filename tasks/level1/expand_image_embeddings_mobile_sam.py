"""PyTorch twin of the task `expand_image_embeddings_mobile_sam`.

MobileSAM, mask_decoder.predict_masks (torch.repeat_interleave(image_embeddings, tokens.shape[0],
dim=0)): torch.repeat_interleave (ChaoningZhang/MobileSAM mobile_sam/modeling/mask_decoder.py).
Copying the 256 x 64 x 64 image embedding once per prompt for 4 box prompts decoded together
(repeat_interleave of a batch-1 tensor along the batch axis, an expand).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_prompts):
        super().__init__()
        self.num_prompts = num_prompts

    def forward(self, image_embeddings):
        return torch.repeat_interleave(image_embeddings, self.num_prompts, dim=0)


def get_inputs():
    return [
        torch.empty(1, 256, 64, 64).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [4]
