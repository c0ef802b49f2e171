"""Seeds the fuzz corpora from the conformance vectors: every value hex and every key."""
import json
import pathlib
import sys

vectors, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for target in ("value", "key", "batch", "checkpoint", "json"):
    (out / target).mkdir(parents=True, exist_ok=True)
for f in sorted(vectors.glob("*.json")):
    for i, case in enumerate(json.loads(f.read_text()).get("cases", [])):
        if "hex" in case:
            (out / "value" / f"{f.stem}-{i}").write_bytes(bytes.fromhex(case["hex"]))
        if "record" in case and "apiKey" in case:
            doc = {"apiKey": case["apiKey"], "version": case["version"], "record": case["record"]}
            (out / "json" / f"{f.stem}-{i}").write_text(json.dumps(doc))
        if isinstance(case.get("key"), str):
            (out / "key" / f"{f.stem}-{i}").write_bytes(case["key"].encode())
        for j, ev in enumerate(case.get("events", [])):
            if "op" in ev:
                (out / "json" / f"{f.stem}-{i}-event-{j}").write_text(json.dumps(ev))
            if ev.get("value"):
                (out / "value" / f"{f.stem}-{i}-{ev.get('offset')}").write_bytes(bytes.fromhex(ev["value"]))
            if ev.get("key"):
                (out / "key" / f"{f.stem}-{i}-{ev.get('offset')}").write_bytes(ev["key"].encode())

# Segment and checkpoint files: the real broker's, and the crafted variants.
fixtures = vectors.parent / "fixtures"
for f in sorted(fixtures.rglob("*.log")):
    (out / "batch" / ("-".join(f.parts[-3:]))).write_bytes(f.read_bytes())
for f in sorted(fixtures.rglob("*.checkpoint")):
    (out / "checkpoint" / f.name).write_bytes(f.read_bytes())
