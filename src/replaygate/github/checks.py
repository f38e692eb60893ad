"""Check runs: one completed run on the head SHA, its annotations sent 50 per request."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from replaygate.github.annotations import Level
from replaygate.github.api import GitHubApi
from replaygate.github.wire import GitHubApiError, clip_utf8
from replaygate.report.escape import xml_safe
from replaygate.results.verdict import Conclusion

MAX_ANNOTATIONS = 50  # per request; later batches go by PATCH and are appended
MAX_TITLE_CHARS = 255
MAX_OUTPUT_BYTES = 65_535  # documented in characters; counted in bytes to be safe
MAX_DETAIL_BYTES = 65_535  # "64 KB" per annotation message
OUTPUT_CUT = "\n\n… (cut to fit GitHub's size limit: the JUnit and JSON reports have it all)"
DETAIL_CUT = "\n… (cut)"
CHECK_NAME = "replaygate"


@dataclass(frozen=True, slots=True)
class CheckAnnotation:
    """One annotation on a line range of a repository file (path relative to its root)."""

    path: str
    start_line: int
    end_line: int
    level: Level
    message: str
    title: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The annotation object of the Checks API, cut to its documented limits."""
        start = max(1, self.start_line)
        data: dict[str, Any] = {
            "path": self.path,
            "start_line": start,
            "end_line": max(start, self.end_line),
            "annotation_level": str(self.level),
            # characters that hide or reorder text shown as escapes, as in the summary
            "message": clip_utf8(
                xml_safe(self.message or "(no message)"), MAX_DETAIL_BYTES, DETAIL_CUT
            ),
        }
        if self.title is not None:
            data["title"] = clip_title(xml_safe(self.title))
        return data


def clip_title(title: str) -> str:
    return title if len(title) <= MAX_TITLE_CHARS else title[: MAX_TITLE_CHARS - 1] + "…"


def create_check_run(
    api: GitHubApi,
    *,
    head_sha: str,
    conclusion: Conclusion,
    title: str,
    summary: str,
    annotations: Sequence[CheckAnnotation],
) -> int:
    """Create a completed check run with every annotation; return its id."""
    output = _output(title, summary)
    batches = _batches([annotation.to_json() for annotation in annotations])
    body = {
        "name": CHECK_NAME,
        "head_sha": head_sha,
        "status": "completed",
        "conclusion": conclusion.value,
        "external_id": f"replaygate-{uuid.uuid4().hex}",  # finds this run again after a 5xx
        "output": {**output, "annotations": batches[0]},
    }
    run_id = _create(api, body)
    sent = len(batches[0])
    for batch in batches[1:]:
        sent += len(batch)
        _append(api, run_id, {**output, "annotations": batch}, sent)
    return run_id


def _output(title: str, summary: str) -> dict[str, str]:
    """Title and summary: repeated on every PATCH, as the output object needs them."""
    return {
        "title": clip_title(title),
        "summary": clip_utf8(summary, MAX_OUTPUT_BYTES, OUTPUT_CUT),
    }


def _batches(items: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    return [items[i : i + MAX_ANNOTATIONS] for i in range(0, len(items), MAX_ANNOTATIONS)] or [[]]


def _create(api: GitHubApi, body: dict[str, Any]) -> int:
    """POST once; after an unknown outcome, look for the run before posting again."""
    path = api.repo_path("/check-runs")
    try:
        return _run_id(api.request("POST", path, json=body, retry=False))
    except GitHubApiError as error:
        if not error.transient:
            raise
    found = _find_run(api, body["head_sha"], body["name"], body["external_id"])
    return (
        found if found is not None else _run_id(api.request("POST", path, json=body, retry=False))
    )


def _find_run(api: GitHubApi, head_sha: str, name: str, external_id: str) -> int | None:
    """Our run among the commit's runs of that name: every page, as shards and re-runs of
    earlier jobs can put it past the first hundred."""
    params: dict[str, str | int] = {"check_name": name, "filter": "all", "per_page": 100}
    path = api.repo_path(f"/commits/{head_sha}/check-runs")
    for run in api.paginate(path, params, key="check_runs"):
        if run.get("external_id") == external_id:
            return _run_id(run)
    return None


def _append(api: GitHubApi, run_id: int, output: dict[str, Any], expected: int) -> None:
    """PATCH one batch (annotations append); after an unknown outcome, count before resending."""
    path = api.repo_path(f"/check-runs/{run_id}")
    try:
        api.request("PATCH", path, json={"output": output}, retry=False)
        return
    except GitHubApiError as error:
        if not error.transient:
            raise
    if _annotations_count(api.request("GET", path)) < expected:
        api.request("PATCH", path, json={"output": output}, retry=False)


def _annotations_count(run: Any) -> int:
    output = run.get("output") if isinstance(run, dict) else None
    count = output.get("annotations_count") if isinstance(output, dict) else None
    return count if isinstance(count, int) else 0


def _run_id(run: Any) -> int:
    run_id = run.get("id") if isinstance(run, dict) else None
    if not isinstance(run_id, int) or isinstance(run_id, bool):
        raise GitHubApiError("GitHub API: the check-run response has no id")
    return run_id
