#!/usr/bin/env python3
"""PreToolUse hook for Bash (Claude Code's hook protocol).

Reads the hook input as JSON on stdin. When the command breaks a project
convention, prints the reasons on stderr and exits 2: the call is blocked
and the model reads the reasons. Exit 0 lets the call go on.
"""
import json
import re
import sys

# (pattern, reason): what this project wants instead.
RULES = [
    (r"^\s*grep\b(?!.*\|)", "Use 'rg' (ripgrep) instead of 'grep': it is faster and respects .gitignore"),
    (r"^\s*find\s+\S+\s+-name\b", "Use 'rg --files -g PATTERN' instead of 'find -name'"),
    (r"\bgit\s+push\b.*(--force|-f)\b", "Force-pushing is not allowed in this project"),
]


def main() -> int:
    try:
        data = json.load(sys.stdin)
    except json.JSONDecodeError as e:
        print(f"bash_validator: invalid hook input: {e}", file=sys.stderr)
        return 1  # a non-blocking error: the call goes on

    if data.get("tool_name") != "Bash":
        return 0
    command = data.get("tool_input", {}).get("command", "")
    problems = [reason for pattern, reason in RULES if re.search(pattern, command)]
    if problems:
        for p in problems:
            print(f"• {p}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
