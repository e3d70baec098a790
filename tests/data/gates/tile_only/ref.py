"""Reference for tests/data/gates/tile_only: y = 2 x over n float32 elements (numpy or torch)."""

shapes = {"x": ("n",), "y": ("n",)}


def reference(*, x, y, n):
    y[:] = 2 * x


def workload_model(*, n, **_):
    return {"flops": n, "bytes_read_min": 4 * n, "bytes_written_min": 4 * n, "dtype": "float32"}
