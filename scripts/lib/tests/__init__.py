"""Unit tests of scripts/lib's Python (the deployment checks' logic), run by scripts/lint.sh:

  python -m unittest discover -s scripts/lib/tests -t scripts/lib

They need PyYAML and promql-parser (the lint venv has both); nothing here starts helm, node or a network service
other than a loopback HTTP server of the tests' own.
"""
