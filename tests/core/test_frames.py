"""The reply framing: only the frame for the awaited request and tag is an answer; anything else,
a forged length included, is set aside and reported, never waited for."""

from __future__ import annotations

from tilescope.core.sandbox.frames import MARKER, FrameReader, digest, encode


def test_a_forged_huge_length_does_not_swallow_the_answer() -> None:
    reader = FrameReader()
    reader.feed(MARKER + b"7 10485760 -\n{" + encode(7, {"ok": True}))
    assert reader.next(7) == {"ok": True}
    assert "foreign bytes" in (reader.take_noise() or "")


def test_a_frame_with_the_right_id_but_another_tag_is_not_the_confirmation() -> None:
    reader = FrameReader()
    answer = encode(3, {"ok": True})
    reader.feed(answer + encode(3, {"confirm": "x"}, tag="guess") + encode(3, {"confirm": "y"}, tag="s3cret"))
    assert reader.next(3) == {"ok": True}
    body = reader.body
    assert reader.next(3, "s3cret") == {"confirm": "y"}
    assert reader.stray_frames == ["3"]
    assert digest(body) == digest(answer[answer.index(b"\n") + 1 : -1])


def test_an_unfinished_frame_is_held_and_counted() -> None:
    reader = FrameReader()
    reader.feed(encode(1, {"ok": True}) + MARKER + b'2 50 -\n{"a"')
    assert reader.next(1) == {"ok": True}
    assert reader.next(2) is None and reader.pending() > 0
