"""Cross-server assembly: the near-duplicate rule and robustness augmentation."""
