"""Reference for sanitize/clean and sanitize/race_shared: y[i] = x[i] + x[j], j the next element of i's 256-wide
tile (wrapping inside the tile); slots past n count as 0. numpy only."""
import numpy as np

TILE = 256
shapes = {"x": ("n",), "y": ("n",)}


def reference(*, x, y, n):
    tiles = -(-n // TILE)
    padded = np.zeros(tiles * TILE, dtype=np.float32)
    padded[:n] = x
    blocks = padded.reshape(tiles, TILE)
    y[:] = (blocks + np.roll(blocks, -1, axis=1)).reshape(-1)[:n]
