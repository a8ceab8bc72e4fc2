#!/usr/bin/env python3
"""PostToolUse hook for Write and Edit (Claude Code's hook protocol).

Formats the JSON file the tool just wrote: two-space indent, a final
newline. Other files are left alone. A file that is not valid JSON is
reported on stderr with exit 2, so the model learns of it beside the result.
"""
import json
import os
import sys


def main() -> int:
    data = json.load(sys.stdin)
    path = data.get("tool_input", {}).get("file_path", "")
    if not path.endswith(".json"):
        return 0
    if not os.path.isabs(path):
        path = os.path.join(data.get("cwd") or os.environ.get("CLAUDE_PROJECT_DIR", "."), path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        value = json.loads(text)
    except (OSError, json.JSONDecodeError) as e:
        print(f"{path} is not valid JSON: {e}", file=sys.stderr)
        return 2
    formatted = json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    if formatted != text:
        with open(path, "w", encoding="utf-8") as f:
            f.write(formatted)
    return 0


if __name__ == "__main__":
    sys.exit(main())
