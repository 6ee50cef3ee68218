"""``tilescope puzzles``: the app with no verb, or list / show / start / check / hint / reveal / reset, and a
class's grading server (serve / submit)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from tilescope.core.compiler.gpu import local_gpu
from tilescope.core.environment import require_extra
from tilescope.puzzles import catalog
from tilescope.puzzles.session import DEFAULT_TIMEOUT_S


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("puzzles", help="graded TileLang puzzles (an app, or verbs from the shell)")
    parser.set_defaults(func=_app)
    verbs = parser.add_subparsers(dest="verb", metavar="VERB")

    p = verbs.add_parser("list", help="every puzzle with your progress")
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.set_defaults(func=_list)
    _on_puzzle(verbs, "show", "a puzzle's statement, target and your progress", _show)
    _on_puzzle(verbs, "start", "create your file for a puzzle from its starter (kept if it exists)", _start)
    p = _on_puzzle(verbs, "check", "compile and grade your file (or FILE)", _check)
    p.add_argument("file", nargs="?")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--cpu", action="store_true", help="check without the GPU even when one is present")
    p.add_argument("--no-perf", action="store_true", help="skip timing")
    p.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        metavar="S",
        help=f"seconds the file's own code may take to load, then each compile and each run ({DEFAULT_TIMEOUT_S:g})",
    )
    p.add_argument("--seed", type=int, help="seed for the hidden cases (default: a fresh one)")
    p.add_argument("--sanitize", action="store_true", help="also run one small case under compute-sanitizer")
    p.add_argument(
        "--service",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="check through the warm per-user grading service (default: on when there is a GPU)",
    )
    _on_puzzle(verbs, "hint", "unlock the next hint", _hint)
    p = _on_puzzle(verbs, "reveal", "print the reference solution (asks first unless solved)", _reveal)
    p.add_argument("--yes", action="store_true", help="reveal without asking")
    p.add_argument("--write", action="store_true", help="also save it next to your file")
    _on_puzzle(verbs, "reset", "restore the starter file (your file is backed up first)", _reset)
    p = verbs.add_parser("serve", help="a grading server for a class: a queue, a page, graders on a Ray cluster")
    p.add_argument("--ray", metavar="ADDRESS", help="the Ray cluster to grade on (default: a new local one)")
    db = p.add_mutually_exclusive_group()
    db.add_argument(
        "--db",
        metavar="URL",
        help="sqlite:///PATH (default: $TILESCOPE_DB_URL, else in your data folder) or postgresql://...; a URL with "
        "a password belongs in $TILESCOPE_DB_URL or --db-file, where no other process can read it",
    )
    db.add_argument("--db-file", metavar="PATH", help="a file whose first line is the database URL")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (0.0.0.0 for a class; default loopback)")
    p.add_argument("--port", type=int, default=8765, metavar="N", help="HTTP port (8765)")
    p.add_argument("--add-learner", metavar="NAME", help="issue NAME a token (printed on the last line) and exit")
    p.add_argument("--revoke-learner", metavar="NAME", help="end NAME's token now and exit (their work stays)")
    p.add_argument("--token-days", type=float, default=120.0, metavar="D", help="how long a new token works (120)")
    p.add_argument("--max-kb", type=int, default=64, metavar="KB", help="largest file a learner may submit (64)")
    p.add_argument("--per-minute", type=int, default=6, metavar="N", help="submissions a learner may make a minute (6)")
    p.add_argument(
        "--budget", type=float, default=600.0, metavar="S", help="seconds of grading a learner may use an hour (600)"
    )
    p.add_argument("--cpu-slots", type=int, metavar="N", help="graders without a GPU (default: one per CPU)")
    p.set_defaults(func=_serve)
    p = verbs.add_parser("submit", help="send your file to a grading server and print its verdict")
    p.add_argument("puzzle")
    p.add_argument("file")
    p.add_argument("--server", required=True, metavar="URL", help="the server, e.g. http://gpu-box:8765")
    p.add_argument("--token", help="your token (default: TILESCOPE_TOKEN)")
    p.add_argument("--json", action="store_true", help="print the submission and its verdict as JSON")
    p.add_argument("--wait", type=float, default=1800.0, metavar="S", help="seconds to wait for the verdict (1800)")
    p.set_defaults(func=_submit)


def _on_puzzle(
    verbs: argparse._SubParsersAction[argparse.ArgumentParser],  # pyright: ignore[reportPrivateUsage]  # no public name
    name: str,
    help: str,
    run: Callable[[argparse.Namespace], int],
) -> argparse.ArgumentParser:
    """A verb that takes the puzzle (its number or slug) first."""
    parser = verbs.add_parser(name, help=help)
    parser.add_argument("puzzle")
    parser.set_defaults(func=run)
    return parser


def _puzzle(args: argparse.Namespace) -> catalog.Puzzle:
    try:
        return catalog.get(args.puzzle)
    except KeyError as err:
        raise SystemExit(str(err.args[0])) from None


def _app(args: argparse.Namespace) -> int:
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print("tilescope puzzles: the app needs a terminal; `tilescope puzzles list` prints them", file=sys.stderr)
        return 2
    require_extra("puzzles", "puzzles")  # the app checks files: TileLang and torch, in this interpreter
    from tilescope.puzzles.app import PuzzlesApp

    PuzzlesApp().run()
    return 0


def _list(args: argparse.Namespace) -> int:
    from tilescope.puzzles.progress import ProgressStore
    from tilescope.puzzles.workspace import learner_path

    store = ProgressStore()
    rows = []
    for p in catalog.puzzles():
        s = store.status(p.id)
        if args.json:
            path = learner_path(p)
            rows.append(
                {
                    "number": int(p.id),
                    "id": p.id,
                    "title": p.title,
                    "topic": p.topic,
                    "solved": s.solved,
                    "attempts": s.attempts,
                    "stars": s.best_stars,
                    "path": str(path) if path.exists() else None,
                    "summary": s.last_summary,
                }
            )
            continue
        mark = "✓" if s.solved else "·" if s.attempts else " "
        stars = "★" * s.best_stars if s.solved else ""
        print(f"{mark} {p.id} {p.title:<38} {stars:<3} {p.topic}")
    store.close()
    if args.json:
        print(json.dumps(rows, indent=2))
    return 0


def _show(args: argparse.Namespace) -> int:
    from tilescope.puzzles.progress import ProgressStore
    from tilescope.puzzles.workspace import learner_path

    p = _puzzle(args)
    store = ProgressStore()
    s = store.status(p.id)
    store.close()
    print(p.statement().rstrip())
    from tilescope.puzzles.render import target_words

    print(f"\nTarget: {target_words(p.perf)} at " + " ".join(f"{k}={v}" for k, v in p.perf.args.items()))
    print(f"Your file: {learner_path(p)}  ·  attempts {s.attempts}  ·  hints {s.hints_shown}/{len(p.hints)}")
    return 0


def _start(args: argparse.Namespace) -> int:
    from tilescope.puzzles.workspace import learner_path, start

    p = _puzzle(args)
    existed = learner_path(p).exists()
    path = start(p)
    print(f"{p.id} {p.title}: {'your file is kept' if existed else 'your file is ready'}: {path}")
    print(p.statement().strip().splitlines()[0].lstrip("# "))
    print(f"Edit it, then `tilescope puzzles check {p.id}`; `tilescope puzzles show {p.id}` for the whole statement,")
    print(f"`tilescope puzzles hint {p.id}` for a hint ({len(p.hints)} available).")
    return 0


def _own_process() -> bool:
    """Whether this process is the ``tilescope`` command (its console script or ``python -m tilescope``), not a
    program that called ``main()``."""
    from pathlib import Path

    entry = Path(sys.argv[0])
    return entry.name == "tilescope" or (entry.name == "__main__.py" and entry.parent.name == "tilescope")


def _check(args: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    from tilescope.puzzles.session import CheckOptions
    from tilescope.puzzles.workspace import learner_path

    p = _puzzle(args)
    require_extra("puzzles", "puzzles check")  # the grader's children run in this interpreter
    path = Path(args.file) if args.file else learner_path(p)
    if not path.exists():
        print(f"{path} does not exist; `tilescope puzzles start {p.id}` creates it", file=sys.stderr)
        return 2
    options = CheckOptions(
        device="cpu" if args.cpu else None,
        perf=not args.no_perf,
        seed=args.seed,
        sanitize=args.sanitize,
        timeout_s=args.timeout,
    )
    if args.service is True or (args.service is None and not args.cpu and local_gpu() is not None):
        from tilescope.puzzles import service

        try:
            report = service.check(p.id, str(path), options)
        except RuntimeError as err:
            print(f"tilescope puzzles check: {err}", file=sys.stderr)
            return 2
    else:
        from tilescope.puzzles.isolated import IsolatedGrader

        # The helper processes start now, so that their imports overlap this process's own.
        with IsolatedGrader(keep_spare=False, cpu_only=args.cpu) as grader:
            report = grader.check(p.id, path, options)
    from tilescope.core.model import to_json
    from tilescope.puzzles.progress import ProgressStore
    from tilescope.puzzles.render import report_lines
    from tilescope.puzzles.workspace import is_solution_copy

    copied = is_solution_copy(p, path)
    store = ProgressStore()
    store.record(report, counts=not copied)
    store.close()
    if args.json:
        print(json.dumps(to_json(report), indent=1))
    else:
        print("\n".join(report_lines(report, f"{p.id} {p.title}")))
    if copied and report.passed:
        print("This is the reference solution, so the puzzle is not marked solved.", file=sys.stderr)
    code = 0 if report.passed else 1
    if _own_process():
        # Everything is written and closed (progress, helpers, buffers). The interpreter's teardown of torch
        # takes 1.5-3 s on a busy machine and does nothing a check needs.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def _hint(args: argparse.Namespace) -> int:
    from tilescope.puzzles.progress import ProgressStore

    p = _puzzle(args)
    store = ProgressStore()
    shown = store.unlock_hint(p.id, len(p.hints))
    store.close()
    for i, text in enumerate(p.hints[:shown], 1):
        print(f"Hint {i}/{len(p.hints)}: {text}")
    if shown == len(p.hints):
        print("That was the last hint; `tilescope puzzles reveal` shows the solution.")
    return 0


def _reveal(args: argparse.Namespace) -> int:
    from tilescope.puzzles.progress import ProgressStore
    from tilescope.puzzles.workspace import write_solution

    p = _puzzle(args)
    store = ProgressStore()
    solved = store.status(p.id).solved
    if not (solved or args.yes):
        if not sys.stdin.isatty():
            print("Not solved yet: pass --yes to see the solution anyway.", file=sys.stderr)
            store.close()
            return 2
        if input("Not solved yet. Show the solution? [y/N] ").strip().lower() != "y":
            store.close()
            return 1
    store.mark_revealed(p.id)
    store.close()
    print(p.solution_path.read_text())
    if args.write:
        print(f"saved to {write_solution(p)}", file=sys.stderr)
    return 0


def _reset(args: argparse.Namespace) -> int:
    from tilescope.puzzles.workspace import reset

    path, saved = reset(_puzzle(args))
    if saved:
        print(f"{path} restored from the starter; your version is in {saved}")
    else:
        print(f"{path} created from the starter")
    return 0


def _serve(args: argparse.Namespace) -> int:
    from tilescope.core.environment import EXTRAS

    postgresql = (args.db or "").startswith("postgresql")
    store = ("sqlalchemy", "alembic", "psycopg") if postgresql else ("sqlalchemy", "alembic")
    served = tuple(module for module, _ in EXTRAS["server"] if postgresql or module != "psycopg")
    # Issuing or revoking a token needs the store alone; serving needs the page, the queue and the graders'
    # TileLang and torch.
    tokens_only = args.add_learner is not None or args.revoke_learner is not None
    require_extra("server", "puzzles serve", only=store if tokens_only else served)
    from tilescope.puzzles.server.main import database_url, serve

    try:
        url = database_url(args.db, args.db_file)
    except OSError as err:
        print(f"tilescope puzzles serve: the --db-file cannot be read ({err})", file=sys.stderr)
        return 2
    return serve(
        args.ray,
        url,
        args.host,
        args.port,
        args.add_learner,
        args.max_kb * 1024,
        args.per_minute,
        args.cpu_slots,
        revoke_learner=args.revoke_learner,
        token_days=args.token_days,
        budget_s=args.budget,
    )


def _submit(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tilescope.puzzles.server.client import submit

    return submit(args.puzzle, Path(args.file), args.server, args.token, args.json, args.wait)
