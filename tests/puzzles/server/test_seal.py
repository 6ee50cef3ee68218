"""A submission against the real grading server (its own process, its own local Ray cluster with token
authentication) reaches none of the server's secrets, no network, and not the cluster's Ray: the attacks a
hostile review made, each of which got through before the seal held them."""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tilescope.puzzles.server.slot import PRIVATE_PREFIX

from tests.conftest import Listener, armed, free_port

from .conftest import CONTENT, Server, add_learner, start_server, tilescope, wait_verdict

SECRET_VARIABLE = "TILESCOPE_TEST_SERVER_SECRET"


def _submit_armed(server: Server, token: str, target: dict[str, object], folder: Path) -> dict[str, Any]:
    """The held-out steal file aimed at ``target``, submitted as a learner through the CLI; its graded record."""
    done = tilescope(
        "puzzles",
        "submit",
        "1",
        str(armed(target, folder / "steals_secrets.py")),
        "--server",
        server.url,
        "--json",
        env={"TILESCOPE_TOKEN": token},
        timeout=600,
    )
    answer = json.loads(done.stdout)
    return answer if answer.get("verdict") is not None else wait_verdict(server, int(answer["id"]), token)


@pytest.mark.slow
def test_a_submission_reaches_no_secret_no_network_and_not_the_clusters_ray(
    tmp_path: Path, listener: Listener, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = f"s3cr3t-{uuid.uuid4().hex}"
    monkeypatch.setenv(SECRET_VARIABLE, secret)  # in the server's environment, so in its Ray workers' too
    db_file = tmp_path / "class.db"
    db = f"sqlite:///{db_file}"
    token = add_learner(db, "mallory")
    server = start_server(db, tmp_path, "--cpu-slots", "1")
    try:
        mark = tmp_path / "ray-escaped"
        outside = tmp_path / "outside.txt"
        target = {
            "secret": secret,
            "server_pid": server.process.pid,
            "files": [str(Path.home() / ".ray" / "auth_token"), str(db_file)],
            "folders": glob.glob(os.path.join(tempfile.gettempdir(), PRIVATE_PREFIX + "*")),
            "outside": str(outside),
            "ray": {"reference": str(CONTENT / "01_copy_one_block" / "reference.py"), "mark": str(mark)},
            "port": listener.port,
        }
        assert target["folders"], "the server's grading slot made no private folder"
        assert (Path.home() / ".ray" / "auth_token").exists(), "the cluster runs without Ray's token"
        verdict = _submit_armed(server, token, target, tmp_path)
    finally:
        server.stop()
    text = json.dumps(verdict)
    reached = {
        "a secret, into its report": "stolen" in text or secret in text,
        "the cluster's Ray (its task wrote outside the seal)": mark.exists(),
        "the listener on loopback": bool(listener.received),
        "a file outside its folder": outside.exists(),
    }
    assert [what for what, done in reached.items() if done] == [], text[:1500]
    outcome = verdict["verdict"]
    assert isinstance(outcome, dict) and outcome["passed"], text[:2000]  # it reached nothing, so it built


def test_the_database_url_comes_from_the_environment_or_a_file_not_the_command_line(tmp_path: Path) -> None:
    """A PostgreSQL URL carries its password: on the command line every process of the machine reads it."""
    data = {"TILESCOPE_DATA_DIR": str(tmp_path / "data")}
    from_env = tmp_path / "from-environment.db"
    done = tilescope(
        "puzzles", "serve", "--add-learner", "ann", env={**data, "TILESCOPE_DB_URL": f"sqlite:///{from_env}"}
    )
    assert done.returncode == 0 and str(from_env) in done.stdout, done.stderr
    url_file, from_file = tmp_path / "db-url", tmp_path / "from-file.db"
    url_file.write_text(f"sqlite:///{from_file}\n")
    done = tilescope("puzzles", "serve", "--db-file", str(url_file), "--add-learner", "bob", env=data)
    assert done.returncode == 0 and str(from_file) in done.stdout, done.stderr
    assert from_env.exists() and from_file.exists() and not (tmp_path / "data").exists()


@pytest.fixture
def two_node_cluster(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, str]]:
    """A Ray cluster of two nodes on this machine, with token authentication (a head, and a second node
    holding the resource ``second``), as a class's cluster of machines is; its address, and a secret in the
    environment of its nodes (so of the grading actors) and of the server. Each node is a
    ``ray start --block`` in a process group of its own, ended by the group (``ray stop`` would end every
    cluster of the machine, other tests' too), killed if it takes more than 5 s."""
    ray_bin = str(Path(sys.executable).with_name("ray"))
    from ray._private.services import get_node_ip_address

    # Ray runs several nodes only on the machine's outward address (on loopback it refuses a second node),
    # as a class's cluster of machines does.
    address = f"{get_node_ip_address()}:{free_port()}"
    monkeypatch.setenv("RAY_AUTH_MODE", "token")  # the server and the control driver join with the token
    secret = f"s3cr3t-{uuid.uuid4().hex}"
    monkeypatch.setenv(SECRET_VARIABLE, secret)
    session = tempfile.mkdtemp(prefix="r2n-", dir="/tmp")  # short: Ray's socket paths must fit 107 bytes
    env = {**os.environ, "RAY_TMPDIR": session}
    common = ["--block", "--num-cpus", "1", "--object-store-memory", str(200 << 20), "--disable-usage-stats"]
    nodes = [
        [ray_bin, "start", "--head", "--port", address.split(":")[1],
         "--include-dashboard", "false", *common],
        [ray_bin, "start", "--address", address, "--resources", '{"second": 1}',
         *common],
    ]  # fmt: skip
    started: list[subprocess.Popen[bytes]] = []
    try:
        for command in nodes:
            node = subprocess.Popen(
                command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
            )
            started.append(node)
            _until_nodes(ray_bin, address, len(started), env)
        yield address, secret
    finally:
        for process in reversed(started):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=5)  # asked to end, a node here took over 30 s to shut down gracefully
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
        shutil.rmtree(session, ignore_errors=True)


