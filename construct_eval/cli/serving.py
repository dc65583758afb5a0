"""Commands for the embedded model server: ``serve`` (run it on 127.0.0.1 until stopped) and
``models`` (the packaged models; ``--assemble`` builds one). The server itself is
:mod:`construct_eval.serving.models`."""

from __future__ import annotations

import argparse
import signal
import sys

from construct_eval.serving.models import MODELS, LocalServer, assemble, model_lines


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
