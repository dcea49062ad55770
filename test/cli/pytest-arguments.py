"""Reads pytest arguments files (`pytest @FILE`) with pytest's own argument parser, many in one process, for
test/cli/rerun-file-property.test.ts. Run with the python of the client venv (scripts/client-venv.sh):

    python pytest-arguments.py < plan.json

The plan is a JSON list of {"file": path, "latin1": bool}. Each file is parsed as `pytest @file` is: by the parser of
a pytest configuration with its plugins and every installed plugin's options (pytest-monitor's, xdist's), through
argparse's own reading of the file (one argument a line, `str.splitlines()`, `@x` read as another file). With
"latin1", the file is first read as a Python whose locale is ISO 8859-1 reads it (argparse opens the file in the
locale's encoding before Python 3.12, the file system's since: not UTF-8 under such a locale).

Prints one JSON list on stdout, an entry a file: {"arguments": [...], "keyword": ..., "file_or_dir": [...],
"options": {dest: value}, "compiles": bool} — the arguments argparse reads from the file, what pytest's parser makes
of them (`options`: every other option whose value is not its default), and whether pytest's `-k` expression language
takes the keyword — or {"error": "..."} when pytest refuses the arguments.
"""

import json
import os
import sys
import tempfile

from _pytest.config import UsageError, get_config
from _pytest.mark import _parse_expression


def compiles(keyword: str | None) -> bool:
    """Whether pytest takes `keyword` as a -k expression, read as deselect_by_keyword reads it."""
    try:
        _parse_expression((keyword or "").lstrip(), "Wrong expression passed to '-k'")
    except UsageError:
        return False
    return True


def main() -> None:
    plan = json.load(sys.stdin)
    config = get_config()
    config.pluginmanager.load_setuptools_entrypoints("pytest11")
    parser = config._parser
    defaults = vars(parser.parse([]))
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        for entry in plan:
            path = entry["file"]
            if entry["latin1"]:
                with open(path, "rb") as source:
                    text = source.read().decode("latin-1")
                path = os.path.join(scratch, "latin1.txt")
                with open(path, "w", encoding="utf-8", newline="") as copy:
                    copy.write(text)
            try:
                arguments = parser.optparser._read_args_from_files([f"@{path}"])
                parsed = vars(parser.parse([f"@{path}"]))
            except (UsageError, SystemExit) as error:
                results.append({"error": str(error)})
                continue
            except UnicodeDecodeError as error:
                results.append({"error": f"UnicodeDecodeError: {error}"})
                continue
            options = {
                dest: repr(value)
                for dest, value in parsed.items()
                if dest not in ("keyword", "file_or_dir") and value != defaults.get(dest)
            }
            keyword = parsed.get("keyword")
            results.append(
                {
                    "arguments": arguments,
                    "keyword": keyword,
                    "file_or_dir": parsed.get("file_or_dir"),
                    "options": options,
                    "compiles": compiles(keyword),
                }
            )
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
