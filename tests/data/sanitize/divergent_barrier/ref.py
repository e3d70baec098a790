"""Reference for sanitize/divergent_barrier: y = 3 x. numpy only."""
shapes = {"x": ("n",), "y": ("n",)}


def reference(*, x, y, n):
    y[:] = 3 * x
