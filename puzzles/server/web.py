"""The server's HTTP side: the learners' API (bearer tokens) and the server-rendered page (a token cookie).

No route runs a learner's code: a submission is stored and queued, and the dispatcher sends it to a
grading slot on the cluster. A learner sees their own submissions, code and reports only; asking
for another's answers 404, as for one that does not exist. The queue and the leaderboards (names and
best times) are for the whole class.

Every bad request is answered 4xx with a message, never a traceback. A POST that a browser may send
with the learner's cookie (signing in or out) must come from this server's own page (its ``Origin``);
the cookie is ``HttpOnly``, ``SameSite=Strict``, and ``Secure`` when the page is served over TLS.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.templating import Jinja2Templates
from tilescope.puzzles import catalog
from tilescope.puzzles.server import views
from tilescope.puzzles.server.admission import LimitError, checked_text
from tilescope.puzzles.server.db import MAX_ID, Learner
from tilescope.puzzles.server.store import Store

COOKIE = "tilescope_token"
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}
"""``same-origin``, not ``no-referrer``: under ``no-referrer`` a browser sends ``Origin: null`` on the page's own
forms, and the sign-in form could not be told from another site's."""


class ReportResponse(JSONResponse):
    """JSON as ``puzzles check --json`` writes it: a report's NaN and infinities (a value the kernel got) are
    kept as Python's ``json`` writes and reads them, not refused."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode()


def _cookie_flags(request: Request) -> dict[str, Any]:
    """The token cookie's flags: script cannot read it, no other site's request carries it, and a page served
    over TLS (directly, or through a proxy that says so) never sends it in the clear."""
    return {"httponly": True, "samesite": "strict", "secure": request.url.scheme == "https"}


def _bearer(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    return header[7:].strip() if header.lower().startswith("bearer ") else None


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _puzzle(wanted: str) -> str | None:
    """The puzzle's id, or None: ``catalog.get`` reads digits as a number, and some digits are no ``int``."""
    try:
        return catalog.get(wanted).id
    except (KeyError, ValueError):
        return None


def _number(request: Request) -> int | None:
    """The submission id in the path, or None when no submission can have it (a 2**63 would fail in the driver)."""
    number = int(request.path_params["id"])
    return number if 0 < number <= MAX_ID else None


def _same_origin(request: Request) -> bool:
    """Whether a POST comes from this server's own page: its ``Origin`` (or, lacking one, its ``Referer``) names
    this host. A browser always sends one of them on a form's POST; another site's page cannot forge it. Only the
    host is compared: behind a TLS proxy this server may see ``http`` where the browser saw ``https``."""
    sent = request.headers.get("origin") or request.headers.get("referer")
    if not sent or sent == "null":
        return False
    return urlsplit(sent).netloc.lower() == request.headers.get("host", "").lower()


def _parse_submission(body: bytes) -> tuple[str, str, str, str | None]:
    """The puzzle, file name, source and client key of a submission's JSON; ``ValueError`` saying what is wrong."""
    try:
        data = json.loads(body)
    except RecursionError:
        raise ValueError("the JSON is nested too deeply") from None
    except UnicodeDecodeError:
        raise ValueError("the body is not UTF-8") from None
    if not isinstance(data, dict):
        raise ValueError("the JSON is no object")
    fields = cast(dict[str, Any], data)
    source, puzzle = fields.get("source"), fields.get("puzzle")
    filename, key = fields.get("filename") or "submission.py", fields.get("client_key")
    if not isinstance(source, str):
        raise ValueError("the source is no string")
    if not isinstance(puzzle, str | int) or isinstance(puzzle, bool):
        raise ValueError("the puzzle is no number or name")
    if not isinstance(filename, str):
        raise ValueError("the file name is no string")
    if key is not None and not isinstance(key, str):
        raise ValueError("the client key is no string")
    try:
        return checked_text("puzzle", str(puzzle)), filename, source, key
    except LimitError as err:
        raise ValueError(str(err)) from None


