"""What a results-cache key covers: every byte and setting a golden case's result depends on.

A key is a SHA-256 over replaygate's own code and its dependencies' versions, the command
line's settings (``--model``), the pack's settings and pack.yaml, the contract file, the
values of the environment variables the contract reads (``equals_env``), the case's fixture
and its recording (or the recording's absence), each with the path it was read from.

Files are hashed whole on every run; a key from file sizes and modification times (git's
index, ruff) would save the reads, but a CI checkout gives every file a new time and inode,
so it would never hit there, and a file rewritten within the clock's resolution would hit
when it must not.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import stat
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, cast

from replaygate import __version__
from replaygate.cache.store import CACHE_FORMAT, Window
from replaygate.core.errors import PackError
from replaygate.loading.allowlist import ALLOWLIST_FILE
from replaygate.loading.contract import Contract, GoldenCase
from replaygate.loading.files import MAX_JSON_BYTES
from replaygate.loading.golden import input_base, plain, recording_name
from replaygate.loading.packs import Pack
from replaygate.loading.targets import PACK_FILE

if TYPE_CHECKING:
    from hashlib import _Hash as Hash

# The operators that read the environment: the value of each variable they name is keyed.
ENV_OPERATORS = frozenset({"equals_env"})
# jsonschema-specifications holds the meta-schemas a tool schema is checked against, and
# rfc3987 or rfc3986-validator, when installed, make jsonschema check their "uri" formats
_DEPENDENCIES = (
    "jsonpath-ng", "jsonschema", "jsonschema-rs", "jsonschema-specifications", "msgspec",
    "pydantic", "pyyaml", "referencing", "regex", "rfc3986-validator", "rfc3987",
)  # fmt: skip
DAY = 86_400.0
MARGIN = 1.0  # seconds kept off each end of a window: the warning's clock is not ours


class Keys:
    """The cache keys of the cases of one run; None for a case the cache leaves alone."""

    def __init__(self, env: Mapping[str, str], model: str | None, identity: str) -> None:
        self._env = env
        self._base = _digest([b"run", identity.encode(), (model or "").encode()])
        self._packs: dict[tuple[object, ...], bytes | None] = {}
        self._contracts: dict[int, bytes | None] = {}
        self._recordings: dict[Path, bool] = {}
        self._folders: dict[Path, str] = {}

    def _folder(self, folder: Path) -> str:
        """The folder as ``_inside`` compares paths against it, normalised once per run."""
        if folder not in self._folders:
            self._folders[folder] = os.path.normpath(folder)
        return self._folders[folder]

    def _has_recordings(self, pack: Pack) -> bool:
        """Whether the pack's recordings folder exists: most packs have none, and then no
        case of theirs needs to look for its recording (a failed open costs nearly as much as
        reading a fixture)."""
        if pack.recordings_dir not in self._recordings:
            self._recordings[pack.recordings_dir] = os.path.lexists(pack.recordings_dir)
        return self._recordings[pack.recordings_dir]

    def window(
        self, pack: Pack, case: GoldenCase, started: float, finished: float
    ) -> Window | None:
        """``age_window``; at once for a pack whose keys say it has no recordings folder
        (no recording, no age warning), without resolving the recording's path per case."""
        if not self._has_recordings(pack):
            return Window()
        return age_window(pack, case, started, finished)

    def pack(self, pack: Pack) -> bytes | None:
        """The pack's part of every key; None when the pack is not cached. The same for a
        pack still loading (no contracts yet) as for the pack it becomes."""
        memo = (pack.directory, bool(pack.allowlist), _settings(pack))
        if memo not in self._packs:
            self._packs[memo] = _pack_key(self._base, pack)
        return self._packs[memo]

    def case(self, pack: Pack, contract: Contract, case: GoldenCase) -> str | None:
        pack_key = self.pack(pack)
        if pack_key is None:
            return None
        # by identity: the loaded contracts live as long as the run
        if id(contract) not in self._contracts:
            self._contracts[id(contract)] = _contract_key(pack_key, pack, contract, self._env)
        contract_key = self._contracts[id(contract)]
        if contract_key is None:
            return None
        return self._case_key_or_none(_seeded(contract_key), pack, case, self._has_recordings(pack))

    def cases(
        self, pack_key: bytes, pack: Pack, contract: Contract, names: Iterable[str], text: bytes
    ) -> list[str] | None:
        """The keys of the cases of a contract not parsed, known from its entry (its file's
        bytes ``text``, the variables it reads): those ``case`` gives once it is parsed.
        None when one of them has none."""
        contract_key = _env_key(pack_key, contract.path, contract.file, text, names, self._env)
        seed, recordings = _seeded(contract_key), self._has_recordings(pack)
        keys = [self._case_key_or_none(seed, pack, c, recordings) for c in contract.golden_cases]
        return None if None in keys else cast("list[str]", keys)

    def _case_key_or_none(
        self, seed: Hash, pack: Pack, case: GoldenCase, recordings: bool
    ) -> str | None:
        try:
            return self._case_key(seed, pack, case, recordings)
        except (PackError, OSError):  # it errors when judged: judged every time
            return None

    def _case_key(self, seed: Hash, pack: Pack, case: GoldenCase, recordings: bool) -> str | None:
        """None when the case's files cannot be named here: it is judged, and errors, each
        time."""
        base, rest = input_base(case.input_ref, pack.golden_dir, pack.negative_dir)
        fixture = _inside(self._folder(base), rest)
        recording = _inside(self._folder(pack.recordings_dir), recording_name(case.input_ref))
        if fixture is None or recording is None:
            return None
        fixture_bytes = _read(fixture)
        recorded = _read_if_any(recording) if recordings else None
        parts = [case.id.encode(), repr(case).encode(), os.fsencode(fixture), fixture_bytes]
        parts += [os.fsencode(recording)]
        parts += [b"no recording"] if recorded is None else [b"recording", recorded]
        sha = seed.copy()  # the contract's part hashed once for all its cases
        for part in parts:
            sha.update(len(part).to_bytes(8, "big"))
            sha.update(part)
        return sha.hexdigest()


