"""One MCP session over one connection of a run's tool socket: the official SDK's
`mcp.server.lowlevel.Server`, framed as JSON lines (the stdio transport's framing, as
the pump `runners.mcp_bridge` carries the CLI's stdio).

Apart from the tools themselves (pipeline/run_tools.py) because the SDK takes about half
a second to import: a process imports it, in a thread, when its first run starts serving
tools, not at its start (every `chatbot` command imports the pipeline).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.message import SessionMessage

#: (the result's text, whether it is an error) of one call by tool name and arguments.
Call = Callable[[str, dict[str, Any] | None], Awaitable[tuple[str, bool]]]


class Listed(Protocol):
    """One tool as `tools/list` shows it."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def input_schema(self) -> dict[str, Any]: ...


async def serve(
    listed: Sequence[Listed],
    call: Call,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
) -> None:
    """Answer one connection's session until the peer ends it."""
    await serve_lines(_server(listed, call), reader, writer)


def _server(listed: Sequence[Listed], call: Call) -> Server[Any]:
    tools = [
        types.Tool(name=each.name, description=each.description, input_schema=each.input_schema)
        for each in listed
    ]

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        text, failed = await call(params.name, params.arguments)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], is_error=failed
        )

    return Server("intent-board", version="1", on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_lines(
    server: Server[Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Run an MCP session over one connection's JSON lines."""
    read_in, read_out = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_in, write_out = anyio.create_memory_object_stream[SessionMessage](0)

    async def incoming() -> None:
        async with read_in:
            while line := await reader.readline():
                if not line.strip():
                    continue
                try:
                    message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except Exception as error:  # noqa: BLE001 - the SDK answers a bad line
                    await read_in.send(error)
                    continue
                await read_in.send(SessionMessage(message))

    async def outgoing() -> None:
        async with write_out:
            async for each in write_out:
                data = each.message.model_dump_json(by_alias=True, exclude_unset=True)
                writer.write(data.encode() + b"\n")
                await writer.drain()

    async with anyio.create_task_group() as group:
        group.start_soon(incoming)
        group.start_soon(outgoing)
        await server.run(read_out, write_in, server.create_initialization_options())
        group.cancel_scope.cancel()


__all__ = ["Call", "Listed", "serve", "serve_lines"]
