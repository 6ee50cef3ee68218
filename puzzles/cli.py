"""``tilescope puzzles``: the app with no verb, or list / show / start / check / hint / reveal / reset."""

from __future__ import annotations

import argparse
import json
import sys

from tilescope.puzzles import catalog
from tilescope.puzzles.session import DEFAULT_TIMEOUT_S


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("puzzles", help="graded TileLang puzzles (an app, or verbs from the shell)")
    parser.set_defaults(func=_app)
    verbs = parser.add_subparsers(dest="verb", metavar="VERB")

    p = verbs.add_parser("list", help="every puzzle with your progress")
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.set_defaults(func=_list)
    p = verbs.add_parser("show", help="a puzzle's statement, target and your progress")
    p.add_argument("puzzle")
    p.set_defaults(func=_show)
    p = verbs.add_parser("start", help="create your file for a puzzle from its starter (kept if it exists)")
    p.add_argument("puzzle")
    p.set_defaults(func=_start)
    p = verbs.add_parser("check", help="compile and grade your file (or FILE)")
    p.add_argument("puzzle")
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
    p.set_defaults(func=_check)
    p = verbs.add_parser("hint", help="unlock the next hint")
    p.add_argument("puzzle")
    p.set_defaults(func=_hint)
    p = verbs.add_parser("reveal", help="print the reference solution (asks first unless solved)")
    p.add_argument("puzzle")
    p.add_argument("--yes", action="store_true", help="reveal without asking")
    p.add_argument("--write", action="store_true", help="also save it next to your file")
    p.set_defaults(func=_reveal)
    p = verbs.add_parser("reset", help="restore the starter file (your file is backed up first)")
    p.add_argument("puzzle")
    p.set_defaults(func=_reset)


def _puzzle(args: argparse.Namespace) -> catalog.Puzzle:
    try:
        return catalog.get(args.puzzle)
    except KeyError as err:
        raise SystemExit(str(err.args[0])) from None


def _app(args: argparse.Namespace) -> int:
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
    from tilescope.puzzles.workspace import start

    print(start(_puzzle(args)))
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

    from tilescope.puzzles.workspace import learner_path

    p = _puzzle(args)
    path = Path(args.file) if args.file else learner_path(p)
    if not path.exists():
        print(f"{path} does not exist; `tilescope puzzles start {p.id}` creates it", file=sys.stderr)
        return 2
    options = {
        "device": "cpu" if args.cpu else None,
        "perf": not args.no_perf,
        "seed": args.seed,
        "sanitize": args.sanitize,
        "timeout_s": args.timeout,
    }
    if args.service is True or (args.service is None and not args.cpu and os.path.exists("/dev/nvidiactl")):
        from tilescope.puzzles import service

        try:
            report = service.check(p.id, str(path), **options)
        except RuntimeError as err:
            print(f"tilescope puzzles check: {err}", file=sys.stderr)
            return 2
    else:
        from tilescope.puzzles.isolated import IsolatedGrader

        # The helper processes start now, so that their imports overlap this process's own.
        with IsolatedGrader(keep_spare=False, cpu_only=args.cpu) as grader:
            report = grader.grade(p.id, path, **options)
    from tilescope.core.model import to_json
    from tilescope.puzzles.progress import ProgressStore
    from tilescope.puzzles.render import report_lines

    store = ProgressStore()
    store.record(report)
    store.close()
    if args.json:
        print(json.dumps(to_json(report), indent=1))
    else:
        print("\n".join(report_lines(report, f"{p.id} {p.title}")))
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
