"""Benchmarks (not tests): throughput of the envs and of peers, measured side by side."""
