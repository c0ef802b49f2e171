import json
from pathlib import Path

import pytest

VECTORS = Path(__file__).resolve().parents[2] / "tests" / "vectors"


def _cases(stem):
    return json.loads((VECTORS / f"{stem}.json").read_text(encoding="utf-8"))["cases"]


@pytest.fixture(scope="session")
def value_cases():
    """The repository's value vectors, version 0 then version 1, each with its raw bytes."""
    cases = [c for stem in ("v0", "v1", "v0-unknown-tags") for c in _cases(stem)]
    return [dict(c, raw=bytes.fromhex(c["hex"])) for c in cases]


@pytest.fixture(scope="session")
def first_of(value_cases):
    """first_of(api_key, version): the raw bytes of the first value vector of that kind."""

    def pick(api_key, version):
        return next(c["raw"] for c in value_cases if c["apiKey"] == api_key and c["version"] == version)

    return pick


@pytest.fixture(scope="module")
def broker():
    """A real Kafka 4.4.0 broker (kafka_broker.py) with three metadata partitions, one per test
    module that asks for it; stopped and removed after the module, whatever happened."""
    from kafka_broker import Broker

    b = Broker(metadata_partitions=3)
    try:
        b.start()
        yield b
    finally:
        b.cleanup()
