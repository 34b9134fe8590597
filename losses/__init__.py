"""Training losses. This package imports nothing from the rest of the project."""

from losses.cached import cached_loss
from losses.contrastive import ChainContrastiveLoss, contrastive_logits

__all__ = ["ChainContrastiveLoss", "cached_loss", "contrastive_logits"]
