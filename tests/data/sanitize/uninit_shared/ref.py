"""Reference for sanitize/uninit_shared: every element gets the sum of its 256-wide tile (slots past n count as 0).
numpy only."""
import numpy as np

TILE = 256
shapes = {"x": ("n",), "y": ("n",)}


def reference(*, x, y, n):
    tiles = -(-n // TILE)
    padded = np.zeros(tiles * TILE, dtype=np.float64)
    padded[:n] = x
    sums = padded.reshape(tiles, TILE).sum(axis=1).astype(np.float32)
    y[:] = np.repeat(sums, TILE)[:n]
