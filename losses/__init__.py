"""Training losses. This package imports nothing from the rest of the project."""

from losses.contrastive import ChainContrastiveLoss, contrastive_logits

__all__ = ["ChainContrastiveLoss", "contrastive_logits"]
