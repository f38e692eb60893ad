"""Publishing to the GitHub API has a total deadline: a trickling server cannot hold the step."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from action_harness import Action, write_pack

TRICKLE_EVERY = 0.2  # seconds between two bytes of the answer


class Trickle:
    """An HTTP server on 127.0.0.1 that answers every request one byte at a time, forever."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.1)
        self.requests: list[bytes] = []
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}"

    def serve(self) -> None:
        while not self.stopped.is_set():
            try:
                connection, _ = self.listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=self.answer, args=(connection,), daemon=True).start()

    def answer(self, connection: socket.socket) -> None:
        with connection:
            self.requests.append(connection.recv(65536).split(b"\r\n", 1)[0])
            head = b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n"
            connection.sendall(head + b"Content-Length: 1000000\r\n\r\n{")
            while not self.stopped.wait(TRICKLE_EVERY):
                try:
                    connection.sendall(b" ")
                except OSError:
                    return


@pytest.fixture
def trickle() -> Iterator[Trickle]:
    server = Trickle()
    server.thread.start()
    yield server
    server.stopped.set()
    server.thread.join()
    server.listener.close()


def test_a_trickling_api_is_given_up_at_the_deadline_with_a_warning(
    tmp_path: Path, trickle: Trickle
) -> None:
    action = Action(tmp_path, token="ghs_token", api_url=trickle.url)
    write_pack(action.workspace, ["Zurich", "Basel"])
    step = action.run(check_run="true", pr_comment="true", api_deadline_seconds="1")
    assert step.code == 1, step.log  # the cases decide the exit code, not the API
    assert [w.data for w in step.annotations("warning")] == [
        "check run not published: GitHub API POST /repos/octo-org/octo-repo/check-runs: "
        "no complete response within the 1s deadline for the GitHub API",
        "PR comment not published: GitHub API GET /repos/octo-org/octo-repo/issues/7/comments: "
        "not sent: the 1s deadline for the GitHub API has passed",
    ]
    assert trickle.requests == [b"POST /repos/octo-org/octo-repo/check-runs HTTP/1.1"]
    assert step.outputs["failed"] == "1" and "Basel" in step.summary
