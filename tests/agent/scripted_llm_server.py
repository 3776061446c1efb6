#!/usr/bin/env python3
"""A scripted LLM server for the agent tests (standard library only).

It speaks OpenAI Chat Completions (/v1/chat/completions, /chat/completions) and Anthropic
Messages (/v1/messages), streamed and whole, and serves the turns of a JSON script in order:

    {"turns": [
      {"text": "Let me look.", "tool_calls": [{"id": "call_1", "name": "ls", "arguments": {}}],
       "usage": {"input": 30, "output": 12, "cached": 8},
       "faults": [{"kind": "http_429", "retry_after": 1}]},
      {"text": "Done."}]}

A fault is served instead of the turn and consumes one attempt, not the turn, so the retry gets
the real answer. Kinds: http_429 (retry_after), http_500 (status), http_401 (echoes the key it
received, as some servers do), context_overflow (400 with the API's "context too long" error),
malformed_json, cut_stream (after_events, negative to count from the end: -1 drops only the
final marker; or after_bytes; graceful: end the HTTP response cleanly instead of dropping the
connection; reset: abort the connection with a TCP reset (RST), as a crashed proxy or a killed
server process does, instead of closing it), slow_tokens (delay seconds before each token; the answer itself is complete),
empty_reply (a stream with no content and no stop reason: OpenAI's `choices: []` then [DONE],
Anthropic's message_start then message_stop), finish_reason (the turn, ending with the stop
reason "reason" instead, as "abort"), bad_event (after_events good events, then one that is
not JSON, then the end of the response), trickle (no event at all, only a ":" keep-alive comment
every 0.2 s for "seconds") and hold_open (the whole stream, then the connection held open for
"seconds" before the response ends; with "drop_end", without the final marker: [DONE] or
message_stop).
A turn's "stop" ("max_tokens") ends it as cut by the token limit. An OpenAI request with
"logprobs" gets every text token's log-probability (-0.25 per position), and with
"return_tokens_as_token_ids" the tokens as "token_id:<1000 + position>", as vLLM sends them.

A script of the form {"by_task": [{"match": REGEX, "turns": [...]}, ...]} serves many episodes at
once (a rollout): a request gets the turns of the first entry whose regex is found in its system
prompt or user messages (where the task is), and the turn whose index is the number of assistant messages the
request already holds, so each episode walks its own task's turns whatever the interleaving.
Faults are served per (entry, turn), once for all episodes of a task.

Usage: scripted_llm_server.py SCRIPT LOG. It prints "PORT <n>" first and appends one JSON line
per request (path, headers, body, turn, fault) to LOG.
"""
import json
import re
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Script:
    def __init__(self, path):
        with open(path) as f:
            data = json.load(f)
        self.by_task = data.get("by_task") if isinstance(data, dict) else None
        self.turns = data.get("turns", []) if isinstance(data, dict) else data
        self.lock = threading.Lock()
        self.next_turn = 0
        self.faults_served = {}

    def next(self, body):
        """Returns (turn index, turn, fault); the turn is None when the script is exhausted."""
        if self.by_task is not None:
            return self.next_for_task(body)
        with self.lock:
            if self.next_turn >= len(self.turns):
                return self.next_turn, None, None
            index, turn = self.next_turn, self.turns[self.next_turn]
            fault = self._unserved_fault(index, turn)
            if fault is None:
                self.next_turn += 1
            return index, turn, fault

    def next_for_task(self, body):
        messages = body.get("messages", [])
        # The task is in the system prompt (OpenAI) or the top-level "system" (Anthropic) and
        # the user's messages.
        prompt = text_of(body.get("system")) + "".join(
            text_of(m.get("content")) for m in messages if m.get("role") in ("system", "user"))
        index = sum(1 for m in messages if m.get("role") == "assistant")
        for number, entry in enumerate(self.by_task):
            if re.search(entry["match"], prompt):
                if index >= len(entry["turns"]):
                    return index, None, None
                turn = entry["turns"][index]
                with self.lock:
                    return index, turn, self._unserved_fault((number, index), turn)
        return index, None, None

    def _unserved_fault(self, key, turn):
        """The turn's next fault not yet served (counted as served now), or None. Under the lock."""
        faults = turn.get("faults") or ([turn["fault"]] if "fault" in turn else [])
        served = self.faults_served.get(key, 0)
        if served < len(faults):
            self.faults_served[key] = served + 1
            return faults[served]
        return None


