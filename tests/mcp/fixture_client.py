"""The official Python MCP SDK against the conformance fixture server
(examples/conformance), in both protocol eras: content blocks, prompts,
published resources and their subscription updates, and a handler that asks
the client's user (elicitation) and model (sampling) while it runs.

Run by tests/mcp_conformance.rs with the server's URL; exits non-zero on the
first check that fails.
"""

import sys

import anyio
from mcp.client import Client
from mcp.types import (CreateMessageResult, ElicitResult, PromptReference, ResourceTemplateReference,
                       TextContent)

WATCHED = "test://watched-resource"


def check(condition, what):
    if not condition:
        print(f"FAIL: {what}", file=sys.stderr)
        sys.exit(1)
    print(f"ok: {what}")


def text_of(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def session(url, mode):
    asked = []
    updates = []

    async def on_elicit(context, params):
        asked.append(("elicit", params.message))
        return ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.com"})

    async def on_sample(context, params):
        asked.append(("sample", params.messages[0].content.text))
        return CreateMessageResult(role="assistant", content=TextContent(type="text", text="forty-two"),
                                   model="test-model", stopReason="endTurn")

    async def on_message(message):
        root = getattr(message, "root", message)
        if getattr(root, "method", "") == "notifications/resources/updated":
            updates.append(root.params.uri)

    async with Client(url, mode=mode, elicitation_callback=on_elicit, sampling_callback=on_sample,
                      message_handler=on_message) as client:
        version = client.session.protocol_version
        tools = {t.name: t for t in (await client.list_tools()).tools}
        check(tools["test_image_content"].output_schema is None and tools["test_simple_text"].output_schema,
              f"{version}: a tool answering content blocks lists no output schema")
        image = await client.call_tool("test_image_content", {})
        check(not image.is_error and image.content[0].type == "image" and image.content[0].mime_type == "image/png"
              and image.structured_content is None, f"{version}: the image tool answers an image block")
        mixed = await client.call_tool("test_multiple_content_types", {})
        check([c.type for c in mixed.content] == ["text", "image", "resource"],
              f"{version}: blocks in order: {[c.type for c in mixed.content]}")

        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        check(set(prompts) >= {"test_simple_prompt", "test_prompt_with_arguments"}, f"{version}: prompts listed")
        got = await client.get_prompt("test_prompt_with_arguments", {"arg1": "alpha", "arg2": "beta"})
        check("arg1='alpha', arg2='beta'" in got.messages[0].content.text, f"{version}: a prompt's arguments substituted")

        completed = await client.complete(PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
                                          {"name": "arg1", "value": "al"})
        check(completed.completion.values == ["alpha"], f"{version}: a prompt argument completes from its known values")
        completed = await client.complete(ResourceTemplateReference(type="ref/resource", uri="test://template/{id}/data"),
                                          {"name": "id", "value": "1"})
        check(completed.completion.values == ["1", "123"], f"{version}: a template variable completes from its known values")

        listed = [str(r.uri) for r in (await client.list_resources()).resources]
        check("skill://registry" in listed and "test://static-text" in listed,
              f"{version}: the registry and the app's resources listed together")
        read = await client.read_resource("test://template/7/data")
        check('"id":"7"' in read.contents[0].text, f"{version}: a template read with its variable")

        if mode == "legacy":
            await client.subscribe_resource(WATCHED)
            with anyio.fail_after(5):
                while not updates:
                    await anyio.sleep(0.02)
            check(updates[0] == WATCHED, f"{version}: the subscriber is told the resource changed")
            await client.unsubscribe_resource(WATCHED)
            await anyio.sleep(0.3)
            seen = len(updates)
            await anyio.sleep(0.6)
            check(len(updates) == seen, f"{version}: unsubscribed, no more updates")

            r = await client.call_tool("test_elicitation", {"message": "Who are you?"})
            check(not r.is_error and "action=accept" in text_of(r) and "ada@example.com" in text_of(r),
                  f"{version}: the handler asked the user and got the form back: {text_of(r)!r}")
            r = await client.call_tool("test_sampling", {"prompt": "What is six times seven?"})
            check(not r.is_error and text_of(r) == "LLM response: forty-two",
                  f"{version}: the handler asked the model: {text_of(r)!r}")
            check(asked == [("elicit", "Who are you?"), ("sample", "What is six times seven?")],
                  f"{version}: each question reached the client once: {asked}")
        else:
            # 2026-07-28: a subscriptions/listen stream, whose events are
            # the resource's updates; closing it ends them.
            async with client.listen(resource_subscriptions=[WATCHED, "test://nowhere"]) as sub:
                check(list(sub.honored.resource_subscriptions or []) == [WATCHED],
                      f"{version}: the stream follows the known resource only: {sub.honored}")
                with anyio.fail_after(5):
                    async for event in sub:
                        check(WATCHED in str(event), f"{version}: the listener is told the resource changed: {event}")
                        break
            # 2026-07-28 forbids requests to the client during a call: the
            # handler is told, and its skill's error says so.
            r = await client.call_tool("test_elicitation", {"message": "Who are you?"})
            check(r.is_error and "client_not_asked" in text_of(r) and not asked,
                  f"{version}: a stateless request cannot be asked: {text_of(r)!r}")
        return version


def main():
    url = sys.argv[1]
    versions = {anyio.run(session, url, mode) for mode in ["legacy", "auto"]}
    check(len(versions) == 2, f"both protocol eras: {sorted(versions)}")


if __name__ == "__main__":
    main()
