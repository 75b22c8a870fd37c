"""generate, stream and generate_many against `difftx generate`."""
import re

import pytest

import difftx
from conftest import FIXTURES, run

PROMPT = "The Congress"


def cli_text(binary, model_dir, *args):
    out = run(binary, "generate", "--model", model_dir, "--prompt", PROMPT, "--max-new-tokens", 40, *args)
    assert out.startswith(PROMPT) and out.endswith("\n")
    return out[len(PROMPT):-1]


@pytest.mark.parametrize("sampling", [
    dict(temperature=0),
    dict(temperature=1.0, top_k=50, top_p=0.95, seed=7),
    dict(temperature=0.8, seed=3),
    dict(temperature=0, repetition_penalty=1.6, frequency_penalty=0.5),
    dict(temperature=0.9, min_p=0.05, presence_penalty=0.8, seed=4),
])
def test_generate_equals_the_cli(binary, diff_dir, diff_model, sampling):
    args = []
    for key, value in sampling.items():
        args += ["--" + key.replace("_", "-"), value]
    expected = cli_text(binary, diff_dir, *args)
    assert diff_model.generate(PROMPT, max_new_tokens=40, **sampling) == expected


def test_stream_pieces_join_to_generate(diff_model):
    stream = diff_model.stream(PROMPT, max_new_tokens=30, temperature=1.0, seed=5)
    pieces = list(stream)
    assert len(pieces) > 1 and all(isinstance(p, str) and p for p in pieces)
    assert stream.finish_reason in ("length", "stop")
    assert "".join(pieces) == diff_model.generate(PROMPT, max_new_tokens=30, temperature=1.0, seed=5)


def test_generate_many_is_batch_invariant(diff_model):
    prompts = [PROMPT, "The people", "In the year", PROMPT]
    many = diff_model.generate_many(prompts, max_new_tokens=25, temperature=0.9, seed=11)
    assert many == [diff_model.generate(p, max_new_tokens=25, temperature=0.9, seed=11) for p in prompts]


def test_penalties_change_the_text(diff_model):
    plain = diff_model.generate(PROMPT, max_new_tokens=40, temperature=0)
    for penalty in (dict(repetition_penalty=1.6), dict(frequency_penalty=1.5), dict(presence_penalty=1.5)):
        assert diff_model.generate(PROMPT, max_new_tokens=40, temperature=0, **penalty) != plain, penalty


