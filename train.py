"""Train KiRAG's Aligner with LightningCLI.

    python train.py fit --config configs/aligner/demo.yaml
    python train.py fit --config configs/aligner/demo.yaml --ckpt_path last   # resume

Every init argument of `AlignerModule` (`--model.*`), `AlignerDataModule` (`--data.*`) and the
Trainer (`--trainer.*`, callbacks and logger included) is set in the YAML or on the command line.
"""

from lightning.pytorch.cli import LightningCLI

from datamodules.aligner_datamodule import AlignerDataModule
from models.aligner import AlignerModule


def cli_main(args: list[str] | None = None) -> LightningCLI:
    return LightningCLI(AlignerModule, AlignerDataModule, save_config_kwargs={"overwrite": True}, args=args)


if __name__ == "__main__":
    cli_main()
