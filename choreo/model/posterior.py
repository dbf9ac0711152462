"""The posterior encoder: training-only, it infers the latent noise that explains a real dance."""

from __future__ import annotations

import torch
from torch import nn

from engines.network.config import POSE_DIM, ModelConfig

__all__ = ["PosteriorEncoder"]


class PosteriorEncoder(nn.Module):
    """Training-only: infers the latent noise that explains a ground-truth dance.

    A bidirectional GRU over the normalised pose features and music gives a
    Gaussian per frame over the i.i.d. latent; the KL term keeps it close to
    the standard normal the seed supplies at generation time.
    """

    def __init__(self, config: ModelConfig, hidden: int = 128) -> None:
        super().__init__()
        self.gru = nn.GRU(POSE_DIM + 35, hidden, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * hidden, 2 * config.latent_dim)

    def forward(self, pose: torch.Tensor, music: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean and log-variance ``[B, T, Z]`` each."""
        hidden, _ = self.gru(torch.cat([pose, music], dim=-1))
        mean, logvar = self.head(hidden).chunk(2, dim=-1)
        return mean, logvar.clamp(-8.0, 4.0)
