"""Test-wide settings.

The store's model multiplies small matrices; on a 2-core machine several BLAS threads fight over the cores and
a forward pass measured up to 9x slower than with one. Set before NumPy is first imported.
"""

import os

for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, "1")
