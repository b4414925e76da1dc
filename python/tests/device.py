"""What the GPU tests need to run, for each to skip saying why."""

import convgen


def why_no_gpu():
    """Why convgen cannot run on a GPU here, or None."""
    try:
        convgen.Context().close()
    except convgen.Error as e:
        return "no GPU: " + e.message
    return None
