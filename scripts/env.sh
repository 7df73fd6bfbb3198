# Sourced by the project's scripts: points tch's build at the PyTorch wheel in the
# project's virtual environment (outside the work tree). Override the location
# with MARTIAN_ZERO_VENV.
MARTIAN_ZERO_VENV="${MARTIAN_ZERO_VENV:-$HOME/.cache/martian-zero/venv}"
export MARTIAN_ZERO_VENV
export VIRTUAL_ENV="$MARTIAN_ZERO_VENV"
export PATH="$MARTIAN_ZERO_VENV/bin:$PATH"
export LIBTORCH_USE_PYTORCH=1
# The first tch build takes minutes; keep build outputs in the work tree's target/.
