"""Encoders and language models, and (later) the LightningModules that train them."""