def _until_nodes(ray_bin: str, address: str, count: int, env: dict[str, str]) -> None:
    """Wait until ``ray status`` lists ``count`` live nodes."""
    deadline = time.monotonic() + 180
    said = ""
    while time.monotonic() < deadline:
        done = subprocess.run([ray_bin, "status", "--address", address], env=env, capture_output=True, text=True)
        said = done.stdout + done.stderr
        active = said.split("Active:", 1)[-1].split("Pending:", 1)[0]
        if done.returncode == 0 and active.count("node_") >= count:
            return
        time.sleep(2)
    raise AssertionError(f"the cluster did not get {count} nodes: {said[-2000:]}")


@pytest.mark.slow
def test_a_submission_does_not_reach_a_two_node_clusters_ray(
    tmp_path: Path, listener: Listener, two_node_cluster: tuple[str, str]
) -> None:
    """The Ray escape and the secret read against a cluster of two nodes: the submission's child knows the
    cluster's address and aims its task at the other node, and looks for the secret in its environment, the
    server's ``/proc`` entries, Ray's token and the database. Outside the seal the same task does run there
    (the control), so what stops it is the seal, not the test."""
    address, secret = two_node_cluster
    reference = str(CONTENT / "01_copy_one_block" / "reference.py")
    control = tmp_path / "control-escaped"
    from tests.puzzles.fixtures import steals_secrets  # the file's own attack, run here without a seal

    said = steals_secrets._ray(reference, str(control), address, "second")
    assert "RAY-ESCAPED" in said and control.exists(), "the control task did not run: the test would prove nothing"

    db_file = tmp_path / "class.db"
    db = f"sqlite:///{db_file}"
    token = add_learner(db, "mallory")
    server = start_server(db, tmp_path, "--cpu-slots", "2", "--ray", address)
    mark = tmp_path / "ray-escaped"
    try:
        target = {
            "secret": secret,
            "server_pid": server.process.pid,
            "files": [str(Path.home() / ".ray" / "auth_token"), str(db_file)],
            "ray": {"reference": reference, "mark": str(mark), "address": address, "resource": "second"},
            "port": listener.port,
        }
        verdict = _submit_armed(server, token, target, tmp_path)
    finally:
        server.stop()
    text = json.dumps(verdict)
    reached = {
        "a secret, into its report": "stolen" in text or secret in text,
        "the cluster's Ray (its task wrote outside the seal)": mark.exists(),
        "the listener on loopback": bool(listener.received),
    }
    assert [what for what, done in reached.items() if done] == [], text[:1500]
    assert verdict["verdict"]["passed"], text[:2000]  # it reached nothing, so it built
