"""PyTorch twin of the task `cumsum_exclusive_transmittance_nerfacto`.

nerfacto (nerfstudio), RaySamples.get_weights (transmittance): torch.cumsum(delta_density[..., :-1,
:], dim=-2) + torch.cat with zeros (nerfstudio-project/nerfstudio nerfstudio/cameras/rays.py).
The optical depth in front of each sample for volume rendering, an exclusive running sum of density
x step length along each ray: 32768 rays (nerfacto's evaluation chunk) x the 96 samples of the
second proposal round; delta_density drawn uniform in [0, 0.5).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, delta_density):
        transmittance = torch.cumsum(delta_density[..., :-1, :], dim=-2)
        transmittance = torch.cat(
            [
                torch.zeros(
                    (*transmittance.shape[:1], 1, 1), dtype=transmittance.dtype, device=delta_density.device
                ),
                transmittance,
            ],
            dim=-2,
        )
        return transmittance


def get_inputs():
    return [
        torch.empty(32768, 96, 1).uniform_(0, 0.5),
    ]


def get_init_inputs():
    return []
