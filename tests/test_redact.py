"""Redaction: secret-named keys, secret values, key shapes and a pack's paths, at any depth."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replaygate.providers.redact import REDACTED, Redactor
from replaygate.providers.store import write_recording

CANARY_KEY = "sk-canary-KEY-0123456789abcdef"
CANARY_ENV = {"MY_SERVICE_TOKEN": "canary-token-value-42", "DB_SECRET": "canary-secret-value-7"}


def _redactor() -> Redactor:
    return Redactor.build({**CANARY_ENV, "HOME": "/home/someone", "SHORT_KEY": "abc"}, [CANARY_KEY])


@pytest.mark.parametrize(
    "key",
    [
        "authorization",
        "Proxy-Authorization",
        "api_key",
        "API-KEY",
        "x-api-key",
        "X_Api_Key",
        "token",
        "Secret",
    ],
)
def test_secret_named_keys_are_redacted_at_any_depth(key: str) -> None:
    doc = {"a": [{"b": {key: {"nested": "x"}, "keep": "y"}}]}
    assert _redactor().value(doc) == {"a": [{"b": {key: REDACTED, "keep": "y"}}]}


def test_secret_values_are_redacted_inside_any_string() -> None:
    text = f"Incorrect API key provided: {CANARY_KEY}. env {CANARY_ENV['DB_SECRET']}!"
    assert _redactor().text(text) == f"Incorrect API key provided: {REDACTED}. env {REDACTED}!"


def test_key_shapes_are_redacted_even_when_unknown() -> None:
    assert _redactor().text("a sk-proj-AbCdEf0123456789 b sk-ant-api03-xyzxyzxyz") == (
        f"a {REDACTED} b {REDACTED}"
    )


def test_short_and_unrelated_environment_values_are_not_secrets() -> None:
    assert _redactor().text("abc /home/someone input_tokens") == "abc /home/someone input_tokens"


def test_a_secret_inside_json_text_is_redacted() -> None:
    redactor = Redactor.build({"Q_KEY": 'quote"inside-value'})
    arguments = json.dumps({"q": 'quote"inside-value'})
    assert 'quote\\"inside-value' in arguments
    assert "inside-value" not in redactor.text(arguments)


def test_pack_paths_name_values_that_are_redacted_everywhere() -> None:
    response = {"tool_calls": [{"arguments": {"email": "bob@example.com", "n": 1}}]}
    document = {"response": response, "raw": {"body": {"args": '{"email": "bob@example.com"}'}}}
    redactor = _redactor().with_paths(response, ["$.tool_calls[*].arguments.email"])
    assert "bob@example.com" not in json.dumps(redactor.value(document))
    assert redactor.value(document)["response"]["tool_calls"][0]["arguments"]["n"] == 1


def test_the_written_recording_holds_no_canary(tmp_path: Path) -> None:
    document = {
        "response": {"content": f"echo {CANARY_KEY}", "tool_calls": []},
        "raw": {
            "status": 200,
            "body": {
                "headers": {"Authorization": f"Bearer {CANARY_KEY}"},
                "note": CANARY_ENV["MY_SERVICE_TOKEN"],
            },
        },
    }
    path = tmp_path / "recordings" / "x.recording.json"
    write_recording(path, document, _redactor())
    text = path.read_text()
    for canary in (CANARY_KEY, *CANARY_ENV.values()):
        assert canary not in text
    assert [p.name for p in path.parent.iterdir()] == ["x.recording.json"]  # no temporary left


def test_a_secret_used_as_a_key_is_redacted_and_collisions_are_suffixed() -> None:
    doc = {CANARY_KEY: 1, f"x {CANARY_ENV['DB_SECRET']}": 2, "[redacted]": 3, "keep": 4}
    assert _redactor().value(doc) == {
        REDACTED: 1,
        f"x {REDACTED}": 2,
        f"{REDACTED} (2)": 3,
        "keep": 4,
    }


def test_a_non_ascii_secret_is_redacted_in_its_escaped_json_form_too() -> None:
    redactor = Redactor.build({"U_TOKEN": "schlüssel-value"})
    assert "schl" not in redactor.text(json.dumps({"k": "schlüssel-value"}))
    assert "schl" not in redactor.text(json.dumps({"k": "schlüssel-value"}, ensure_ascii=False))


def _encodings(secret: str) -> dict[str, str]:
    """The forms a provider may echo a secret in, each inside other text."""
    import base64
    from urllib.parse import quote, quote_plus

    raw = secret.encode()
    return {
        "base64": base64.b64encode(raw).decode(),
        "base64 unpadded": base64.b64encode(raw).decode().rstrip("="),
        "base64 in basic auth": base64.b64encode(b"user:" + raw).decode(),
        "base64 shifted by two": base64.b64encode(b"ab" + raw + b"!").decode(),
        "urlsafe base64": base64.urlsafe_b64encode(b"\xfb\xff" + raw).decode(),
        "upper-case": secret.upper(),
        "lower-case": secret.lower(),
        "url-encoded": quote(secret, safe=""),
        "url-encoded, lower hex": quote(secret, safe="").replace("%2D", "%2d"),
        "form-encoded": quote_plus(f"{secret} x")[:-2],
        "json \\u-escaped": "".join(f"\\u{ord(c):04x}" for c in secret),
        "json \\u-escaped upper": "".join(f"\\u{ord(c):04X}" for c in secret),
    }


@pytest.mark.parametrize("form", list(_encodings(CANARY_KEY)))
@pytest.mark.parametrize("secret", [CANARY_KEY, CANARY_ENV["DB_SECRET"]])
def test_the_common_encodings_of_a_secret_are_redacted(form: str, secret: str) -> None:
    encoded = _encodings(secret)[form]
    cores = {value for value in _encodings(secret).values() if value != secret} - {encoded}
    document = {"arguments": f'{{"note": "echo {encoded} done"}}', encoded: 1}
    scrubbed = _redactor().value(document)
    texts = [*(key for key in scrubbed if key != "arguments"), scrubbed["arguments"]]
    assert all(REDACTED in text and encoded not in text for text in texts), texts
    assert not any(core in text for text in texts for core in cores if core in encoded)
