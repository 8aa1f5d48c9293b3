"""The `whisperkv` command line."""
