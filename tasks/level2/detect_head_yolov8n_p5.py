"""PyTorch twin of the task `detect_head_yolov8n_p5`.

YOLOv8n, model.22 (Detect), stride-32 level: Detect: cv2[2] (Conv(256, 64, 3), Conv(64, 64, 3),
Conv2d(64, 64, 1)) and cv3[2] (Conv(256, 80, 3), Conv(80, 80, 3), Conv2d(80, 80, 1)),
concatenated (ultralytics/ultralytics ultralytics/nn/modules/head.py).
The stride-32 level of the YOLOv8n detection head on a 320x320 image (256 channels at 10x10):
the box branch (two 3x3 CBS to 64 channels, 1x1 convolution to 4 x 16 distribution bins) and the
class branch (two 3x3 CBS to 80 channels, 1x1 convolution to 80 classes), concatenated to 144
channels.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.SiLU(inplace=True)
        self.cv2_0_conv = nn.Conv2d(256, 64, 3, padding=1, bias=False)
        self.cv2_0_bn = nn.BatchNorm2d(64, eps=0.001, momentum=0.03)
        self.cv2_1_conv = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.cv2_1_bn = nn.BatchNorm2d(64, eps=0.001, momentum=0.03)
        self.cv2_2 = nn.Conv2d(64, 64, 1)
        self.cv3_0_conv = nn.Conv2d(256, 80, 3, padding=1, bias=False)
        self.cv3_0_bn = nn.BatchNorm2d(80, eps=0.001, momentum=0.03)
        self.cv3_1_conv = nn.Conv2d(80, 80, 3, padding=1, bias=False)
        self.cv3_1_bn = nn.BatchNorm2d(80, eps=0.001, momentum=0.03)
        self.cv3_2 = nn.Conv2d(80, 80, 1)

    def forward(self, x):
        box = self.act(self.cv2_1_bn(self.cv2_1_conv(self.act(self.cv2_0_bn(self.cv2_0_conv(x))))))
        box = self.cv2_2(box)
        cls = self.act(self.cv3_1_bn(self.cv3_1_conv(self.act(self.cv3_0_bn(self.cv3_0_conv(x))))))
        cls = self.cv3_2(cls)
        return torch.cat((box, cls), 1)


def get_inputs():
    return [
        torch.empty(1, 256, 10, 10).uniform_(-0.25, 3),
    ]


def get_init_inputs():
    return []
