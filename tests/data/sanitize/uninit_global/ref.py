"""Reference for sanitize/uninit_global: y = x. numpy only."""
shapes = {"x": ("n",), "y": ("n",)}


def reference(*, x, y, n):
    y[:] = x