def text_of(content):
    """The text of a message's content: a string, or OpenAI / Anthropic content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def tokens(text):
    return re.findall(r"\S+\s*|\s+", text)


def arguments_text(call):
    args = call.get("arguments", {})
    return args if isinstance(args, str) else json.dumps(args)


def usage_of(turn):
    usage = turn.get("usage", {})
    return (usage.get("input", 20), usage.get("output", max(1, len(tokens(turn.get("text", ""))))),
            usage.get("cached"))


def overflow_body(api):
    if api == "anthropic":
        return error_body(api, "invalid_request_error", "prompt is too long: 210431 tokens > 200000 maximum")
    body = error_body(api, "invalid_request_error", "This model's maximum context length is 8192 tokens. However, "
                      "your messages resulted in 9120 tokens. Please reduce the length of the messages.")
    body["error"]["code"] = "context_length_exceeded"
    return body


def error_body(api, kind, message):
    if api == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "code": None}}


def validate(api, body, headers):
    try:
        return check_request(api, body, headers)
    except (KeyError, TypeError, AttributeError) as e:
        return "malformed request: %r" % e


def check_request(api, body, headers):
    """The rules the real APIs enforce that a wrong translation would break."""
    if not isinstance(body, dict) or not isinstance(body.get("model"), str):
        return "the body must be a JSON object with a model"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages must be a non-empty list"
    known_ids = set()
    if api == "openai":
        for m in messages:
            if m.get("role") not in ("system", "user", "assistant", "tool"):
                return "unknown role %r" % m.get("role")
            if m["role"] == "assistant":
                known_ids = {c["id"] for c in m.get("tool_calls", [])}
                calls = m.get("tool_calls", [])
                if any(not isinstance(c["function"]["arguments"], str) for c in calls):
                    return "tool call arguments must be a JSON string"
            if m["role"] == "tool" and m.get("tool_call_id") not in known_ids:
                return "tool message answers unknown call %r" % m.get("tool_call_id")
        if "stream_options" in body and not body.get("stream"):
            return "stream_options is only allowed with stream"
        return None
    if "anthropic-version" not in headers:
        return "anthropic-version header is required"
    if not isinstance(body.get("max_tokens"), int):
        return "max_tokens is required"
    for i, m in enumerate(messages):
        if m.get("role") != ("user" if i % 2 == 0 else "assistant"):
            return "roles must alternate user/assistant, starting with user (message %d)" % i
        for block in m.get("content", []):
            if block.get("type") == "text" and not block.get("text"):
                return "text content blocks must be non-empty"
            if block.get("type") == "tool_result" and block.get("tool_use_id") not in known_ids:
                return "tool_result for unknown tool_use %r" % block.get("tool_use_id")
        known_ids = {b["id"] for b in m.get("content", []) if b.get("type") == "tool_use"}
    return None


def sampled(text, as_ids):
    return [{"token": "token_id:%d" % (1000 + i) if as_ids else t, "logprob": -0.25 * (i + 1),
             "bytes": list(t.encode()), "top_logprobs": []} for i, t in enumerate(tokens(text))]


def openai_reply(turn, model, stream, include_usage, index, logprobs=False, as_ids=False):
    text, calls = turn.get("text", ""), turn.get("tool_calls", [])
    finish = "length" if turn.get("stop") == "max_tokens" else "tool_calls" if calls else "stop"
    inp, out, cached = usage_of(turn)
    usage = {"prompt_tokens": inp, "completion_tokens": out, "total_tokens": inp + out}
    if cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    base = {"id": "chatcmpl-%d" % index, "created": int(time.time()), "model": model}
    if not stream:
        message = {"role": "assistant", "content": text or None}
        if calls:
            message["tool_calls"] = [{"id": c["id"], "type": "function", "function": {
                "name": c["name"], "arguments": arguments_text(c)}} for c in calls]
        choice = {"index": 0, "message": message, "finish_reason": finish}
        if logprobs:
            choice["logprobs"] = {"content": sampled(text, as_ids)}
        return dict(base, object="chat.completion", usage=usage, choices=[choice])

    def chunk(delta, finish_reason=None):
        return (None, dict(base, object="chat.completion.chunk", choices=[
            {"index": 0, "delta": delta, "finish_reason": finish_reason}]))
    # "token" marks a text delta, the unit slow_tokens delays; it goes out unnamed.
    events = [chunk({"role": "assistant", "content": ""})]
    for t, token in zip(tokens(text), sampled(text, as_ids)):
        event = chunk({"content": t})[1]
        if logprobs:
            event["choices"][0]["logprobs"] = {"content": [token]}
        events.append(("token", event))
    for i, c in enumerate(calls):
        events.append(chunk({"tool_calls": [{"index": i, "id": c["id"], "type": "function",
                                             "function": {"name": c["name"], "arguments": ""}}]}))
        args = arguments_text(c)
        events += [chunk({"tool_calls": [{"index": i, "function": {"arguments": args[k:k + 7]}}]})
                   for k in range(0, len(args), 7)]
    events.append(chunk({}, finish))
    if include_usage:
        events.append((None, dict(base, object="chat.completion.chunk", choices=[], usage=usage)))
    return events + [(None, "[DONE]")]


def anthropic_reply(turn, model, stream, index):
    text, calls = turn.get("text", ""), turn.get("tool_calls", [])
    inp, out, cached = usage_of(turn)
    usage = {"input_tokens": inp - (cached or 0), "cache_creation_input_tokens": 0,
             "output_tokens": out}
    if cached is not None:
        usage["cache_read_input_tokens"] = cached
    blocks = [{"type": "text", "text": text}] if text else []
    blocks += [{"type": "tool_use", "id": c["id"], "name": c["name"],
                "input": json.loads(arguments_text(c))} for c in calls]
    message = {"id": "msg_%d" % index, "type": "message", "role": "assistant", "model": model,
               "content": blocks,
               "stop_reason": turn.get("stop") or ("tool_use" if calls else "end_turn"),
               "stop_sequence": None, "usage": usage}
    if not stream:
        return message

    def delta(i, body):
        return ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": body})
    start = dict(message, content=[], stop_reason=None, usage=dict(usage, output_tokens=1))
    events = [("message_start", {"type": "message_start", "message": start}),
              ("ping", {"type": "ping"})]
    for i, block in enumerate(blocks):
        head = dict(block, text="") if block["type"] == "text" else dict(block, input={})
        events.append(("content_block_start",
                       {"type": "content_block_start", "index": i, "content_block": head}))
        if block["type"] == "text":
            events += [("token", delta(i, {"type": "text_delta", "text": t})[1])
                       for t in tokens(text)]
        else:
            args = json.dumps(block["input"])
            events += [delta(i, {"type": "input_json_delta", "partial_json": args[k:k + 7]})
                       for k in range(0, len(args), 7)]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(("message_delta", {"type": "message_delta", "usage": {"output_tokens": out},
                                     "delta": {"stop_reason": message["stop_reason"],
                                               "stop_sequence": None}}))
    return events + [("message_stop", {"type": "message_stop"})]


def with_stop_reason(api, reply, stream, reason):
    """The reply with its stop reason replaced, streamed or whole."""
    if not stream:
        if api == "openai":
            reply["choices"][0]["finish_reason"] = reason
        else:
            reply["stop_reason"] = reason
        return reply
    for _, data in reply:
        if not isinstance(data, dict):
            continue
        for choice in data.get("choices", []):
            if choice.get("finish_reason"):
                choice["finish_reason"] = reason
        if data.get("type") == "message_delta":
            data["delta"]["stop_reason"] = reason
    return reply


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive and chunked streams, as real servers do

    def log_message(self, *args):
        pass

    def send_json(self, status, body, headers=(), cut_after=None):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if cut_after is not None:  # promise the whole body, send part, hang up
            self.close_connection = True
            data = data[:cut_after]
        self.wfile.write(data)

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode(errors="replace")
        api = {"/v1/messages": "anthropic", "/v1/chat/completions": "openai",
               "/chat/completions": "openai"}.get(self.path.rstrip("/"))
        headers = {k.lower(): v for k, v in self.headers.items()}
        problem = "no endpoint %s" % self.path if api is None else validate(api, body, headers)
        index, turn, fault = (None, None, None) if problem else self.server.script.next(body)
        with self.server.log_lock, open(self.server.log_path, "a") as log:
            log.write(json.dumps({"path": self.path, "headers": headers, "body": body,
                                  "turn": index, "fault": fault and fault.get("kind"),
                                  "problem": problem}) + "\n")
        if problem or turn is None:
            message = problem or "the script has no turn left"
            return self.send_json(404 if api is None else 400,
                                  error_body(api, "invalid_request_error", message))
        try:
            self.serve(api, body, headers, index, turn, fault or {})
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away (a cancelled request)

    def serve(self, api, body, headers, index, turn, fault):
        kind, stream = fault.get("kind"), bool(body.get("stream"))
        if kind in ("http_429", "http_500", "http_401"):
            return self.serve_http_error(api, headers, kind, fault)
        if kind == "context_overflow":
            return self.send_json(400, overflow_body(api))
        if api == "openai":
            include_usage = body.get("stream_options", {}).get("include_usage")
            reply = openai_reply(turn, body["model"], stream, include_usage, index,
                                 bool(body.get("logprobs")), bool(body.get("return_tokens_as_token_ids")))
        else:
            reply = anthropic_reply(turn, body["model"], stream, index)
        if kind == "finish_reason":
            reply = with_stop_reason(api, reply, stream, fault["reason"])
        if kind == "empty_reply" and stream:
            reply = ([(None, {"id": "chatcmpl-empty", "object": "chat.completion.chunk",
                              "model": body["model"], "choices": []}), (None, "[DONE]")]
                     if api == "openai" else [reply[0], ("message_stop", {"type": "message_stop"})])
        if kind == "hold_open" and stream and fault.get("drop_end"):
            reply = reply[:-1]
        if kind == "bad_event" and stream:
            reply = reply[:fault.get("after_events", 1)] + [
                ("content_block_delta" if api == "anthropic" else None, '{"choices": [{"delta"')]
        delay = fault.get("delay", 0) if kind == "slow_tokens" else 0
        if not stream:
            time.sleep(delay * len(tokens(turn.get("text", ""))))
            broken = b'{"id": "broken", "choices": [{"mess'
            cut = fault.get("after_bytes", 40) if kind == "cut_stream" else None
            return self.send_json(200, broken if kind == "malformed_json" else reply,
                                  cut_after=cut)
        if kind == "malformed_json":
            reply = [(reply[0][0], '{"type": "message_start", "choices": [')]
        self.serve_stream(api, reply, kind, fault, delay)

    def serve_http_error(self, api, headers, kind, fault):
        status = fault.get("status", int(kind[5:]))
        key = headers.get("x-api-key") or headers.get("authorization", "").replace("Bearer ", "")
        message = {"http_429": "rate limit exceeded", "http_500": "internal server error",
                   "http_401": "Incorrect API key provided: %s" % key}[kind]
        error_type = {429: "rate_limit_error", 401: "authentication_error"}.get(status, "api_error")
        extra = [("Retry-After", str(fault["retry_after"]))] if "retry_after" in fault else []
        self.send_json(status, error_body(api, error_type, message), extra)

    def serve_stream(self, api, events, kind, fault, delay):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if kind == "trickle":
            end = time.time() + fault.get("seconds", 30)
            while time.time() < end:
                self.wfile.write(b"3\r\n:\n\n\r\n")
                self.wfile.flush()
                time.sleep(0.2)
            self.wfile.write(b"0\r\n\r\n")
            return
        cut = kind == "cut_stream"
        sent_events = sent_bytes = 0
        after_events = fault.get("after_events", 1 << 30)
        if after_events < 0:
            after_events += len(events)
        for name, data in events:
            if cut and sent_events >= after_events:
                break
            if name == "token":
                time.sleep(delay)
                name = "content_block_delta" if api == "anthropic" else None
            text = data if isinstance(data, str) else json.dumps(data)
            payload = (("event: %s\n" % name if name else "") + "data: %s\n\n" % text).encode()
            if cut and "after_bytes" in fault:
                payload = payload[:max(0, fault["after_bytes"] - sent_bytes)]
                if not payload:
                    break
            self.wfile.write(b"%x\r\n%s\r\n" % (len(payload), payload))
            self.wfile.flush()
            sent_events, sent_bytes = sent_events + 1, sent_bytes + len(payload)
        if cut and fault.get("reset"):
            # SO_LINGER 0 makes close() abortive: the peer gets RST, not FIN. The socket's file
            # objects hold its descriptor, so they are closed first for close() to be real.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.wfile.close()
            self.rfile.close()
            self.connection.close()
            self.close_connection = True
            return
        if cut and not fault.get("graceful"):
            self.close_connection = True  # no final chunk: the client sees a broken transfer
            return
        if kind == "hold_open":
            time.sleep(fault.get("seconds", 30))
        self.wfile.write(b"0\r\n\r\n")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.script = Script(sys.argv[1])
    server.log_path = sys.argv[2]
    server.log_lock = threading.Lock()
    print("PORT %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
