"""Regenerates ``src/vpx_client/models.py`` from the service's checked-in OpenAPI document.

    python clients/python/scripts/generate_models.py            # rewrite models.py
    python clients/python/scripts/generate_models.py --check    # exit 1 if models.py is out of date

The generator's version and options are pinned here: the same document always gives the same file,
so ``tests/test_models_drift.py`` can regenerate into a temporary file and compare.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

GENERATOR = "datamodel-code-generator"
GENERATOR_VERSION = "0.89.0"

CLIENT_ROOT = Path(__file__).resolve().parents[1]
DOCUMENT = CLIENT_ROOT.parents[1] / "openapi.json"
MODELS = CLIENT_ROOT / "src" / "vpx_client" / "models.py"

HEADER = (
    "# Generated from the service's openapi.json by clients/python/scripts/generate_models.py\n"
    f"# ({GENERATOR} {GENERATOR_VERSION}). Do not edit: regenerate.\n"
    "# ruff: noqa"
)

OPTIONS = [
    "--input-file-type", "openapi",
    "--output-model-type", "pydantic_v2.BaseModel",
    "--target-python-version", "3.11",
    # Every model derives from ApiModel: unknown response fields are kept (a newer server may add
    # some), and each result carries its response's metadata (rate limit, credits, request id).
    "--base-class", "vpx_client._meta.ApiModel",
    "--use-annotated",
    "--field-constraints",
    "--use-standard-collections",
    "--use-union-operator",
    "--use-double-quotes",
    "--enum-field-as-literal", "all",
    "--collapse-root-models",
    "--use-type-alias",
    "--reuse-model",
    "--use-schema-description",
    # Credits are exact decimals (D11): every JSON number without a format becomes a Decimal.
    "--type-mappings", "number+default=decimal",
    "--disable-timestamp",
    "--formatters", "builtin",
    "--custom-file-header", HEADER,
]  # fmt: skip


def installed_version() -> str | None:
    try:
        return metadata.version(GENERATOR)
    except metadata.PackageNotFoundError:
        return None


def generate(document: Path, output: Path) -> None:
    """Writes the models of ``document`` to ``output`` with the pinned generator and options.

    The generator runs in an empty temporary directory and ignores pyproject files: the formatting
    it chooses must not depend on where the output goes or where the command runs."""
    version = installed_version()
    if version != GENERATOR_VERSION:
        raise SystemExit(
            f"{GENERATOR}=={GENERATOR_VERSION} is needed (found {version or 'none'}): "
            f'pip install -e "./clients/python[dev]"'
        )
    with tempfile.TemporaryDirectory() as scratch:
        written = Path(scratch) / "models.py"
        command = [sys.executable, "-m", "datamodel_code_generator", "--input", str(document.resolve())]
        command += ["--output", str(written), "--ignore-pyproject", *OPTIONS]
        subprocess.run(command, check=True, capture_output=True, text=True, cwd=scratch)
        output.write_text(written.read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 when models.py is stale")
    parser.add_argument("--document", type=Path, default=DOCUMENT)
    args = parser.parse_args()
    if not args.check:
        generate(args.document, MODELS)
        print(f"wrote {MODELS}")
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        fresh = Path(scratch) / "models.py"
        generate(args.document, fresh)
        if fresh.read_text() != MODELS.read_text():
            print(f"{MODELS} is stale: run {Path(__file__).name}", file=sys.stderr)
            return 1
    print("models.py matches openapi.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
