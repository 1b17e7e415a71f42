"""PyTorch twin of the task `decoupled_head_yolox_nano_p3`.

YOLOX-Nano, head (stride-8 level): YOLOXHead(80, width=0.25, depthwise=True): stems[0],
cls_convs[0], reg_convs[0], cls_preds[0], reg_preds[0], obj_preds[0] (Megvii-BaseDetection/YOLOX
yolox/models/yolo_head.py).
The decoupled head of YOLOX-Nano at stride 8 on a 320x320 image (64 channels at 40x40): a 1x1
stem, two depthwise-separable convolutions for classification and two for regression (each: 3x3
depthwise and 1x1 pointwise, batch norm with eps 1e-3, SiLU), the class (80), box (4) and
objectness (1) predictions, and the inference output cat([reg, sigmoid(obj), sigmoid(cls)]).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.SiLU(inplace=True)
        self.stem_conv = nn.Conv2d(64, 64, 1, bias=False)
        self.stem_bn = nn.BatchNorm2d(64, eps=0.001, momentum=0.03)
        self.cls0_dconv_conv = nn.Conv2d(64, 64, 3, padding=1, groups=64, bias=False)
        self.cls0_dconv_bn = nn.BatchNorm2d(64, eps=0.001, momentum=0.03)
        self.cls0_pconv_conv = nn.Conv2d(64, 64, 1, bias=False)
        self.cls0_pconv_bn = nn.BatchNorm2d(64, eps=0.001, momentum=0.03)
        self.cls1_dconv_conv = nn.Conv2d(64, 64, 3, padding=1, groups=64, bias=False)
        self.cls1_dconv_bn = nn.BatchNorm2d(64, eps=0.001, momentum=0.03)
        self.cls1_pconv_conv = nn.Conv2d(64, 64, 1, bias=False)
        self.cls1_pconv_bn = nn.BatchNorm2d(64, eps=0.001, momentum=0.03)
        self.reg0_dconv_conv = nn.Conv2d(64, 64, 3, padding=1, groups=64, bias=False)
        self.reg0_dconv_bn = nn.BatchNorm2d(64, eps=0.001, momentum=0.03)
        self.reg0_pconv_conv = nn.Conv2d(64, 64, 1, bias=False)
        self.reg0_pconv_bn = nn.BatchNorm2d(64, eps=0.001, momentum=0.03)
        self.reg1_dconv_conv = nn.Conv2d(64, 64, 3, padding=1, groups=64, bias=False)
        self.reg1_dconv_bn = nn.BatchNorm2d(64, eps=0.001, momentum=0.03)
        self.reg1_pconv_conv = nn.Conv2d(64, 64, 1, bias=False)
        self.reg1_pconv_bn = nn.BatchNorm2d(64, eps=0.001, momentum=0.03)
        self.cls_pred = nn.Conv2d(64, 80, 1)
        self.reg_pred = nn.Conv2d(64, 4, 1)
        self.obj_pred = nn.Conv2d(64, 1, 1)

    def forward(self, x):
        def base_conv(name, v):
            return self.act(getattr(self, name + "_bn")(getattr(self, name + "_conv")(v)))

        x = base_conv("stem", x)
        cls_feat = x
        for i in range(2):
            cls_feat = base_conv(f"cls{i}_pconv", base_conv(f"cls{i}_dconv", cls_feat))
        reg_feat = x
        for i in range(2):
            reg_feat = base_conv(f"reg{i}_pconv", base_conv(f"reg{i}_dconv", reg_feat))
        cls_output = self.cls_pred(cls_feat)
        reg_output = self.reg_pred(reg_feat)
        obj_output = self.obj_pred(reg_feat)
        return torch.cat([reg_output, obj_output.sigmoid(), cls_output.sigmoid()], 1)


def get_inputs():
    return [
        torch.empty(1, 64, 40, 40).uniform_(-0.25, 3),
    ]


def get_init_inputs():
    return []
