"""A submission against the real grading server (its own process, its own local Ray cluster with token
authentication) reaches none of the server's secrets, no network, and not the cluster's Ray: the attacks a
hostile review made, each of which got through before the seal held them."""

from __future__ import annotations

import glob
import json
import os
import tempfile
import uuid
from pathlib import Path

import pytest

from tests.conftest import Listener, armed

from .conftest import CONTENT, add_learner, start_server, tilescope, wait_verdict

SECRET_VARIABLE = "TILESCOPE_TEST_SERVER_SECRET"


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
            "folders": glob.glob(os.path.join(tempfile.gettempdir(), "tilescope-grading-*")),
            "outside": str(outside),
            "ray": {"reference": str(CONTENT / "01_copy_one_block" / "reference.py"), "mark": str(mark)},
            "port": listener.port,
        }
        assert target["folders"], "the server's grading slot made no private folder"
        assert (Path.home() / ".ray" / "auth_token").exists(), "the cluster runs without Ray's token"
        done = tilescope(
            "puzzles",
            "submit",
            "1",
            str(armed(target, tmp_path / "steals_secrets.py")),
            "--server",
            server.url,
            "--json",
            env={"TILESCOPE_TOKEN": token},
            timeout=600,
        )
        answer = json.loads(done.stdout)
        verdict = answer if answer.get("verdict") is not None else wait_verdict(server, int(answer["id"]), token)
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
