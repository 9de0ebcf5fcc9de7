"""Triton kernels with their torch references, guards and benchmarks (installed as recipecli.kernels).

Importing this package imports nothing heavy; each module imports torch/triton itself.
"""
