"""Test utilities: write tiny or full-size sparse checkpoints from a config (no torch needed)."""
