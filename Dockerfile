# The replaygate action: a small image that runs entrypoint.py, the same code path as the CLI.
#
# Both stages start from the same base, pinned by digest (python 3.12.14, bookworm, the
# multi-platform index of 2026-08-25): a rebuild gets the bytes that were tested. Dependabot's
# docker ecosystem (.github/dependabot.yml) proposes the next digest for both lines at once.

# --- builder: the locked dependencies and replaygate, in a venv that has no pip of its own ---
FROM python:3.12-slim-bookworm@sha256:0f5b26b9518d002b6173fd61daad821fa340635ebfec5bba471013f9ca114579 AS builder

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PIP_ROOT_USER_ACTION=ignore

# The lock file first: this layer is rebuilt only when the dependencies change.
COPY requirements.lock /build/requirements.lock
# The dependencies' own test suites (about 1.3 MB) are never imported: they stay out.
RUN python -m venv --without-pip /venv \
    && python -m pip --python /venv/bin/python install --no-cache-dir -r /build/requirements.lock \
    && find /venv/lib/python3.12/site-packages -mindepth 2 -maxdepth 2 -type d -name tests \
        -exec rm -rf {} +

COPY pyproject.toml README.md /build/
COPY src /build/src
# --no-deps: the locked versions above, not whatever pyproject.toml's ranges would pick.
RUN python -m pip --python /venv/bin/python install --no-cache-dir --no-deps /build \
    && /venv/bin/python -m compileall -q -j 0 --invalidation-mode unchecked-hash /venv/lib

# --- final: the interpreter, the venv and the entrypoint; no pip, setuptools or wheel ---
FROM python:3.12-slim-bookworm@sha256:0f5b26b9518d002b6173fd61daad821fa340635ebfec5bba471013f9ca114579

# Byte code is compiled into the image (unchecked-hash: valid whatever the file times);
# nothing is written at run time into the image or the mounted workspace.
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PATH="/venv/bin:${PATH}"

# The standard library is compiled except what a run never imports (the GUI, the IDE, 2to3,
# help()'s topics: 2.7 MB of byte code).
RUN python -m pip uninstall --yes --no-cache-dir pip setuptools wheel \
    && python -m compileall -q -j 0 -x '/(idlelib|tkinter|turtledemo|lib2to3|pydoc_data|ensurepip)/' \
        "$(python -c 'import sysconfig; print(sysconfig.get_path("stdlib"))')"

COPY --from=builder /venv /venv
COPY entrypoint.py /app/entrypoint.py

# No USER and no WORKDIR: the runner starts the container as root with the workspace
# mounted at /github/workspace as its working directory. Exec form: Python is PID 1 and
# gets the runner's SIGINT/SIGTERM itself (entrypoint.py handles both).
ENTRYPOINT ["python", "/app/entrypoint.py"]
