"""The default offline policy: a byte-level BPE tokenizer trained here on the corpus text, and a small Llama.

Nothing is downloaded. ``load_policy("tiny", texts)`` builds both; any other value of ``model`` is a Hugging Face
model id or a local directory and goes through ``from_pretrained`` (a saved tiny checkpoint loads that way too).

The chat format (the tokenizer's ``chat_template``; the same tool-call syntax as Qwen2.5/Hermes, so the
parser in :mod:`training.rollout` reads both)::

    <|system|>Tools:
    get_balance(account_id*:string)
    list_accounts(customer_id:any,account_type:any)
    <|end|><|system|>...system prompt...<|end|><|user|>What is the balance of ACC-0003?<|end|><|assistant|>
    <tool_call>{"name": "get_balance", "arguments": {"account_id": "ACC-0003"}}</tool_call><|end|>
    <|tool|>{"balance": 12.5, ...}<|end|>

Each offered tool is one line ``name(param:type,...)``; ``*`` marks a required parameter, ``any`` a parameter
whose schema gives no single type. Descriptions are left out to keep prompts short for a small model.
``<|end|>`` closes every message and is the EOS token; ``<|pad|>`` pads. Role markers and ``<tool_call>`` tags
are added tokens that are *not* special, so decoding with ``skip_special_tokens=True`` keeps them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel

EOS = "<|end|>"
PAD = "<|pad|>"
ROLE_TOKENS = ["<|system|>", "<|user|>", "<|assistant|>", "<|tool|>", "<tool_call>", "</tool_call>"]

CHAT_TEMPLATE = (
    "{%- if tools %}<|system|>Tools:"
    "{%- for t in tools %}{%- set f = t.function if t.function is defined else t %}"
    "{%- set p = f.parameters if f.parameters is defined and f.parameters else {} %}"
    "{%- set req = p.required if p.required is defined and p.required else [] %}"
    "{%- set props = p.properties if p.properties is defined and p.properties else {} %}"
    "{{ '\\n' }}{{ f.name }}("
    "{%- for k, v in props.items() %}{{ k }}{% if k in req %}*{% endif %}:"
    "{{ v.type if v.type is defined and v.type is string else 'any' }}{% if not loop.last %},{% endif %}{% endfor %})"
    "{%- endfor %}{{ '\\n' }}<|end|>"
    "{%- endif %}"
    "{%- for m in messages %}"
    "{%- if m.role == 'system' %}<|system|>{{ m.content }}<|end|>"
    "{%- elif m.role == 'user' %}<|user|>{{ m.content }}<|end|>"
    "{%- elif m.role == 'assistant' %}<|assistant|>{% generation %}{{ m.content if m.content else '' }}"
    "{%- for tc in (m.tool_calls if m.tool_calls is defined and m.tool_calls else []) %}"
    "{%- set fn = tc.function if tc.function is defined else tc %}"
    '<tool_call>{"name": {{ fn.name | tojson }}, "arguments": '
    "{{ fn.arguments if fn.arguments is string else (fn.arguments | tojson) }}"
    "{{ '}' }}</tool_call>"
    "{%- endfor %}<|end|>{% endgeneration %}"
    "{%- elif m.role == 'tool' %}<|tool|>{{ m.content }}<|end|>"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}<|assistant|>{% endif %}"
)


def render_call(name: str, arguments: Any) -> str:
    """One tool call exactly as the chat template writes it."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return f'<tool_call>{{"name": {json.dumps(name, ensure_ascii=False)}, "arguments": {args}}}</tool_call>'


class TinyConfig(BaseModel):
    """Sizes of the offline policy (defaults: ~0.6M parameters)."""

    vocab_size: int = 2048
    hidden_size: int = 96
    intermediate_size: int = 256
    num_layers: int = 4
    num_heads: int = 4
    max_positions: int = 2048
    seed: int = 0


def train_tokenizer(texts: Iterable[str], vocab_size: int = 2048):
    """A byte-level BPE tokenizer trained on ``texts``, wrapped with the chat template."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    # words are whitespace-delimited chunks (a leading space attached), not GPT-2's letter/digit/punct pieces:
    # tool signatures and JSON keys repeat verbatim across the corpus and merge into few tokens, which keeps
    # prompts short for a small CPU model
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(r"\s?\S+|\s+"), behavior="isolated"),
            pre_tokenizers.Digits(individual_digits=True),  # ids are copied digit by digit, same in text and JSON
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=[PAD, EOS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(list(texts), trainer=trainer)
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in ROLE_TOKENS])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token=EOS,
        pad_token=PAD,
        padding_side="left",
        truncation_side="left",
        chat_template=CHAT_TEMPLATE,
        model_max_length=4096,
    )
    return fast


def build_tiny_model(tokenizer: Any, cfg: TinyConfig | None = None):
    """A small Llama built from its config (random initial weights, seeded)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = cfg or TinyConfig()
    torch.manual_seed(cfg.seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=cfg.hidden_size,
        intermediate_size=cfg.intermediate_size,
        num_hidden_layers=cfg.num_layers,
        num_attention_heads=cfg.num_heads,
        num_key_value_heads=cfg.num_heads,
        max_position_embeddings=cfg.max_positions,
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    model = LlamaForCausalLM(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.bos_token_id = None
    return model


def load_policy(
    model: str, conversations: Sequence[dict[str, Any]] = (), tiny: TinyConfig | None = None, dtype: str = "float32"
):
    """(model, tokenizer). ``"tiny"`` builds the offline policy, its tokenizer trained on ``conversations``
    (``{"messages", "tools"}``); anything else is loaded with ``from_pretrained`` (a hub id where a hub is
    reachable, or a local directory such as a saved checkpoint) in ``dtype`` (``float32`` by default: the
    optimizer then keeps fp32 master weights and ``bf16=True`` in the trainer args gives mixed precision)."""
    if model == "tiny":
        cfg = tiny or TinyConfig()
        if not conversations:
            raise ValueError("the tiny policy trains its tokenizer on the corpus text; no conversation was given")
        tok = train_tokenizer_on_conversations(conversations, cfg.vocab_size)
        return build_tiny_model(tok, cfg), tok
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if dtype != "auto" and not isinstance(getattr(torch, dtype, None), torch.dtype):
        raise ValueError(f"model_dtype {dtype!r} is not a torch dtype (float32, bfloat16, float16) or 'auto'")
    tok = AutoTokenizer.from_pretrained(model)
    tok.padding_side = "left"
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    if not getattr(tok, "chat_template", None):
        tok.chat_template = CHAT_TEMPLATE
    m = AutoModelForCausalLM.from_pretrained(model, dtype=dtype if dtype == "auto" else getattr(torch, dtype))
    if m.generation_config.pad_token_id is None:
        m.generation_config.pad_token_id = tok.pad_token_id
    return m, tok


def train_tokenizer_on_conversations(conversations: Sequence[dict[str, Any]], vocab_size: int = 2048):
    """Train the tiny tokenizer on the corpus as the chat template renders it (prompts, tools, calls)."""
    bootstrap = train_tokenizer(["bootstrap"], vocab_size=300)  # only its template is used, to render text
    texts = [
        bootstrap.apply_chat_template(c["messages"], tools=c.get("tools") or None, tokenize=False)
        for c in conversations
    ]
    return train_tokenizer(texts, vocab_size)
