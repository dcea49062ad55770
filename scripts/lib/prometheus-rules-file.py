"""A rendered PrometheusRule's spec (its rule groups) as a Prometheus rules file, for promtool.

prometheus-rules-file.py PROMETHEUSRULE_YAML RULES_YAML
"""

import sys

import yaml


def main(rendering, rules):
    with open(rendering) as f:
        spec = yaml.safe_load(f)["spec"]
    with open(rules, "w") as f:
        yaml.safe_dump(spec, f, sort_keys=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
