"""How a process that runs user code is started, sealed and held: the supervisor, Landlock, the
command lines that keep a working directory from shadowing a module, reply framing, private files.

Runs on the host, and its ``supervise`` and ``landlock`` also run as a script between ``fork`` and
``exec`` of the sealed child: standard library only, no import of any other room, no TileLang.
"""
