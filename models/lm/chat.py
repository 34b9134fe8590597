"""Chat messages: the one place a prompt is assembled from an instruction, demonstrations and a request."""

from __future__ import annotations

from collections.abc import Iterable

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": ...}


def chat_messages(request: str, system: str | None = None, demos: Iterable[tuple[str, str]] = ()) -> list[Message]:
    """An optional system instruction, each demonstration as a (user, assistant) pair, then the request."""
    messages = [{"role": "system", "content": system}] if system is not None else []
    for user, assistant in demos:
        messages += [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
    return messages + [{"role": "user", "content": request}]
