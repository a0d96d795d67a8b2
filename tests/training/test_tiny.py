"""The offline tiny policy: a tokenizer trained here whose chat template renders tools and tool calls."""

from __future__ import annotations

import json

from training.rollout import parse_tool_calls
from training.tiny import EOS, build_tiny_model, render_call, train_tokenizer_on_conversations

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_balance",
            "description": "Get a balance.",
            "parameters": {
                "type": "object",
                "properties": {
                    "account_id": {"type": "string"},
                    "currency": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                },
                "required": ["account_id"],
            },
        },
    },
    {"type": "function", "function": {"name": "list_accounts", "parameters": {"type": "object", "properties": {}}}},
]
CONVERSATION = [
    {"role": "system", "content": "You are a banking assistant."},
    {"role": "user", "content": "What is the balance of ACC-0003?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "c0",
                "type": "function",
                "function": {"name": "get_balance", "arguments": json.dumps({"account_id": "ACC-0003"})},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c0", "content": '{"balance": 12.5}'},
    {"role": "assistant", "content": "It holds 12.5."},
]


def _tokenizer():
    return train_tokenizer_on_conversations([{"messages": CONVERSATION, "tools": TOOLS}] * 4, vocab_size=400)


def test_chat_template_renders_offered_tools_and_assistant_tool_calls():
    tok = _tokenizer()
    text = tok.apply_chat_template(CONVERSATION, tools=TOOLS, tokenize=False)
    assert "Tools:\nget_balance(account_id*:string,currency:any)\nlist_accounts()\n" in text
    assert render_call("get_balance", {"account_id": "ACC-0003"}) in text
    assert '<|tool|>{"balance": 12.5}' + EOS in text and text.endswith("It holds 12.5." + EOS)
    prompt = tok.apply_chat_template(CONVERSATION[:2], tools=TOOLS, tokenize=False, add_generation_prompt=True)
    assert text.startswith(prompt) and prompt.endswith("<|assistant|>")  # prefix-preserving


def test_decoded_completions_keep_tool_call_tags_and_parse_back():
    tok = _tokenizer()
    completion = render_call("get_balance", {"account_id": "ACC-0003"}) + EOS
    ids = tok(completion, add_special_tokens=False)["input_ids"]
    decoded = tok.decode(ids, skip_special_tokens=True)
    assert decoded == completion[: -len(EOS)]  # only EOS is special
    assert parse_tool_calls(decoded) == [{"name": "get_balance", "arguments": {"account_id": "ACC-0003"}}]


def test_tiny_model_is_small_and_matches_the_tokenizer():
    tok = _tokenizer()
    model = build_tiny_model(tok)
    n = sum(p.numel() for p in model.parameters())
    assert 100_000 < n < 3_000_000
    assert model.config.vocab_size == len(tok) and model.generation_config.eos_token_id == tok.eos_token_id
