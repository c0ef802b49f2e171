"""The generated tables (rlmeta/_tables.py, from the core by tools/tables) against the running core.

The generator's check (make tables-check) proves the committed file is what the core's tables
say; these prove the package uses them: the codes the native module reports carry the same
numbers and names, and the Python defaults are the core's presets.
"""

import dataclasses

import rlmeta
from rlmeta import OUTCOME_NAMES, OutcomeCode, Store, TopicConfig, _tables


def test_error_codes_are_the_native_modules():
    assert _tables.ERROR_CODES == rlmeta.error_codes()


def test_every_outcome_has_a_name_and_the_fatal_flag_of_the_core():
    assert len(OUTCOME_NAMES) == len(OutcomeCode) == len(_tables.OUTCOME_FATAL_TO_KAFKA)
    for code in OutcomeCode:
        assert OUTCOME_NAMES[code] == code.name.lower().replace("_", "-")
    assert OutcomeCode.REJECTED.name == "REJECTED"  # the code Python's string taxonomy lacked


def test_applied_carries_the_core_outcome_code():
    level_key, level_value = rlmeta.level_record(2)
    s = Store()
    tomb = s.apply(0, b"some-key", None)
    assert (tomb.code, tomb.code_name) == (OutcomeCode.TOMBSTONE, "tombstone")
    assert tomb.fatal_to_kafka == _tables.OUTCOME_FATAL_TO_KAFKA[tomb.code]
    lvl = s.apply(1, level_key, level_value)
    assert (lvl.code, lvl.code_name) == (OutcomeCode.LEVEL_2, "level-2")
    bad = s.apply(2, None, b"\x00\x01garbage")
    assert bad.code == OutcomeCode.UNDECODABLE and bad.error_code is not None


def test_python_defaults_are_the_core_presets():
    assert _tables.FEATURE_NAME == rlmeta.FEATURE_NAME == "remote.log.metadata.version"
    c = TopicConfig()
    assert {f.name: getattr(c, f.name) for f in dataclasses.fields(c) if f.name != "segment_records"} == _tables.LEVEL_PRESETS[2]
    v1 = TopicConfig.for_level(1)
    assert (v1.cleanup_policy, v1.retention_ms, v1.segment_ms) == ("compact,delete", rlmeta.DEFAULT_V1_RETENTION_MS, rlmeta.DEFAULT_V1_SEGMENT_MS)
    assert TopicConfig.for_level(0).cleanup_policy == "delete"
