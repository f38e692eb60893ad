# The replaygate action: a small image that runs entrypoint.py, the same code path as the CLI.
#
# The base is pinned by tag; releases should pin the digest too, updated together with the tag
# (Dependabot's docker ecosystem does both): FROM python:3.12-slim-bookworm@sha256:<digest>

# --- builder: the locked dependencies and replaygate, in a venv that has no pip of its own ---
FROM python:3.12-slim-bookworm AS builder

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PIP_ROOT_USER_ACTION=ignore

# The lock file first: this layer is rebuilt only when the dependencies change.
COPY requirements.lock /build/requirements.lock
RUN python -m venv --without-pip /venv \
    && python -m pip --python /venv/bin/python install --no-cache-dir -r /build/requirements.lock

COPY pyproject.toml README.md /build/
COPY src /build/src
# --no-deps: `pip install .` reads requirements.lock too, already installed above.
RUN python -m pip --python /venv/bin/python install --no-cache-dir --no-deps /build \
    && /venv/bin/python -m compileall -q -j 0 --invalidation-mode unchecked-hash /venv/lib

# --- final: the interpreter, the venv and the entrypoint; no pip, setuptools or wheel ---
FROM python:3.12-slim-bookworm

# Byte code is compiled into the image (unchecked-hash: valid whatever the file times);
# nothing is written at run time into the image or the mounted workspace.
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PATH="/venv/bin:${PATH}"

RUN python -m pip uninstall --yes --no-cache-dir pip setuptools wheel \
    && python -m compileall -q -j 0 "$(python -c 'import sysconfig; print(sysconfig.get_path("stdlib"))')"

COPY --from=builder /venv /venv
COPY entrypoint.py /app/entrypoint.py

# No USER and no WORKDIR: the runner starts the container as root with the workspace
# mounted at /github/workspace as its working directory. Exec form: Python is PID 1 and
# gets the runner's SIGINT/SIGTERM itself (entrypoint.py handles both).
ENTRYPOINT ["python", "/app/entrypoint.py"]
