"""Benchmark comparison: the example `echo` tool on FastMCP (Python), stdio.

Needs `fastmcp<4.1` (4.1 does not install from this registry); bench/mcp-roundtrips.sh
installs it into its own virtual environment.
"""

from fastmcp import FastMCP

mcp = FastMCP("fastmcp-echo")


@mcp.tool
def echo(message: str) -> dict:
    """Return the message unchanged; a checkpoint in workflows."""
    return {"message": message}


if __name__ == "__main__":
    mcp.run(show_banner=False)
