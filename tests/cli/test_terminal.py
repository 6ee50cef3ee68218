"""The terminal conventions: colour only on a terminal (rich's ``NO_COLOR``/``FORCE_COLOR``), a quiet
exit on Ctrl-C (130) and on a closed pipe, a status line on stderr for slow work, and the Textual
apps refusing in one line without a terminal instead of hanging."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import subprocess
import sys
import time

from tests.cli.helpers import EXAMPLES, tilescope

BROKEN = "import tilelang\nimport tilelang.language as T\n\nT.no_such_primitive()\n"


def test_colour_on_request_none_with_no_color_or_on_a_pipe(tmp_path) -> None:
    (tmp_path / "k.py").write_text(BROKEN)
    piped = tilescope("check", "--static", "k.py", cwd=tmp_path)
    forced = tilescope("check", "--static", "k.py", cwd=tmp_path, env={"FORCE_COLOR": "1"})
    refused = tilescope("check", "--static", "k.py", cwd=tmp_path, env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert "\x1b[" not in piped.stdout and "\x1b[" not in refused.stdout
    assert "\x1b[1;31merror[" in forced.stdout or "\x1b[1;33mwarning[" in forced.stdout, forced.stdout
    assert forced.stdout.replace("\x1b[0m", "").count("\x1b[") >= 2  # the finding and the summary line


def _on_a_terminal(*args: str, seconds: float) -> str:
    """What ``tilescope ARGS`` writes to stderr when stderr is a terminal, in the first ``seconds``."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "tilescope", *args], stdout=subprocess.DEVNULL, stderr=follower, stdin=subprocess.DEVNULL
    )
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                seen += os.read(leader, 4096)
            except OSError:
                break
    process.kill()
    process.wait()
    os.close(leader)
    return seen.decode(errors="replace")


def test_a_slow_check_shows_its_progress_on_a_terminal() -> None:
    shown = _on_a_terminal("check", str(EXAMPLES / "flash_attention.py"), seconds=6)
    assert "tilescope check: analysing " in shown and "flash_attention.py… " in shown, shown


SLOW_BUILD = """import time

import tilelang.language as T


# tilescope: N=1024
def slow(N):
    time.sleep(60)

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(N // 128, threads=128) as bx:
            for i in T.Parallel(128):
                B[bx * 128 + i] = A[bx * 128 + i]

    return main
"""


def _as_a_shell_starts_it() -> None:
    """Ctrl-C as a shell leaves it to a command: neither ignored nor blocked. A test process can inherit either
    from what ran in it before (an ignored or blocked SIGINT survives exec), and the command would then rightly
    not hear the interrupt: that is what made this test fail now and then in CI, with exit status 0."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_exits_quietly_with_130(tmp_path) -> None:
    # A kernel whose build takes a minute: the interrupt lands mid-analysis however fast or loaded the machine is.
    slow = tmp_path / "slow.py"
    slow.write_text(SLOW_BUILD)
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "tilescope", "check", str(slow)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_as_a_shell_starts_it,
    )
    time.sleep(2.5)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=50)
    assert process.returncode == 130, err
    assert time.monotonic() - started < 45  # ended by the interrupt, not by the file's end
    assert "Traceback" not in err and "KeyboardInterrupt" not in err


def test_a_closed_pipe_ends_the_command_quietly(tmp_path) -> None:
    shell = f"{sys.executable} -m tilescope puzzles list | head -n 1"
    done = subprocess.run(
        ["bash", "-c", shell],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TILESCOPE_DATA_DIR": str(tmp_path)},
    )
    assert len(done.stdout.splitlines()) == 1
    assert "BrokenPipeError" not in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_the_apps_refuse_without_a_terminal_instead_of_hanging(tmp_path) -> None:
    env = {"TILESCOPE_DATA_DIR": str(tmp_path)}
    for args, words in [
        (["puzzles"], "tilescope puzzles: the app needs a terminal"),
        (["trace", str(EXAMPLES / "gemm.py")], "tilescope trace: the pass viewer needs a terminal"),
    ]:
        started = time.monotonic()
        done = tilescope(*args, env=env, timeout=60)
        assert done.returncode == 2 and done.stderr.strip().startswith(words), done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
        assert time.monotonic() - started < 30


def test_plain_text_renderings_for_pipes_and_no_color() -> None:
    gemm = str(EXAMPLES / "gemm.py")
    layout = tilescope("layout", gemm, "--term", "--buffer", "C_local", env={"NO_COLOR": "1"})
    assert layout.returncode == 0, layout.stderr
    assert "▀" not in layout.stdout and "\x1b[" not in layout.stdout
    assert "thread over register" in layout.stdout
    trace = tilescope("trace", gemm, "--text")
    assert trace.returncode == 0, trace.stderr
    assert re.search(r"^# pass \d+: tl\.LayoutInference", trace.stdout, re.MULTILINE), trace.stdout[:500]
    assert "\n+++ b/matmul." in trace.stdout
