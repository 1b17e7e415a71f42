"""PyTorch twin of the task `autoencoder_toyadmos`.

Deep autoencoder (MLPerf Tiny anomaly detection), full model: get_model(640): 4x (Dense(128),
BatchNormalization, ReLU), Dense(8) bottleneck, 4x (Dense(128), BatchNormalization, ReLU),
Dense(640) (mlcommons/tiny benchmark/training/anomaly_detection keras_model.py).
The MLPerf Tiny anomaly-detection autoencoder (ToyADMOS machine sounds) in inference form,
batched as the application scores a clip: 309 vectors of 5 stacked 128-band log-mel frames (640
values each; a 10 s clip at 16 kHz, hop 512, gives 313 frames and 309 windows), inputs
standardised to normal(0, 1); batch norm eps 1e-3. The output is the reconstruction, whose mean
squared error is the anomaly score.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.dense_0 = nn.Linear(640, 128)
        self.bn_0 = nn.BatchNorm1d(128, eps=0.001)
        self.dense_1 = nn.Linear(128, 128)
        self.bn_1 = nn.BatchNorm1d(128, eps=0.001)
        self.dense_2 = nn.Linear(128, 128)
        self.bn_2 = nn.BatchNorm1d(128, eps=0.001)
        self.dense_3 = nn.Linear(128, 128)
        self.bn_3 = nn.BatchNorm1d(128, eps=0.001)
        self.dense_4 = nn.Linear(128, 8)
        self.bn_4 = nn.BatchNorm1d(8, eps=0.001)
        self.dense_5 = nn.Linear(8, 128)
        self.bn_5 = nn.BatchNorm1d(128, eps=0.001)
        self.dense_6 = nn.Linear(128, 128)
        self.bn_6 = nn.BatchNorm1d(128, eps=0.001)
        self.dense_7 = nn.Linear(128, 128)
        self.bn_7 = nn.BatchNorm1d(128, eps=0.001)
        self.dense_8 = nn.Linear(128, 128)
        self.bn_8 = nn.BatchNorm1d(128, eps=0.001)
        self.dense_9 = nn.Linear(128, 640)

    def forward(self, x):
        relu_0 = F.relu(self.bn_0(self.dense_0(x)))
        relu_1 = F.relu(self.bn_1(self.dense_1(relu_0)))
        relu_2 = F.relu(self.bn_2(self.dense_2(relu_1)))
        relu_3 = F.relu(self.bn_3(self.dense_3(relu_2)))
        relu_4 = F.relu(self.bn_4(self.dense_4(relu_3)))
        relu_5 = F.relu(self.bn_5(self.dense_5(relu_4)))
        relu_6 = F.relu(self.bn_6(self.dense_6(relu_5)))
        relu_7 = F.relu(self.bn_7(self.dense_7(relu_6)))
        relu_8 = F.relu(self.bn_8(self.dense_8(relu_7)))
        dense_9 = self.dense_9(relu_8)
        return dense_9


def get_inputs():
    return [
        torch.empty(309, 640).normal_(0.0, 1.0),
    ]


def get_init_inputs():
    return []