def test_stop_strings(binary, diff_dir, diff_model):
    full = diff_model.generate(PROMPT, max_new_tokens=40, temperature=0)
    stop = full[len(full) // 2:len(full) // 2 + 3]
    assert stop and diff_model.generate(PROMPT, max_new_tokens=40, temperature=0, stop=stop) == full[:full.index(stop)]
    assert cli_text(binary, diff_dir, "--temperature", 0, "--stop", "zzzz", "--stop", stop) == full[:full.index(stop)]
    assert diff_model.generate(PROMPT, max_new_tokens=40, temperature=0, stop=[stop, "zzzz"]) == full[:full.index(stop)]
    with pytest.raises(difftx.Error, match="stop: expected a string or a list of strings"):
        diff_model.generate(PROMPT, max_new_tokens=4, stop=[1])


def test_vllm_stop_options(diff_model):
    # stop_token_ids end the text; min_tokens masks them for that many tokens (the greedy text with
    # the id banned), then the forced id stops it.
    forced = dict(temperature=0, logit_bias={65: 100}, stop_token_ids=[65])
    assert diff_model.generate(PROMPT, max_new_tokens=8, **forced) == ""
    banned = diff_model.generate(PROMPT, max_new_tokens=3, temperature=0, logit_bias={65: -100})
    assert banned and diff_model.generate(PROMPT, max_new_tokens=8, min_tokens=3, **forced) == banned
    # ignore_eos: the model's end of text no longer stops it (kept as text here to count it).
    eos = diff_model.tokenizer.vocab_size - 1
    assert diff_model.tokenizer.decode([eos]) == "<|endoftext|>"
    ended = dict(max_new_tokens=3, temperature=0, logit_bias={eos: 100}, skip_special_tokens=False)
    assert diff_model.generate(PROMPT, **ended) == ""
    assert diff_model.generate(PROMPT, ignore_eos=True, **ended) == "<|endoftext|>" * 3
    # include_stop_str_in_output: the text ends after the stop string.
    full = diff_model.generate(PROMPT, max_new_tokens=40, temperature=0)
    stop = full[len(full) // 2:len(full) // 2 + 3]
    assert diff_model.generate(PROMPT, max_new_tokens=40, temperature=0, stop=stop,
                               include_stop_str_in_output=True) == full[:full.index(stop) + len(stop)]
    with pytest.raises(difftx.Error, match="min_tokens 9 must be in"):
        diff_model.generate(PROMPT, max_new_tokens=8, min_tokens=9)
    with pytest.raises(difftx.Error, match="stop token 100000 is outside the vocabulary"):
        diff_model.generate(PROMPT, max_new_tokens=8, stop_token_ids=[100000])
    with pytest.raises(difftx.Error, match="at most 64"):
        diff_model.generate(PROMPT, max_new_tokens=8, stop_token_ids=[1] * 65)


def test_bad_words(diff_model):
    # A word of one token, forced by its bias, is never drawn: the text is the one with it banned.
    word = diff_model.tokenizer.decode([65])
    assert diff_model.tokenizer.encode(word) == [65]
    banned = diff_model.generate(PROMPT, max_new_tokens=6, temperature=0, logit_bias={65: -100})
    assert diff_model.generate(PROMPT, max_new_tokens=6, temperature=0, logit_bias={65: 100},
                               bad_words=[word]) == banned
    with pytest.raises(difftx.Error, match="is no token"):
        diff_model.generate(PROMPT, max_new_tokens=4, bad_words=[" "])


def test_logit_bias(diff_model):
    tokenizer = diff_model.tokenizer
    forced = tokenizer.decode([65] * 6)
    assert diff_model.generate(PROMPT, max_new_tokens=6, temperature=0, logit_bias={65: 100}) == forced
    plain = diff_model.generate(PROMPT, max_new_tokens=1, temperature=0)
    first = tokenizer.encode(plain)[0]
    assert diff_model.generate(PROMPT, max_new_tokens=1, temperature=0, logit_bias={first: -100}) != plain
    with pytest.raises(difftx.Error, match="logit_bias"):
        diff_model.generate(PROMPT, max_new_tokens=1, logit_bias={10 ** 6: 1.0})
    with pytest.raises(difftx.Error, match="logit_bias"):
        diff_model.generate(PROMPT, max_new_tokens=1, logit_bias={1: 101.0})


def test_special_tokens_are_no_text_unless_kept(binary):
    # A special token the model writes (<|im_start|>, id 277, drawn through logit_bias) is left out of
    # the text, as the server's completions and `difftx generate` leave it out; skip_special_tokens=False
    # keeps it (the CLI's --keep-special-tokens). It is a token either way.
    motif = FIXTURES / "hf" / "motif_r1_mha_tied_f32_tokenizer"
    model = difftx.load(motif)
    forced = dict(max_new_tokens=3, temperature=0, logit_bias={277: 100})
    for skip, want in [(True, ""), (False, "<|im_start|>" * 3)]:
        assert model.generate("Hi", skip_special_tokens=skip, **forced) == want
        assert "".join(model.stream("Hi", skip_special_tokens=skip, **forced)) == want
        assert model.generate_many(["Hi", "Ho"], skip_special_tokens=skip, **forced) == [want, want]
        keep = [] if skip else ["--keep-special-tokens"]
        cli = run(binary, "generate", "--model", motif, "--prompt", "Hi", "--max-new-tokens", 3, "--temperature", 0,
                  "--logit-bias", "277=100", *keep)
        assert cli == "Hi" + want + "\n"
    assert model.generate("Hi", **forced) == ""  # the default


@pytest.mark.parametrize("draft", ["ngram", "self"])
def test_a_draft_gives_the_same_text(binary, diff_dir, diff_model, draft):
    spec = str(diff_dir) if draft == "self" else draft
    drafted = difftx.load(diff_dir, draft=spec, draft_tokens=3)
    plain = diff_model.generate(PROMPT, max_new_tokens=40, temperature=0)
    assert drafted.generate(PROMPT, max_new_tokens=40, temperature=0) == plain
    assert drafted.generate(PROMPT, max_new_tokens=40, temperature=0) == cli_text(binary, diff_dir, "--temperature", 0,
                                                                                  "--draft", spec)
    sampled = dict(max_new_tokens=30, temperature=1.0, seed=5)
    assert drafted.generate_many([PROMPT, "The people"], **sampled) == [drafted.generate(p, **sampled)
                                                                       for p in [PROMPT, "The people"]]


def test_bad_drafts_are_errors(diff_dir, tmp_path):
    missing = tmp_path / "missing"
    with pytest.raises(difftx.Error, match=re.escape(f"draft {missing}: not none, ngram or a model directory")):
        difftx.load(diff_dir, draft=str(missing))
    with pytest.raises(difftx.Error, match=re.escape(f"draft {tmp_path}: ") + ".*config.json"):  # no model there
        difftx.load(diff_dir, draft=str(tmp_path))
    with pytest.raises(difftx.Error, match=r"(?<!-)draft_tokens 65 must be in \[1, 64\]"):
        difftx.load(diff_dir, draft="ngram", draft_tokens=65)
    with pytest.raises(difftx.Error, match="draft: ''"):
        difftx.load(diff_dir, draft="")
    for draft in [None, "none"]:  # a count that would draft nothing
        with pytest.raises(difftx.Error, match="(?<!-)draft_tokens 3 is given without a draft: set draft to ngram"):
            difftx.load(diff_dir, draft=draft, draft_tokens=3)


def test_draft_none_is_no_draft(diff_dir, diff_model):
    assert difftx.load(diff_dir, draft="none").generate(PROMPT, max_new_tokens=12, temperature=0) == \
        diff_model.generate(PROMPT, max_new_tokens=12, temperature=0)


@pytest.mark.parametrize("keywords, says", [
    (dict(temperature=-1), "temperature -1 must be >= 0 (0 is greedy)"),
    (dict(top_k=-1), "top_k -1 must be >= 0"),
    (dict(top_p=0), "top_p 0 must be in (0, 1]"),
    (dict(min_p=1.5), "min_p 1.5 must be in [0, 1]"),
    (dict(presence_penalty=3), "presence_penalty 3 must be in [-2, 2]"),
    (dict(repetition_penalty=0), "repetition_penalty 0 must be in (0, 10] (1 is off)"),
    (dict(max_new_tokens=-1), "max_new_tokens -1 must not be negative"),
])
def test_bad_options_name_the_keyword(diff_model, keywords, says):
    # The keyword the caller wrote, not `difftx generate`'s flag for it.
    with pytest.raises(difftx.Error) as error:
        diff_model.generate(PROMPT, **keywords)
    assert says in str(error.value) and "--" not in str(error.value)


def test_bad_options_are_errors(diff_model):
    with pytest.raises(difftx.Error, match="longer than the context"):
        diff_model.generate("word " * 400)


SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 6},
                                           "n": {"type": "integer", "minimum": -3, "maximum": 40},
                                           "tags": {"type": "array", "items": {"enum": ["a", "b", None]}, "maxItems": 2}},
          "required": ["name", "n"], "additionalProperties": False}


