"""PyTorch twin of the task `normalize_rgb_detection_input`.

torchvision detection models, transform (normalize: (image - mean[:, None, None]) / std[:, None,
None]): GeneralizedRCNNTransform.normalize (torchvision.models.detection.transform).
Per-channel mean/std normalisation of a 640x480 RGB camera frame in [0, 1], before resizing
(Faster R-CNN MobileNetV3-Large 320 FPN, SSDlite); mean and std are per-channel buffers.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1))
        self.register_buffer("std", torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1))

    def forward(self, image):
        return (image - self.mean) / self.std


def get_inputs():
    return [
        torch.empty(3, 480, 640).uniform_(0, 1),
    ]


def get_init_inputs():
    return []
