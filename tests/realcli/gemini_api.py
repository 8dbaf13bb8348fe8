"""The Gemini API (streamed server-sent events), as Gemini CLI uses it with
`GOOGLE_GEMINI_BASE_URL`: POST /v1beta/models/<model>:streamGenerateContent?alt=sse,
the key in `x-goog-api-key`; one `data:` line per chunk, each a GenerateContentResponse
(`candidates[0].content.parts` with `text` or `functionCall`), the last one with
`finishReason` and `usageMetadata`.

The CLI's SSE reader only takes `data: {...}` followed by a blank line: an `event:`
line, as the other two APIs send, stalls it. A non-streamed `:generateContent` or
`:countTokens` (side requests the CLI may make for summaries or routing) is answered
and noted in `side_requests`, never taken for an agent turn.
"""

from __future__ import annotations

import json
import re
from typing import Any

from aiohttp import web

from tests.realcli.providers import (
    Call,
    Look,
    Say,
    ScriptedModel,
    Seen,
    Shell,
    Step,
    WriteFile,
)

# The first user message of a session carries the workspace in a <session_context> block.
_CONTEXT = "<session_context>"
_CWD_GEMINI = re.compile(r"\*\*Workspace Directories:\*\*\n\s*- (.+)")
SHELL_TOOL = "run_shell_command"
WRITE_TOOL = "write_file"
# A read-only run has no shell: it looks with this.
LIST_TOOL = "list_directory"


class GeminiModel(ScriptedModel):
    """The Gemini API (streamed), as Gemini CLI uses it."""

    name = "gemini"
    path = "/v1beta/models/{model}:{method}"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _authorised(self, headers: Any) -> bool:
        return self.key is None or headers.get("x-goog-api-key") == self.key

    def is_agent_request(self, body: dict[str, Any]) -> bool:
        return True

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        method = request.match_info["method"]
        if method == "streamGenerateContent":
            return await super()._handle(request)
        if not self._authorised(request.headers):
            self.problems.append(f"{self.name}: {method} without the configured key")
            return web.json_response(
                {"error": {"code": 401, "status": "UNAUTHENTICATED"}}, status=401
            )
        body = await request.json()
        self.side_requests.append({"method": method, **body})
        return await self.side_answer(request, body)

    async def side_answer(self, request: web.Request, body: dict[str, Any]) -> web.Response:
        if request.match_info["method"] == "countTokens":
            return web.json_response({"totalTokens": 1})
        return web.json_response(
            {
                "candidates": [
                    {
                        "content": {"role": "model", "parts": [{"text": "ok"}]},
                        "finishReason": "STOP",
                        "index": 0,
                    }
                ],
                "usageMetadata": {
                    "promptTokenCount": 1,
                    "candidatesTokenCount": 1,
                    "totalTokenCount": 2,
                },
            }
        )

    def parse(self, body: dict[str, Any], headers: dict[str, str]) -> Seen:
        users, assistants, results, cwd = [], [], [], None
        for content in body.get("contents", []):
            role = content.get("role")
            for part in content.get("parts", []):
                if "functionResponse" in part:
                    response = part["functionResponse"].get("response")
                    output = response.get("output") if isinstance(response, dict) else None
                    if output is None and isinstance(response, dict):
                        output = response.get("error")
                    results.append(output if isinstance(output, str) else json.dumps(response))
                    continue
                text = part.get("text")
                if not isinstance(text, str) or part.get("thought"):
                    continue
                if role == "model":
                    assistants.append(text)
                elif text.startswith(_CONTEXT):
                    found = _CWD_GEMINI.search(text)
                    cwd = found[1].strip() if found else cwd
                else:
                    users.append(text.strip())
        tools = {
            declaration.get("name")
            for tool in body.get("tools", [])
            for declaration in tool.get("functionDeclarations", [])
        }
        return Seen(
            model="",  # named in the path; the shared handler fills it in
            prompt=users[-1] if users else "",
            user_texts=users,
            assistant_texts=assistants,
            tool_results=results,
            tools=tools,
            cwd=cwd,
            # Gemini CLI sends no session id with an API key: tests match sessions otherwise.
            session=None,
            headers=headers,
            body=body,
        )

    def _call(self, step: Step, seen: Seen) -> dict[str, Any]:
        if isinstance(step, Call):
            return {"name": step.name_in(seen.tools, self.problems), "args": step.arguments}
        if isinstance(step, Shell):
            return {"name": SHELL_TOOL, "args": {"command": step.command}}
        if isinstance(step, Look):
            folder = f"{seen.cwd}/{step.path}" if seen.cwd else step.path
            return {"name": LIST_TOOL, "args": {"dir_path": folder.removesuffix("/.")}}
        assert isinstance(step, WriteFile)
        path = f"{seen.cwd}/{step.path}" if seen.cwd else step.path
        return {"name": WRITE_TOOL, "args": {"file_path": path, "content": step.content}}

    def events(self, steps: list[Step], seen: Seen, number: int) -> list[dict[str, Any]]:
        chunks: list[dict[str, Any]] = []
        for index, step in enumerate(steps):
            if isinstance(step, Say):
                part: dict[str, Any] = {"text": step.text}
            else:
                part = {"functionCall": {"id": f"call_{number}_{index}", **self._call(step, seen)}}
            chunks.append(
                {
                    "candidates": [{"content": {"role": "model", "parts": [part]}, "index": 0}],
                    "modelVersion": seen.model,
                }
            )
        usage = self.usage
        last = chunks[-1]["candidates"][0]
        last["finishReason"] = "STOP"
        chunks[-1]["usageMetadata"] = {
            "promptTokenCount": usage["input"],
            "cachedContentTokenCount": usage["cached"],
            "candidatesTokenCount": usage["output"],
            "totalTokenCount": usage["input"] + usage["output"],
        }
        chunks[-1]["responseId"] = f"resp_{number}"
        return chunks

    def frame(self, event: dict[str, Any]) -> bytes:
        return f"data: {json.dumps(event)}\n\n".encode()
