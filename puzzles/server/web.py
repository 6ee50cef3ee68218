"""The server's HTTP side: the learners' API (bearer tokens) and the server-rendered page (a token cookie).

No route runs a learner's code: a submission is stored and queued, and the dispatcher sends it to a
grading slot on the cluster. A learner sees their own submissions, code and reports only; asking
for another's answers 404, as for one that does not exist. The queue and the leaderboards (names and
best times) are for the whole class.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.templating import Jinja2Templates
from tilescope.puzzles import catalog
from tilescope.puzzles.server import views
from tilescope.puzzles.server.db import Learner
from tilescope.puzzles.server.store import LimitError, Store

COOKIE = "tilescope_token"
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


class ReportResponse(JSONResponse):
    """JSON as ``puzzles check --json`` writes it: a report's NaN and infinities (a value the kernel got) are
    kept as Python's ``json`` writes and reads them, not refused."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode()


def _bearer(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    return header[7:].strip() if header.lower().startswith("bearer ") else None


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def create_app(store: Store, grading: Callable[[], dict[str, Any]], wake: Any = None) -> Starlette:
    """The app over ``store``; ``grading()`` says how the cluster grades now (shown on the page); ``wake`` (an
    Event) is set on every new submission so an idle slot claims it at once."""
    templates = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))

    def api_learner(request: Request) -> Learner | None:
        return store.learner(_bearer(request))

    async def submit(request: Request) -> Response:
        learner = await run_in_threadpool(api_learner, request)
        if learner is None:
            return _error(401, "a valid token is needed (--token or TILESCOPE_TOKEN)")
        limit = store.max_bytes * 6 + 4096  # the file's bytes as JSON, escaped at worst, and the other fields
        if int(request.headers.get("content-length") or 0) > limit:
            return _error(413, f"this server takes files of at most {store.max_bytes} bytes")
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                return _error(413, f"this server takes files of at most {store.max_bytes} bytes")
        try:
            data = json.loads(body)
            source, filename = data["source"], str(data.get("filename") or "submission.py")
            if not isinstance(source, str):
                raise TypeError("the source is no string")
            wanted = str(data["puzzle"])
            key = data.get("client_key")
            if key is not None and not isinstance(key, str):
                raise TypeError("the client key is no string")
        except (ValueError, TypeError, KeyError) as err:
            return _error(400, f"a submission is JSON with puzzle, filename and source ({err})")
        try:
            puzzle = catalog.get(wanted).id
        except KeyError:
            return _error(404, f"no puzzle {wanted!r}")
        try:
            number = await run_in_threadpool(store.submit, learner, puzzle, filename, source, None, key)
        except LimitError as err:
            return _error(err.status, str(err))
        if wake is not None:
            wake.set()
        ahead = await run_in_threadpool(store.ahead_of, number)
        return JSONResponse({"id": number, "puzzle": puzzle, "state": "queued", "ahead": ahead}, status_code=201)

    def api_submission(request: Request) -> Response:
        learner = api_learner(request)
        if learner is None:
            return _error(401, "a valid token is needed")
        found = store.submission(learner, int(request.path_params["id"]))
        if found is None:
            return _error(404, "no such submission of yours")
        sub, verdict = found
        return ReportResponse(views.submission_json(sub, verdict, store.ahead_of(sub.id) if verdict is None else None))

    def api_submissions(request: Request) -> Response:
        learner = api_learner(request)
        if learner is None:
            return _error(401, "a valid token is needed")
        return ReportResponse([views.submission_json(s, v) for s, v in store.own(learner)])

    def api_queue(request: Request) -> Response:
        learner = api_learner(request)
        mine = learner.id if learner is not None else None
        rows = [
            {"id": s.id, "puzzle": s.puzzle, "state": s.state, "yours": s.learner_id == mine} for s, _ in store.queue()
        ]
        return JSONResponse({"grading": grading(), "counts": store.counts(), "queue": rows})

    def api_leaderboard(request: Request) -> Response:
        try:
            puzzle = catalog.get(str(request.path_params["puzzle"])).id
        except KeyError:
            return _error(404, "no such puzzle")
        return JSONResponse({"puzzle": puzzle, "entries": store.leaderboard(puzzle)})

    def page_learner(request: Request) -> Learner | None:
        return store.learner(request.cookies.get(COOKIE))

    def page(request: Request, template: str, status: int = 200, **context: Any) -> Response:
        response = templates.TemplateResponse(
            request, template, {"grading": grading(), "views": views, **context}, status_code=status
        )
        response.headers.update(HEADERS)
        return response

    def index(request: Request) -> Response:
        learner = page_learner(request)
        boards = []
        for puzzle in store.puzzles_with_passes():
            p = catalog.get(puzzle)
            boards.append({"puzzle": p, "entries": store.leaderboard(puzzle)})
        return page(
            request,
            "index.html",
            learner=learner,
            own=store.own(learner) if learner else [],
            queue=store.queue(),
            counts=store.counts(),
            boards=boards,
            titles={p.id: p.title for p in catalog.puzzles()},
            failed_login=request.query_params.get("login") == "failed",
        )

    def submission_page(request: Request) -> Response:
        learner = page_learner(request)
        found = store.submission(learner, int(request.path_params["id"])) if learner else None
        if found is None:
            return page(request, "missing.html", status=404, learner=learner)
        sub, verdict = found
        title = f"{sub.puzzle} {catalog.get(sub.puzzle).title}"
        lines = views.report_lines(verdict, title) if verdict else []
        ahead = store.ahead_of(sub.id) if verdict is None else None
        return page(request, "submission.html", learner=learner, sub=sub, verdict=verdict, lines=lines, ahead=ahead)

    async def login(request: Request) -> Response:
        form = await request.form()
        token = str(form.get("token") or "").strip()
        learner = await run_in_threadpool(store.learner, token)
        if learner is None:
            return RedirectResponse("/?login=failed", status_code=303)
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(COOKIE, token, httponly=True, samesite="strict", max_age=30 * 24 * 3600)
        return response

    def logout(request: Request) -> Response:
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(COOKIE)
        return response

    def health(request: Request) -> Response:
        return JSONResponse({"ok": True, "grading": grading()})

    routes = [
        Route("/", index),
        Route("/submissions/{id:int}", submission_page),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/api/health", health),
        Route("/api/submissions", submit, methods=["POST"]),
        Route("/api/submissions", api_submissions),
        Route("/api/submissions/{id:int}", api_submission),
        Route("/api/queue", api_queue),
        Route("/api/leaderboard/{puzzle}", api_leaderboard),
    ]
    return Starlette(routes=routes)