def contract_entry_key(pack_key: bytes, path: str, file: str, text: bytes) -> str:
    """The key of a contract file's entry: what is known of it before it is parsed."""
    return _digest([pack_key, b"contract entry", path.encode(), file.encode(), text]).hex()


def _digest(parts: Iterable[bytes]) -> bytes:
    """One hash of the parts, each length-prefixed so that no two lists of parts collide."""
    sha = hashlib.sha256()
    for part in parts:
        sha.update(len(part).to_bytes(8, "big"))
        sha.update(part)
    return sha.digest()


def code_identity() -> str:
    """A digest of replaygate's version and code (a development checkout changes without a
    version bump), Python's, and the versions of the libraries that judge a case."""
    package = Path(__file__).resolve().parent.parent  # replaygate's own folder
    code = hashlib.sha256()
    for path in sorted(package.rglob("*")):
        if path.suffix in (".py", ".json") and path.is_file():
            code.update(path.relative_to(package).as_posix().encode() + b"\x00")
            code.update(hashlib.sha256(path.read_bytes()).digest())
    installed = metadata_folders()
    versions = [f"{name}: {installed.get(_normalised(name), 'absent')}" for name in _DEPENDENCIES]
    parts = [f"cache format {CACHE_FORMAT}", __version__, code.hexdigest()]
    return _digest(p.encode() for p in [*parts, sys.version, *versions]).hex()


def metadata_folders() -> dict[str, str]:
    """The metadata folder of each installed distribution, by its normalised name: the first
    on ``sys.path``, as imports find it. The folder's name carries the version
    (``jsonschema-4.26.0.dist-info``), so a library upgraded or removed changes the identity.
    importlib.metadata finds the same folders, but its import alone is a warm run's 10 ms."""
    found: dict[str, str] = {}
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:  # a zip file, a folder that is gone: no library we key lives there
            continue
        for name in sorted(names):
            stem = name.removesuffix(".dist-info").removesuffix(".egg-info")
            if stem != name:  # name-1.0.dist-info, name-1.0-py3.11.egg-info, name.egg-info
                found.setdefault(_normalised(stem.split("-", 1)[0]), name)
    return found


