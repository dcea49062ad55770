"""One line naming the stack of bench/suite/original-server.sh's venv: python, monitor-server-api, flask, werkzeug,
flask-restx, sqlalchemy and the WSGI server.

  original-server-versions.py WSGI        # WSGI: uwsgi or gunicorn, the server that runs it

Run with the venv's python (it reads the versions installed there).
"""

import importlib.metadata
import platform
import sys


def versions_line(version, python_version, wsgi):
    """The line, from VERSION (a package name -> its version), the PYTHON_VERSION and the WSGI server's name."""
    return (
        f"python {python_version}, monitor-server-api {version('monitor-server-api')}, flask {version('flask')}, "
        f"werkzeug {version('werkzeug')}, flask-restx {version('flask-restx')}, sqlalchemy {version('sqlalchemy')}, "
        f"{wsgi} {version(wsgi)} (4 workers)"
    )


if __name__ == "__main__":
    print(versions_line(importlib.metadata.version, platform.python_version(), sys.argv[1]))
