"""Dataset loaders: the paper's public benchmark (Cleanlab) and the project's own data."""
