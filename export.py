"""Export a trained Aligner checkpoint as a transformers / sentence-transformers folder with a model card.

    python export.py --ckpt_path runs/aligner/demo/checkpoints/best.ckpt --output_dir runs/aligner/demo/model
    python export.py --ckpt_path ... --output_dir ... --push_to_hub user/kirag-aligner   # also upload

`best.ckpt` holds the weights of the best validation MRR (train.py's ModelCheckpoint);
`last.ckpt` is for resuming. LoRA adapters are merged. Pushing needs network access and a token
(`--token` or `hf auth login`). The code is in `models/export.py`.
"""

import sys

from jsonargparse import ArgumentParser

from core.cli import argument_parser, exit_code
from models.aligner import AlignerModule
from models.export import export_aligner, push_to_hub


def build_parser() -> ArgumentParser:
    parser = argument_parser(prog="export.py", description=__doc__.split("\n")[0], exit_on_error=False)
    parser.add_argument("--ckpt_path", type=str, required=True,
                        help="a checkpoint written by train.py (best.ckpt: the best validation MRR)")
    parser.add_argument("--output_dir", type=str, required=True, help="the folder to write")
    parser.add_argument("--push_to_hub", type=str | None, default=None, help="a hub repository id to upload to")
    parser.add_argument("--private", type=bool, default=True, help="create the hub repository as private")
    parser.add_argument("--token", type=str | None, default=None, help="a hub token (default: the saved login)")
    return parser


def export(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    folder = export_aligner(AlignerModule.from_checkpoint(args.ckpt_path), args.output_dir)
    print(f"exported to {folder}")
    if args.push_to_hub:
        print(f"pushed: {push_to_hub(folder, args.push_to_hub, token=args.token, private=args.private)}")


def main(argv: list[str] | None = None) -> int:
    return exit_code(lambda: export(argv))


if __name__ == "__main__":
    sys.exit(main())
