#!/usr/bin/env python3
"""Validates sagerun reports against schema/report.schema.json (JSON Schema 2020-12, through
python3-jsonschema): validate_reports.py FILE... prints one line per invalid file with each error's
path, and exits 1 when any is invalid."""
import json
import os
import sys

import jsonschema

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(paths):
    with open(os.path.join(ROOT, "schema", "report.schema.json")) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    bad = 0
    for path in paths:
        with open(path) as f:
            report = json.load(f)
        errors = sorted(validator.iter_errors(report), key=lambda e: list(e.absolute_path))
        for e in errors[:10]:
            where = "/".join(str(p) for p in e.absolute_path) or "(root)"
            print(f"{path}: {where}: {e.message[:300]}")
        bad += bool(errors)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
