"""What the commands that read packs share: the case targets and --root, other tools'
files' options, the loading of what the command line names, and a live provider's options,
set-up and refusals."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from replaygate.core.errors import ReplayGateError

if TYPE_CHECKING:
    from replaygate.loading.formats.registry import PeerOptions
    from replaygate.loading.packs import ContractBatch, Loaded
    from replaygate.providers.client import Provider


def add_case_targets(parser: argparse.ArgumentParser, paths_help: str) -> None:
    """The PATH arguments and --root of the commands that act on chosen cases."""
    parser.add_argument("paths", nargs="*", default=[], metavar="PATH", help=paths_help)
    parser.add_argument("--root", metavar="DIR", help="repository root (see `run --help`)")


def add_peer_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("ai-tester runs and Connexity test cases")
    group.add_argument(
        "--scenarios",
        metavar="DIR",
        help="where ai-tester scenarios live, when the path a trace records does not resolve",
    )
    group.add_argument(
        "--tag",
        action="append",
        default=[],
        metavar="TAG",
        help="only Connexity test cases with this tag (repeatable: any of them)",
    )
    group.add_argument(
        "--difficulty",
        type=_difficulty,
        metavar="normal|hard",
        help="only Connexity test cases of this difficulty",
    )


def _difficulty(text: str) -> str:
    # the enum's module loads pydantic: imported only when the option is given
    from replaygate.loading.formats.connexity import Difficulty

    if text not in set(Difficulty):
        raise argparse.ArgumentTypeError(f"must be one of {', '.join(Difficulty)}, got {text!r}")
    return text


def peer_options(args: argparse.Namespace) -> PeerOptions:
    from replaygate.loading.formats.registry import PeerOptions

    scenarios = Path(args.scenarios).absolute() if args.scenarios else None
    return PeerOptions(scenarios, tuple(args.tag), args.difficulty)


def provider_option(parser: argparse.ArgumentParser, *, required: bool) -> None:
    """--provider and what a live provider needs: --base-url, --model, --api-key-env."""
    from replaygate.providers.names import ProviderName

    names = ", ".join(str(name) for name in ProviderName)
    group = parser.add_argument_group("provider")
    group.add_argument(
        "--provider",
        required=required,
        type=_provider if required else _provider_or_recorded,
        default=None if required else "recorded",
        metavar="NAME",
        help=f"{names}"
        + ("" if required else " (live: nothing is written), or recorded (default)"),
    )
    group.add_argument("--base-url", metavar="URL", help="the provider's API base URL")
    group.add_argument("--model", metavar="M", help="send this model instead of the fixture's")
    group.add_argument(
        "--api-key-env",
        metavar="NAME",
        help="environment variable holding the API key (default: OPENAI_API_KEY, "
        "ANTHROPIC_API_KEY; none for openai-compatible)",
    )


def _provider(text: str) -> str:
    from replaygate.providers.names import ProviderName

    if text not in set(ProviderName):
        valid = ", ".join(str(name) for name in ProviderName)
        raise argparse.ArgumentTypeError(f"must be one of {valid}, got {text!r}")
    return text


def _provider_or_recorded(text: str) -> str:
    return text if text == "recorded" else _provider(text)


def provider_setup(args: argparse.Namespace, environ: Mapping[str, str]) -> Provider:
    """The provider the options name, with its key; one clear line when something is missing."""
    from urllib.parse import urlsplit

    from replaygate.providers.client import Provider
    from replaygate.providers.names import ProviderName
    from replaygate.providers.redact import Redactor
    from replaygate.providers.wire import WIRES

    name = ProviderName(args.provider)
    wire = WIRES[name]
    base = args.base_url or wire.base_url
    if base is None:
        raise ReplayGateError(f"--base-url is needed for {name}")
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ReplayGateError(f"--base-url {base!r} is not an http(s) URL")
    key_env = args.api_key_env or wire.key_env
    key = environ.get(key_env) if key_env else None
    if key_env and not key:
        raise ReplayGateError(f"{key_env} is not set: the {name} provider needs an API key")
    if key_env and key:
        _check_key(key_env, key)
    redactor = Redactor.build(environ, [key] if key else [])
    return Provider(name, base, key, redactor, key_env=args.api_key_env or None)


def _check_key(key_env: str, key: str) -> None:
    """A key an HTTP header cannot carry stops the run here, before any request."""
    if key != key.strip() or not key.isprintable():
        raise ReplayGateError(
            f"{key_env} has a space, newline or control character in it: remove it"
        )
    try:
        key.encode("latin-1")
    except UnicodeEncodeError:
        raise ReplayGateError(
            f"{key_env} has characters an HTTP header cannot carry (outside Latin-1): "
            "check its value"
        ) from None


def refuse_untrusted_event(environ: Mapping[str, str]) -> None:
    """Recording sends a key to a provider: never for code a fork's pull request controls."""
    from replaygate.github.env import FORK_EVENTS, PR_EVENTS, carries_fork_payload, read_event

    event = read_event(environ)
    if event.name in FORK_EVENTS:
        unreadable = _unreadable(environ.get("GITHUB_EVENT_PATH", ""))
        if unreadable:
            raise ReplayGateError(
                f"refusing to record on a {event.name} event: its event file "
                f"(GITHUB_EVENT_PATH) {unreadable}, so where its code comes from is unknown"
            )
    if event.name == "pull_request_target":
        raise ReplayGateError(
            "refusing to record on a pull_request_target event: it runs with the base "
            "repository's secrets on a pull request's code"
        )
    if carries_fork_payload(environ):  # the cache's rule: one rule for a fork's events
        article = "an" if event.name[:1] in "aeiou" else "a"
        where = "" if event.name in PR_EVENTS else f"{article} {event.name} event for "
        raise ReplayGateError(
            f"refusing to record on {where}a pull request from a fork (or one whose head is "
            "not known): its code must not get the API key"
        )


def _unreadable(path: str) -> str | None:
    """Why the event file cannot be read, or None when it can."""
    import json

    if not path:
        return "is not set"
    try:
        with open(path, encoding="utf-8") as handle:
            json.load(handle)
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    except ValueError:
        return "is not JSON"
    return None


def progress_bar(total: int) -> tuple[Callable[[], None], Callable[[], None]]:
    """A progress bar on stderr when it is a terminal (else nothing): tick, close."""
    if not sys.stderr.isatty():
        return (lambda: None), (lambda: None)
    from tqdm import tqdm

    bar = tqdm(total=total, unit="case", file=sys.stderr)

    def tick() -> None:
        bar.update(1)

    return tick, bar.close


def load_named(args: argparse.Namespace, load: ContractBatch | None = None) -> Loaded:
    """What the command line names (packs, contracts, cases, peer files), loaded (the packs'
    contracts by ``load``, else parsed); the repository root each resolved against is
    printed once, on stderr."""
    from datetime import UTC, datetime

    from replaygate.loading.peers import load_all
    from replaygate.loading.roots import root_lines
    from replaygate.loading.targets import command_targets
    from replaygate.report.escape import terminal_safe

    cwd = Path.cwd()
    named = command_targets(args.paths, args.pack, cwd)
    loaded = load_all(
        named.targets,
        cwd=cwd,
        root=Path(args.root).resolve() if args.root else None,
        now=datetime.now(UTC),
        warnings=named.warnings,
        peers=peer_options(args),
        load=load,
    )
    for line in root_lines(loaded.roots):
        print(terminal_safe(line), file=sys.stderr)
    return loaded