def check_document(text):
    import json
    value = json.loads(text)
    assert set(value) <= {"name", "n", "tags"} and {"name", "n"} <= set(value), text
    assert isinstance(value["name"], str) and len(value["name"]) <= 6, text
    assert isinstance(value["n"], int) and -3 <= value["n"] <= 40, text
    assert all(t in ("a", "b", None) for t in value.get("tags", [])) and len(value.get("tags", [])) <= 2, text


# The longest document SCHEMA admits, in bytes: 17 places for insignificant whitespace of at most a newline
# and 16 spaces or tabs each (docs/STRUCTURED_OUTPUT.md), the keys and punctuation, a name of 6 characters
# written as \u escapes, a two-character integer and two nulls. Every token writes at least one byte, so
# this many new tokens (and the end of text) always finish the document, whatever the weights: the model
# is trained on the repository's documentation, and each edit of it changes what the model samples.
LONGEST_DOCUMENT = (17 * 17 + len('{"name":,"n":,"tags":[,]}') + len('"' + 6 * "\\u0000" + '"') + len("-3")
                    + 2 * len("null"))


@pytest.fixture(scope="module")
def long_diff_dir(diff_dir, tmp_path_factory):
    """diff_dir with a context that holds the prompt and LONGEST_DOCUMENT (RoPE takes any position)."""
    import json
    import shutil
    out = tmp_path_factory.mktemp("long") / "diff"
    shutil.copytree(diff_dir, out)
    config = json.loads((out / "config.json").read_text())
    config["max_position_embeddings"] = 512
    (out / "config.json").write_text(json.dumps(config))
    return out


