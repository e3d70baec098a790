"""Reference for sanitize/oob_global_write: y = 2 x. numpy only."""
shapes = {"x": ("n",), "y": ("n",)}


def reference(*, x, y, n):
    y[:] = 2 * x
