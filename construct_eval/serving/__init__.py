"""Serving a model on 127.0.0.1: the packaged GGUF models and their llama.cpp server
(``models``), the server's patches (``server``), and a scripted OpenAI-compatible server for
fault injection in tests and benchmarks (``scripted_server``)."""
