"""torch.nn of the stand-in torch (test/python/fake_torch)."""
