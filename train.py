"""Train with LightningCLI: KiRAG's Aligner, or MIND's trigger calibrator.

    python train.py fit --config configs/aligner/demo.yaml
    python train.py fit --config configs/aligner/demo.yaml --ckpt_path last   # resume
    python train.py fit --config configs/trigger/demo.yaml

A config names its LightningModule and LightningDataModule (`model.class_path`, `data.class_path`);
every init argument (`--model.*`, `--data.*`) and the Trainer (`--trainer.*`, callbacks and logger
included) is set in the YAML or on the command line.
"""

import sys

from core.cli import exit_code
from models.training_cli import lightning_cli

if __name__ == "__main__":
    sys.exit(exit_code(lightning_cli, sigterm=False))
