#!/usr/bin/env bash
# Installs the official MCP Python SDK, pinned, into a virtual environment (default
# target/mcp-client), for the tests that drive `mem mcp` with it (tests/mcp_client.rs); prints
# the environment's python, the value of MEM_TEST_MCP_PYTHON. A second run installs nothing.
set -euo pipefail
MCP_VERSION=2.3.0
venv="${1:-target/mcp-client}"
if ! "$venv/bin/python" -c "import mcp, importlib.metadata as m; assert m.version('mcp') == '$MCP_VERSION'" \
  >/dev/null 2>&1; then
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check "mcp==$MCP_VERSION" >&2
fi
cd "$venv" && echo "$PWD/bin/python"