class _Api:
    """The learners' API: a bearer token names the learner; answers are JSON."""

    def __init__(self, store: Store, grading: Callable[[], dict[str, Any]], wake: Any) -> None:
        self.store = store
        self.grading = grading
        self.wake = wake

    def learner(self, request: Request) -> Learner | None:
        return self.store.learner(_bearer(request))

    async def submit(self, request: Request) -> Response:
        store = self.store
        if "origin" in request.headers and not _same_origin(request):  # the shell sends none; a page must be ours
            return _error(403, "a submission from another site's page is refused")
        learner = await run_in_threadpool(self.learner, request)
        if learner is None:
            return _error(401, "a valid token is needed (--token or TILESCOPE_TOKEN)")
        limit = store.max_bytes * 6 + 4096  # the file's bytes as JSON, escaped at worst, and the other fields
        length = request.headers.get("content-length") or "0"
        if not length.isascii() or not length.isdigit():
            return _error(400, "the Content-Length is no number")
        if len(length) > 12 or int(length) > limit:
            return _error(413, f"this server takes files of at most {store.max_bytes} bytes")
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                return _error(413, f"this server takes files of at most {store.max_bytes} bytes")
        try:
            wanted, filename, source, key = _parse_submission(bytes(body))
        except ValueError as err:
            return _error(400, f"a submission is a JSON object with puzzle, filename and source ({err})")
        puzzle = _puzzle(wanted)
        if puzzle is None:
            return _error(404, f"no puzzle {wanted[:20]!r}")
        try:
            number = await run_in_threadpool(store.submit, learner, puzzle, filename, source, None, key)
        except LimitError as err:
            return _error(err.status, str(err))
        if self.wake is not None:
            self.wake.set()
        ahead = await run_in_threadpool(store.ahead_of, number)
        return JSONResponse({"id": number, "puzzle": puzzle, "state": "queued", "ahead": ahead}, status_code=201)

    def submission(self, request: Request) -> Response:
        learner = self.learner(request)
        if learner is None:
            return _error(401, "a valid token is needed")
        number = _number(request)
        found = self.store.submission(learner, number) if number is not None else None
        if found is None:
            return _error(404, "no such submission of yours")
        sub, verdict = found
        ahead = self.store.ahead_of(sub.id) if verdict is None else None
        return ReportResponse(views.submission_json(sub, verdict, ahead))

    def submissions(self, request: Request) -> Response:
        learner = self.learner(request)
        if learner is None:
            return _error(401, "a valid token is needed")
        return ReportResponse([views.submission_json(s, v) for s, v in self.store.own(learner)])

    def queue(self, request: Request) -> Response:
        learner = self.learner(request)
        mine = learner.id if learner is not None else None
        rows = [
            {"id": s.id, "puzzle": s.puzzle, "state": s.state, "yours": s.learner_id == mine}
            for s, _ in self.store.queue()
        ]
        return JSONResponse({"grading": self.grading(), "counts": self.store.counts(), "queue": rows})

    def leaderboard(self, request: Request) -> Response:
        puzzle = _puzzle(str(request.path_params["puzzle"]))
        if puzzle is None:
            return _error(404, "no such puzzle")
        return JSONResponse({"puzzle": puzzle, "entries": self.store.leaderboard(puzzle)})

    def health(self, request: Request) -> Response:
        return JSONResponse({"ok": True, "grading": self.grading()})


class _Pages:
    """The server-rendered page: the token cookie names the learner."""

    def __init__(self, store: Store, grading: Callable[[], dict[str, Any]]) -> None:
        self.store = store
        self.grading = grading
        self.templates = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))

    def learner(self, request: Request) -> Learner | None:
        return self.store.learner(request.cookies.get(COOKIE))

    def page(self, request: Request, template: str, status: int = 200, **context: Any) -> Response:
        response = self.templates.TemplateResponse(
            request, template, {"grading": self.grading(), "views": views, **context}, status_code=status
        )
        response.headers.update(HEADERS)
        return response

    def index(self, request: Request) -> Response:
        store = self.store
        learner = self.learner(request)
        boards = []
        for puzzle in store.puzzles_with_passes():
            p = catalog.get(puzzle)
            boards.append({"puzzle": p, "entries": store.leaderboard(puzzle)})
        return self.page(
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

    def submission(self, request: Request) -> Response:
        learner = self.learner(request)
        number = _number(request)
        found = self.store.submission(learner, number) if learner and number is not None else None
        if found is None:
            return self.page(request, "missing.html", status=404, learner=learner)
        sub, verdict = found
        title = f"{sub.puzzle} {catalog.get(sub.puzzle).title}"
        lines = views.report_lines(verdict, title) if verdict else []
        ahead = self.store.ahead_of(sub.id) if verdict is None else None
        return self.page(
            request, "submission.html", learner=learner, sub=sub, verdict=verdict, lines=lines, ahead=ahead
        )

    async def login(self, request: Request) -> Response:
        form = await request.form()
        token = str(form.get("token") or "").strip()
        learner = await run_in_threadpool(self.store.learner, token)
        if learner is None:
            return RedirectResponse("/?login=failed", status_code=303)
        response = RedirectResponse("/", status_code=303)
        age = min(30 * 24 * 3600, int(learner.token_expires_at - time.time()))
        response.set_cookie(COOKIE, token, max_age=age, **_cookie_flags(request))
        return response

    def logout(self, request: Request) -> Response:
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(COOKIE, **_cookie_flags(request))
        return response


def _same_origin_only(handler: Callable[[Request], Awaitable[Response] | Response]) -> Callable[..., Any]:
    """``handler`` for a POST that acts on the learner's cookie: refused (403) from another site's page, so that
    no page elsewhere can sign a learner in as someone else (login CSRF) or out."""

    async def checked(request: Request) -> Response:
        if not _same_origin(request):
            return _error(403, "this form must be sent from this server's own page")
        answer = handler(request)
        return await answer if isinstance(answer, Awaitable) else answer

    return checked


def create_app(store: Store, grading: Callable[[], dict[str, Any]], wake: Any = None) -> Starlette:
    """The app over ``store``; ``grading()`` says how the cluster grades now (shown on the page); ``wake`` (an
    Event) is set on every new submission so an idle slot claims it at once."""
    api, pages = _Api(store, grading, wake), _Pages(store, grading)
    routes = [
        Route("/", pages.index),
        Route("/submissions/{id:int}", pages.submission),
        Route("/login", _same_origin_only(pages.login), methods=["POST"]),
        Route("/logout", _same_origin_only(pages.logout), methods=["POST"]),
        Route("/api/health", api.health),
        Route("/api/submissions", api.submit, methods=["POST"]),
        Route("/api/submissions", api.submissions),
        Route("/api/submissions/{id:int}", api.submission),
        Route("/api/queue", api.queue),
        Route("/api/leaderboard/{puzzle}", api.leaderboard),
    ]
    return Starlette(routes=routes)