def test_json_schema_constrains_the_output(binary, long_diff_dir, tmp_path):
    import json
    model = difftx.load(long_diff_dir)
    budget = LONGEST_DOCUMENT + 1
    for seed in (1, 2, 3):
        stream = model.stream(PROMPT, max_new_tokens=budget, temperature=1.2, seed=seed, json_schema=SCHEMA)
        text = "".join(stream)
        assert stream.finish_reason == "stop", text
        check_document(text)
        # The same as the CLI's --json-schema, and as the schema given as JSON text.
        schema_file = tmp_path / "schema.json"
        schema_file.write_text(json.dumps(SCHEMA))
        out = run(binary, "generate", "--model", long_diff_dir, "--prompt", PROMPT, "--max-new-tokens", budget,
                  "--temperature", 1.2, "--seed", seed, "--json-schema", schema_file)
        assert out[len(PROMPT):-1] == text
        assert model.generate(PROMPT, max_new_tokens=budget, temperature=1.2, seed=seed,
                              json_schema=json.dumps(SCHEMA)) == text
    many = model.generate_many([PROMPT, "The people"], max_new_tokens=budget, temperature=1.2, seed=4,
                               json_schema=SCHEMA)
    for text in many:
        check_document(text)
    assert "".join(model.stream(PROMPT, max_new_tokens=budget, temperature=1.2, seed=4, json_schema=SCHEMA)) == many[0]


def test_json_schema_that_cannot_be_enforced_is_an_error(diff_model):
    with pytest.raises(difftx.Error, match=r"#/properties/a/format: format 'idn-email' is not supported"):
        diff_model.generate(PROMPT, json_schema={"type": "object",
                                                 "properties": {"a": {"type": "string", "format": "idn-email"}}})
    with pytest.raises(difftx.Error, match="invalid JSON"):
        diff_model.generate(PROMPT, json_schema="{not json")


def test_grammar_regex_and_choice_constrain_the_output(binary, diff_model, tmp_path):
    for seed in (1, 2, 3):
        assert diff_model.generate(PROMPT, temperature=1.5, seed=seed, choice=["yes", "no", "not sure"]) in (
            "yes", "no", "not sure")
        assert re.fullmatch(r"[0-9]{3}-[a-z]{2}",
                            diff_model.generate(PROMPT, temperature=1.5, seed=seed, regex="[0-9]{3}-[a-z]{2}"))
        text = diff_model.generate(PROMPT, temperature=1.5, seed=seed, grammar='root ::= "x" [0-9] [0-9]?')
        assert re.fullmatch(r"x[0-9]{1,2}", text), text
        # The same as the CLI's --grammar.
        grammar_file = tmp_path / "g.gbnf"
        grammar_file.write_text('root ::= "x" [0-9] [0-9]?')
        out = run(binary, "generate", "--model", diff_model.path, "--prompt", PROMPT, "--temperature", 1.5,
                  "--seed", seed, "--grammar", grammar_file)
        assert out[len(PROMPT):-1] == text
    assert all(t in ("a", "b") for t in diff_model.generate_many([PROMPT, "The people"], choice=["a", "b"]))
    with pytest.raises(difftx.Error, match="give one of them"):
        diff_model.generate(PROMPT, regex="a", choice=["a"])
    with pytest.raises(difftx.Error, match="the regex cannot be enforced.*lookahead"):
        diff_model.generate(PROMPT, regex="(?=a)b")
    with pytest.raises(difftx.Error, match="at least one text"):
        diff_model.generate(PROMPT, choice=[])


def test_generate_many_takes_more_prompts_than_the_queue(diff_model):
    # The engine queues at most 1024 requests; the rest enter as it drains, in order.
    prompts = [f"The {i}" for i in range(1100)]
    many = diff_model.generate_many(prompts, max_new_tokens=1, temperature=0)
    assert len(many) == 1100
    assert many[1099] == diff_model.generate(prompts[1099], max_new_tokens=1, temperature=0)


def test_a_stream_iterated_by_two_threads_refuses_the_second(diff_model):
    # As a Python generator does: the thread that finds the stream stepping gets ValueError, and
    # the threads' pieces are the stream's alone (taken in turns, so in any order between them).
    import threading
    stream = diff_model.stream(PROMPT, max_new_tokens=60, temperature=1.0, seed=5)
    pieces, refused = [], []

    def iterate():
        try:
            for piece in stream:
                pieces.append(piece)
        except ValueError as e:
            refused.append(str(e))

    threads = [threading.Thread(target=iterate) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all("already executing" in r for r in refused)
    alone = list(diff_model.stream(PROMPT, max_new_tokens=60, temperature=1.0, seed=5))
    assert sorted(pieces) == sorted(alone)
