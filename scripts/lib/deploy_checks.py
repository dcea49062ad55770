"""What the deployment checks (scripts/check-deploy.sh's Python, in this folder) share.

  load_documents(path)   the objects of a chart rendering or kustomize build (multi-document YAML), empty ones left out
  object_name(o)         KIND/NAME, as the messages name an object
  secret_data(secret)    a Secret's data, base64-decoded
  Checklist              checks collected as they run; report() lists the failed ones and counts them
  Outcomes               checks printed as they run ("ok  WHAT" / "FAIL WHAT"); finish() counts the failures

A script run as `python scripts/lib/NAME.py` has this folder on sys.path, so `import deploy_checks` finds this file.
"""

import base64

import yaml


def load_documents(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def object_name(o):
    return f"{o.get('kind')}/{(o.get('metadata') or {}).get('name')}"


def secret_data(secret):
    return {k: base64.b64decode(v).decode() for k, v in (secret.get("data") or {}).items()}


class Checklist:
    """check(condition, message) records one check; report(label) prints "FAILED: message" for each failed one, then
    "LABEL: N checks, N failed", and returns the exit status: 1 when one failed or none was made."""

    def __init__(self):
        self.checked = []
        self.errors = []

    def check(self, condition, message):
        self.checked.append(message)
        if not condition:
            self.errors.append(message)

    def report(self, label):
        for e in self.errors:
            print("FAILED: " + e)
        print(f"{label}: {len(self.checked)} checks, {len(self.errors)} failed")
        return 1 if self.errors or not self.checked else 0


class Outcomes:
    """record(ok, what) prints "ok  WHAT" or "FAIL WHAT" at once; finish() prints "N failure(s)" and returns the exit
    status: 1 when one failed."""

    def __init__(self):
        self.failures = []

    def record(self, ok, what):
        print(("ok  " if ok else "FAIL") + " " + what)
        if not ok:
            self.failures.append(what)
        return ok

    def finish(self):
        print(f"{len(self.failures)} failure(s)")
        return 1 if self.failures else 0