def _normalised(name: str) -> str:
    """A distribution's name as PEP 503 compares them (``jsonpath_ng`` is ``jsonpath-ng``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _pack_key(base: bytes, pack: Pack) -> bytes | None:
    """The pack's settings and pack.yaml; None when the pack is not cached: it has an NR
    allowlist (its reasons expire with the date) or a symbolic link among its files."""
    if pack.allowlist or os.path.lexists(pack.directory / ALLOWLIST_FILE):
        return None
    try:
        if pack.contracts_dir is None or _has_links(pack):  # None: a peer tool's files
            return None
        pack_yaml = (pack.directory / PACK_FILE).read_bytes()
    except OSError:  # a folder that cannot be listed: not ours to vouch for
        return None
    return _digest([base, repr(_settings(pack)).encode(), pack_yaml])


def _settings(pack: Pack) -> tuple[object, ...]:
    return (
        pack.pack_id, pack.shown, pack.root, pack.golden_dir, pack.negative_dir,
        pack.recordings_dir, pack.contracts_dir, pack.provider, pack.default_model,
        pack.max_age_days,
    )  # fmt: skip


def _has_links(pack: Pack) -> bool:
    """Whether a symbolic link is on the way from the root to the pack's folders or in them:
    the bytes behind a link can change without any file of the repository changing."""
    named = {pack.directory, pack.golden_dir, pack.negative_dir, pack.recordings_dir}
    named.add(pack.contracts_dir or pack.directory)
    # a folder inside another is walked with it
    folders = [f for f in named if not any(f != o and f.is_relative_to(o) for o in named)]
    return any(_linked(pack.root, folder) for folder in folders)


def _linked(root: Path, folder: Path) -> bool:
    if not folder.is_relative_to(root):
        return True  # outside the repository: not ours to vouch for
    step = root
    for part in folder.relative_to(root).parts:
        step = step / part
        if step.is_symlink():
            return True
    return folder.is_dir() and _links_in(os.fspath(folder))


def _links_in(folder: str) -> bool:
    with os.scandir(folder) as entries:
        return any(e.is_symlink() or (e.is_dir() and _links_in(e.path)) for e in entries)


def _contract_key(
    pack_key: bytes, pack: Pack, contract: Contract, env: Mapping[str, str]
) -> bytes | None:
    """The contract file's bytes and the environment it reads; None when its cases are read
    with it (an @isdk fixture, a peer tool's files: not keyed here)."""
    if contract.case_inputs is not None:
        return None
    try:
        text = (pack.root / contract.file).read_bytes()
    except OSError:
        return None
    return _env_key(pack_key, contract.path, contract.file, text, env_names(contract), env)


def _env_key(
    pack_key: bytes,
    path: str,
    file: str,
    text: bytes,
    names: Iterable[str],
    env: Mapping[str, str],
) -> bytes:
    """A contract's part of its cases' keys: its file and the environment values it reads."""
    values = [f"{n}={env[n]}" if n in env else f"{n} unset" for n in sorted(names)]
    parts = [pack_key, path.encode(), file.encode(), text]
    return _digest([*parts, *(v.encode("utf-8", "surrogatepass") for v in values)])


def env_names(contract: Contract) -> set[str]:
    """The environment variables the contract's checks read, nested ones included (trace
    assertions read none)."""
    from replaygate.assertions.assertion import Assertion  # a parsed contract's: imported

    found: set[str] = set()
    stack: list[Assertion] = [*contract.output_invariants, *contract.input_invariants]
    stack += [a for call in contract.expected_calls for a in call.invariants]
    while stack:
        for check in stack.pop().checks:
            if check.operator in ENV_OPERATORS:
                found.add(check.prepared)
                found.update([check.surprise.quoted] if check.surprise else [])
            elif isinstance(check.prepared, tuple):  # a composite's nested assertions
                stack += [item for item in check.prepared if isinstance(item, Assertion)]
    return found


def age_window(pack: Pack, case: GoldenCase, started: float, finished: float) -> Window | None:
    """When the result of a case judged between ``started`` and ``finished`` holds: its
    recording's age warning (loading/fixtures.py) appears past recordings.max_age_days and
    names the age in days. None: the age changed during the run, or cannot be told."""
    # what a run that stores a result reads: a warm run stores none, and imports neither
    from replaygate.loading.fixtures import recording_path
    from replaygate.loading.recording import parse_recording

    try:
        path, shown = recording_path(pack, case.input_ref)
    except PackError:  # the case errored, and is not stored anyway
        return None
    if not os.path.lexists(path):
        return Window()
    try:
        recording = parse_recording(json.loads(path.read_bytes()), shown)
    except (PackError, OSError, ValueError, TypeError, KeyError, AttributeError):
        return None  # the case errored, and is not stored anyway
    if recording.recorded_at is None:
        return Window()
    made = recording.recorded_at.timestamp()
    age = math.floor((started - made) / DAY)
    if age != math.floor((finished - made) / DAY):
        return None
    if age <= pack.max_age_days:
        return Window(None, made + (pack.max_age_days + 1) * DAY - MARGIN)
    return Window(made + age * DAY + MARGIN, made + (age + 1) * DAY - MARGIN)


def _seeded(contract_key: bytes) -> Hash:
    """A hash that has taken ``contract_key`` as ``_digest`` takes its first part: each of
    the contract's case keys continues a copy of it."""
    sha = hashlib.sha256()
    sha.update(len(contract_key).to_bytes(8, "big"))
    sha.update(contract_key)
    return sha


def _inside(folder: str, relative: str) -> str | None:
    """``folder / relative`` as the run reads it (``folder`` normalised), or None when that
    leaves ``folder`` or enters ``.git``. Lexical: a cached pack has no symbolic link (see
    _has_links)."""
    if plain(relative) and folder[-1:] != os.sep:  # inside, and no `.git` on the way
        return folder + os.sep + relative
    path = os.path.normpath(os.path.join(folder, relative))
    inside = path.startswith(folder + os.sep) and not os.path.isabs(relative)
    # casefold, as the run refuses it (loading/files.py): `.GIT` is `.git` on some systems
    git = any(part.casefold() == ".git" for part in path[len(folder) :].split(os.sep))
    return path if inside and not git else None


def _read_if_any(path: str) -> bytes | None:
    try:
        return _read(path)
    except FileNotFoundError:
        return None


def _read(path: str) -> bytes:
    """The file's bytes, without a buffered file object: a fifth faster for the small
    files a warm run reads by the thousand. Only a regular file: opened without blocking,
    so a FIFO is refused here (the case is then judged, and errors as it would uncached)
    instead of waiting for a writer."""
    flags = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0)
    handle = os.open(path, flags)
    try:
        found = os.fstat(handle)
        if not stat.S_ISREG(found.st_mode):
            raise OSError(f"{path}: not a regular file")
        if found.st_size > MAX_JSON_BYTES:  # the run refuses it unread: no key, judged
            raise OSError(f"{path}: larger than a fixture or recording may be")
        # one read for a file as large as it was (under 16 MiB: one read returns it whole, a
        # regular file's read stopping short only at its end); a file that grew is read on
        data = os.read(handle, found.st_size + 1)
        if len(data) <= found.st_size:
            return data
        chunks, size = [data], len(data)
        while size <= MAX_JSON_BYTES and (chunk := os.read(handle, 1 << 16)):
            chunks.append(chunk)
            size += len(chunk)
        if size > MAX_JSON_BYTES:
            raise OSError(f"{path}: larger than a fixture or recording may be")
        return b"".join(chunks)
    finally:
        os.close(handle)
