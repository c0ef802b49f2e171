"""``python -m rlmeta``: decode a record value given in hex to its JSON form, or encode one back.

    python -m rlmeta decode 0100...        prints {"apiKey": ..., "version": ..., "record": {...}}
    python -m rlmeta encode '{"apiKey": ...}'   prints the value's hex ("-" reads stdin)

Exit status: 0, 1 for an rlmeta error (printed to stderr), 2 for bad usage.
"""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from . import RlmetaError, _native


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rlmeta", description="__remote_log_metadata record values")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("decode", help="record value hex -> JSON").add_argument("hex", help='value bytes in hex, or "-" for stdin')
    sub.add_parser("encode", help="JSON -> record value hex").add_argument("json", help='{"apiKey", "version", "record"}, or "-" for stdin')
    args = parser.parse_args(argv)
    try:
        if args.command == "decode":
            text = sys.stdin.read() if args.hex == "-" else args.hex
            try:
                value = bytes.fromhex(text.strip())
            except ValueError as e:
                parser.error(f"not hex: {e}")
            print(_native.decode_value_json(value))
        else:
            text = sys.stdin.read() if args.json == "-" else args.json
            print(_native.encode_value_json(text).hex())
    except RlmetaError as e:
        print(f"rlmeta: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
