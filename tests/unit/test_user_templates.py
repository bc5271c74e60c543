"""Hostile and broken user templates (`--prompt file:PATH.j2`): each ends in a clear error naming the file
and line (exit 2), within a time, step and memory bound, never in an internal error, a hang or a GB."""

from __future__ import annotations

import contextlib
import signal
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kaoshi import runs
from kaoshi.benchmarks import get_template
from kaoshi.cli.main import main
from kaoshi.data import DataError, Exam, Question, QuestionType
from kaoshi.data.limits import MAX_TEMPLATE_CHARS
from kaoshi.prompts import Prompt, RenderOptions
from kaoshi.prompts.jinja_sandbox import TemplateLimits
from kaoshi.prompts.user import UserTemplate

EXEMPLAR = Question(
    "1",
    QuestionType.SINGLE,
    "安全色中表示禁止的是（）。",
    (("A", "红色"), ("B", "黄色")),
    frozenset("A"),
    explanation="红色表示禁止。",
)
QUESTION = Question(
    "3", QuestionType.SINGLE, "扑救带电火灾\n应选用（）。", (("A", "水"), ("B", "二氧化碳")), frozenset("B")
)
EXAM = Exam("toy", (QUESTION,), (EXEMPLAR,))
# Far more than any refused template takes with the fix; far less than the suite's patience without it.
SECONDS = 15


class Hung(BaseException):
    """Not an Exception: the renderer, which turns a template's own errors into DataErrors, must not
    swallow it."""


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Fail (Hung) instead of hanging: a hostile template must never stall the suite."""

    def expire(*_: object) -> None:
        raise Hung(f"still rendering after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def write(tmp_path: Path, source: str) -> Path:
    path = tmp_path / "hostile.j2"
    path.write_text(source, encoding="utf-8")
    return path


def render(path: Path, limits: TemplateLimits | None = None, shots: int = 0) -> Prompt:
    template = get_template(f"file:{path}") if limits is None else UserTemplate.load(path, limits)
    return template.render(QUESTION, EXAM, RenderOptions(shots))


def render_error(path: Path, limits: TemplateLimits | None = None) -> str:
    with deadline(SECONDS), pytest.raises(DataError) as info:
        render(path, limits)
    return str(info.value)


# --- runtime errors: exit 1 ("internal error") before; now the file, the line and what went wrong ----------

RUNTIME_ERRORS = [
    ("{{ question.nope }}", "'str object' has no attribute 'nope'", 1),
    ("题目\n{{ options[9].text }}", "list object has no element 9", 2),
    ("{{ 2**20000 }}", "'2 ** 20000' is too large a number (more than 4,300 digits)", 1),
    ("{{ 10 ** 5000 }}", "is too large a number (more than 4,300 digits)", 1),
    ("{{ 1 / 0 }}", "ZeroDivisionError: division by zero", 1),
    ("a\nb\n{{ points // 0 }}", "ZeroDivisionError: float floor division by zero", 3),
    ("{{ points % 0 }}", "ZeroDivisionError", 1),
    ("{{ 2.0 ** 10000 }}", "OverflowError", 1),
    ("{{ question() }}", "TypeError: 'str' object is not callable", 1),
    ("{{ options[0]() }}", "TypeError: 'dict' object is not callable", 1),
    ("{{ 'a' + 1 }}", "TypeError: can only concatenate str", 1),
    ("{{ '%d' % question }}", "TypeError", 1),
    ("{% for x in 5 %}{% endfor %}", "TypeError: 'int' object is not iterable", 1),
    ("{{ question[::0] }}", "ValueError: slice step cannot be zero", 1),
    ("{{ '{:d}'.format(question) }}", "ValueError", 1),
    ("{{ question|wordwrap(0) }}", "ValueError: invalid width 0", 1),
    ("{{ options|slice(0)|list }}", "ZeroDivisionError", 1),
    ("{{ options|sum }}", "TypeError", 1),
    ("{{ range(10 ** 6) }}", "OverflowError: Range too big", 1),
    ("{% if type %}\n{{ question|nope }}{% endif %}", "No filter named 'nope'", 2),
    ("{% if type %}{{ question is nope }}{% endif %}", "No test named 'nope'", 1),
    ("{{ options|map('nope')|list }}", "No filter named 'nope'", 1),
    ("{{ options|sort(attribute='nope') }}", "has no attribute 'nope'", 1),
    ("{{ namespace(a=1).b }}", "has no attribute 'b'", 1),
    ("{% macro f() %}{{ f() }}{% endmacro %}\n{{ f() }}", "recurses too deeply", 1),
    ("{{ dict(a=1)|dictsort(by='x') }}", "You can only sort by either", 1),
    ("{{ exemplars[0].answer }}", "list object has no element 0", 1),  # zero shots: no exemplars
]


@pytest.mark.parametrize(("source", "words", "line"), RUNTIME_ERRORS)
def test_a_runtime_error_names_the_file_the_line_and_the_reason(
    tmp_path: Path, source: str, words: str, line: int
) -> None:
    path = write(tmp_path, source)
    message = render_error(path)
    assert message.startswith(f"{path}: the prompt template ")
    assert words in message
    assert message.endswith(f"(line {line})")


# Anything a sandbox should refuse: introspection, dunder names, mutating the values it is given.
ESCAPES = [
    ("{{ question.__class__.__mro__ }}", "'__class__'", 1),
    ("{{ question.upper.__self__ }}", "'__self__'", 1),
    ("x\n{{ options.__len__() }}", "'__len__'", 2),
    ("{{ question|attr('__class__') }}", "'__class__'", 1),
    ("{{ '{0.__class__}'.format(question) }}", "'__class__'", 1),
    ("{{ cycler.__init__.__globals__ }}", "'__init__'", 1),
    ("{{ namespace(a=1)._Namespace__attrs }}", "'_Namespace__attrs'", 1),
    ("{{ options.append(1) }}", "'append'", 1),  # the values are read-only
    ("{{ options[0].update(letter='Z') }}", "'update'", 1),
    ("{{ options.extend(options) }}", "'extend'", 1),
]


@pytest.mark.parametrize(("source", "words", "line"), ESCAPES)
def test_escapes_from_the_sandbox_are_refused(tmp_path: Path, source: str, words: str, line: int) -> None:
    path = write(tmp_path, source)
    message = render_error(path)
    assert message.startswith(f"{path}: the prompt template reaches outside the values it is given")
    assert words in message
    assert message.endswith(f"(line {line})")


# Refused when the file is loaded, before any question: one file, only the values it is given.
LOAD_ERRORS = [
    ("{% include 'x.j2' %}", ":1: template uses {% include %}"),
    ("a\n{% extends 'base.j2' %}", ":2: template uses {% extends %}"),
    ("{% import 'x.j2' as x %}", ":1: template uses {% import %}"),
    ("\n\n{% from 'x.j2' import y %}", ":3: template uses {% from ... import %}"),
    ("{{ self }}", ": template uses unknown variable(s) self"),
    ("{% block b %}x{% endblock %}{{ self.b() }}", ": template uses unknown variable(s) self"),
    ("{{ lipsum(10 ** 9) }}", ": template uses unknown variable(s) lipsum"),
    ("{{ question|nope }}", ":1: template syntax error: No filter named 'nope'"),
    ("x\n{{ question is nope }}", ":2: template syntax error: No test named 'nope'"),
    ("{{ question|pprint }}", ":1: template syntax error: No filter named 'pprint'"),
    ("{{ question|urlize(target='x') }}", ":1: template syntax error: No filter named 'urlize'"),
    ("{{ " + "(" * 5000 + "1" + ")" * 5000 + " }}", ": template nests too deeply"),
    ("{% for x in options %}" * 30 + "{% endfor %}" * 30, ": template nests too deeply"),
    ("x" * (MAX_TEMPLATE_CHARS + 1), f": template holds more than {MAX_TEMPLATE_CHARS:,} characters"),
]


@pytest.mark.parametrize(("source", "words"), LOAD_ERRORS)
def test_templates_refused_when_loaded(tmp_path: Path, source: str, words: str) -> None:
    path = write(tmp_path, source)
    with deadline(SECONDS), pytest.raises(DataError) as info:
        get_template(f"file:{path}")
    assert str(info.value).startswith(f"{path}{words}")


def test_a_template_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "latin1.j2"
    path.write_bytes("{{ question }} é".encode("latin-1"))
    with pytest.raises(DataError, match=r"latin1\.j2: prompt template is not UTF-8"):
        get_template(f"file:{path}")


# --- time, steps and memory: refused before they hang or allocate -------------------------------------------

TOO_MUCH_WORK = [
    # three nested loops of 100,000 (10^15 iterations) never ended
    "{% for a in range(10**5) %}{% for b in range(10**5) %}{% for c in range(10**5) %}"
    "{% endfor %}{% endfor %}{% endfor %}",
    "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}",
    "{% for a in range(100000) %}{% for b in question %}{{ b }}{% endfor %}{% endfor %}",
    # exponential recursion: 2^40 calls, each shallow
    "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}",
    # a recursive loop that re-enters itself
    "{% for x in range(1000) recursive %}{{ loop(range(1000)) if loop.depth < 9 }}{% endfor %}",
    # lists built by lazy filters, read without a loop of the template's own
    "{% for x in range(100000) %}{{ range(100000)|select('odd')|list|length * 0 }}{% endfor %}",
    "{% for x in range(100000) %}{{ range(100000)|select('gt', 10**6)|list|length }}{% endfor %}",
]


@pytest.mark.parametrize("source", TOO_MUCH_WORK)
def test_a_template_that_never_ends_is_stopped(tmp_path: Path, source: str) -> None:
    path = write(tmp_path, source)
    started = time.perf_counter()
    message = render_error(path)
    assert time.perf_counter() - started < 10
    assert message.startswith(f"{path}: the prompt template ")
    limits = ("does too much work: more than 1,000,000 steps", "takes too long", "renders too much text")
    assert any(limit in message for limit in limits)


def test_the_time_limit_is_an_option_of_the_loader(tmp_path: Path) -> None:
    path = write(tmp_path, "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}")
    started = time.perf_counter()
    message = render_error(path, TemplateLimits(steps=10**12, seconds=0.3))
    assert time.perf_counter() - started < 3
    assert message.startswith(f"{path}: the prompt template takes too long: more than 0.3 seconds")
    message = render_error(path, TemplateLimits(steps=5_000))
    assert "does too much work: more than 5,000 steps" in message


# Each builds (or would build) far more than a prompt holds; before the fix most allocated a GB or more
# before the output limit applied.
TOO_LARGE = [
    ("{{ 'x'|center(10**9) }}", "center"),
    ("{{ 'x'.center(10**9) }}", "center"),
    ("{{ 'x'.ljust(10**9, '-') }}", "ljust"),
    ("{{ 'x'.rjust(10**9) }}", "rjust"),
    ("{{ '1'.zfill(10**9) }}", "zfill"),
    ("{{ ('\t' * 1000).expandtabs(10**6) }}", "expandtabs"),
    ("{{ question|indent(10**9) }}", "indent"),
    ("{{ question|indent('x' * 999999) }}", "indent"),
    ("{{ question|replace('', 'x' * 999999) }}", "replace"),
    ("{{ question.replace('', 'x' * 999999) }}", "replace"),
    ("{{ question|wordwrap(1, wrapstring='x' * 999999) }}", "wordwrap"),
    ("{{ range(100000)|join('x' * 999999) }}", "join"),
    ("{{ ('x' * 999999).join(range(100000)|map('string')) }}", "join"),
    ("{{ question.translate(question.maketrans({'扑': 'x' * 999999, '火': 'x' * 999999})) }}", "translate"),
    ("{{ '%1000000000d' % 1 }}", "%"),
    ("{{ '%.1000000000f' % 1.0 }}", "%"),
    ("{{ '%1000000000d'|format(1) }}", "format"),
    ("{{ ('%s' * 100000) % (('x' * 999999,) * 100000) }}", "%"),
    ("{{ ('%(a)s' * 100000) % {'a': 'x' * 999999} }}", "%"),
    ("{{ '{:>1000000000}'.format(1) }}", "format"),
    ("{{ '{:.1000000000f}'.format(1.0) }}", "format"),
    ("{{ '{0:>{1}}'.format(1, 10**9) }}", "format"),
    ("{{ ('{0}' * 100000).format('x' * 999999) }}", "format"),
    ("{{ '{a}{a}'.format_map({'a': 'x' * 999999}) }}", "format"),
    ("{{ question * 10**9 }}", "'* 1,000,000,000'"),
    ("{{ [question] * 10**9 }}", "'* 1,000,000,000'"),
    ("{{ 9 ** (10**9) }}", "digits"),
    ("{{ (1).to_bytes(10**9, 'big') }}", "to_bytes"),
    ("{{ question|batch(10**9, 'x')|list }}", "batch"),
    ("{{ question|slice(10**8, 'x')|list }}", "slice"),
    ("{{ question|tojson(indent=10**9) }}", "tojson"),
    # doubling: 2^40 times the question, by ~, +, a namespace, a recursive macro
    (
        "{% set ns = namespace(s=question) %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}"
        "{{ ns.s|length }}",
        "~",
    ),
    (
        "{% set ns = namespace(s=question) %}{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}"
        "{% endfor %}",
        "+",
    ),
    ("{% macro d(s, n) %}{{ d(s ~ s, n - 1) if n else s|length }}{% endmacro %}{{ d(question, 40) }}", "~"),
    # the same text shared many times: small in memory, huge once written out
    ("{% set a = [question] * 100000 %}{% set b = [a] * 100000 %}{{ b }}", "write"),
    ("{% set a = [question] * 100000 %}{% set b = [a] * 100000 %}{{ b|string }}", "string"),
    ("{% set a = [question] * 100000 %}{{ a|join }}", "join"),
    ("{% set a = [question] * 100000 %}{{ 'x' ~ a }}", "~"),
    # compared or hashed whole: 10^10 comparisons of the same text
    ("{% set a = [question] * 100000 %}{{ [a] * 100000 == [[question] * 100000] * 100000 }}", ""),
    ("{% set t = (question,) * 100000 %}{{ {(t,) * 100000: 1} }}", ""),
    ("{% set a = [question] * 100000 %}{{ ([a] * 100000)|select('eq', [1])|first }}", ""),
    ("{% set a = ['x' * 999999] * 100000 %}{{ a|map('upper')|list|length }}", ""),
    ("{% set a = ['x' * 999999] * 100000 %}{{ a|unique|list|length }}", ""),
    ("{% set a = ['x' * 999999] * 100000 %}{{ a|sort|first|length }}", ""),
    ("{{ range(100000)|map('center', 999999)|list|length }}", ""),
    # literal text written from a loop inside a macro: a GB of text before the output limit saw it
    (
        "{% macro m() %}{% for i in range(100000) %}{% for j in range(9) %}"
        + "0123456789" * 100
        + "{% endfor %}{% endfor %}{% endmacro %}{{ m()|length }}",
        "",
    ),
    ("{% set x %}{% for i in range(100000) %}" + "0123456789" * 100 + "{% endfor %}{% endset %}", ""),
]


@pytest.mark.parametrize(("source", "words"), TOO_LARGE)
def test_memory_stays_small_however_much_a_template_asks_for(tmp_path: Path, source: str, words: str) -> None:
    path = write(tmp_path, source)
    tracemalloc.start()
    try:
        message = render_error(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100 * 2**20, f"peak {peak / 2**20:.0f} MiB"
    assert message.startswith(f"{path}: the prompt template renders too much text: ")
    assert words in message


def test_ordinary_templates_render_as_before(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "{{ system }}【{{ type_zh }}】{{ question|replace('\\n', ' ') }}\n"
        "{% for o in options %}{{ '%s) %s'|format(o.letter, o.text) }}{{ '\\n' if not loop.last }}"
        "{% endfor %}\n"
        "{% for e in exemplars %}例：{{ e.question ~ ' => ' ~ e.answer }} {{ '{:>3}'.format(loop.index) }}\n"
        "{% endfor %}{% set ns = namespace(n=0) %}{% for o in options %}{% set ns.n = ns.n + 1 %}{% endfor %}"
        "{{ ns.n * 2 }} {{ (options|map(attribute='letter')|join('/')).center(9, '*') }} {{ 2 ** 10 }} "
        "{{ '-' * 3 }} {{ question|length }} {{ options|tojson }}"
        "{% autoescape true %}{{ '<b>' }}{% endautoescape %}"
        "答：",
    )
    assert render(path, shots=1).text == (
        "【单选题】扑救带电火灾 应选用（）。\nA) 水\nB) 二氧化碳\n"
        "例：安全色中表示禁止的是（）。 => A   1\n"
        '4 ***A/B*** 1024 --- 13 [{"letter": "A", "text": "\\u6c34"}, '
        '{"letter": "B", "text": "\\u4e8c\\u6c27\\u5316\\u78b3"}]&lt;b&gt;答：'
    )


def test_lists_add_up_in_linear_time(tmp_path: Path) -> None:
    # Python's sum copied the total at each list: 300,000 one-item lists took minutes
    path = write(tmp_path, "{{ ([[0]] * 300000)|sum(start=[])|length }}")
    with deadline(SECONDS):
        assert render(path).text == "300000"


# Ordinary templates render exactly as Jinja's own sandbox renders them.
FEATURES = [
    "{% for o in options %}{{ loop.index }}/{{ loop.length }}{{ ',' if not loop.last }}{{ loop.revindex }}"
    "{{ loop.cycle('a', 'b') }}{% else %}none{% endfor %}",
    "{% for o in [] %}x{% else %}empty{% endfor %}",
    "{% for x in [[1, [2]], [3]] recursive %}({% if x is iterable %}{{ loop(x) }}{% else %}{{ x }}"
    "{% endif %}){% endfor %}",
    "{% macro item(o, sep='. ') %}{{ o.letter ~ sep ~ o.text }}{{ caller() if caller }}{% endmacro %}"
    "{% for o in options %}{% call item(o) %}!{% endcall %}{% endfor %}",
    "{% filter upper %}{{ question }}{% endfilter %}{% set x %}[{{ type }}]{% endset %}{{ x * 2 }}",
    "{%- for o in options -%}\n  {{ o.letter }}\n{%- endfor %}{% raw %}{{ raw }}{% endraw %}",
    "{% set ns = namespace(n=0, s='') %}{% for o in options %}{% set ns.n = ns.n + 1 %}"
    "{% set ns.s = ns.s ~ o.letter %}{% endfor %}{{ ns.n }}{{ ns.s }}",
    "{{ 'A' in options|map(attribute='letter') }}{{ {'a': 1, 'b': [2]}['b'] }}{{ (1, 2) == (1, 2) }}"
    "{{ options[0] == {'letter': 'A', 'text': '水'} }}{{ 3 is odd }}{{ question is string }}",
    "{{ options|selectattr('letter', 'eq', 'B')|map(attribute='text')|first }}"
    "{{ range(10)|select('odd')|list }}{{ range(5)|reject('even')|sum }}{{ [[1], [2]]|sum(start=[]) }}",
    "{{ options|sort(attribute='text', reverse=true)|map(attribute='letter')|join }}"
    "{{ options|groupby('letter')|map(attribute='grouper')|list }}{{ [3, 1, 2]|max }}"
    "{{ [1, 1, 2]|unique|list }}",
    "{{ '%s=%d %5.2f %%'|format('a', 3, 2.5) }} {{ '%(q)s' % {'q': type} }} "
    "{{ '{:>6}|{:^5}|{!r}'.format(1, 'x', 'y') }}",
    "{{ question|center(30)|length }}{{ question|indent(2, first=true) }}{{ question|replace('（）', '__') }}"
    "{{ 'a b c d'|wordwrap(3) }}{{ question|truncate(9, true, '..', 0) }}{{ question|wordcount }}",
    "{{ options|tojson }}{{ options|tojson(2) }}{{ 'x'|e }}{{ '<b>'|striptags }}{{ 'a b'|urlencode }}",
    "{{ question.ljust(20, '.') }}{{ question.split('\\n') }}{{ 'x'.join(['a', 'b']) }}{{ '5'.zfill(3) }}"
    "{{ 'a\\tb'.expandtabs(4) }}{{ (255).to_bytes(2, 'big') }}",
    "{{ 2 ** 10 }} {{ 7 // 2 }} {{ 7 % 3 }} {{ 2 * 3.5 }} {{ 'ab' * 3 }} {{ [1] * 3 }} {{ [1] + [2] }} "
    "{{ -points }}",
    "{{ dict(a=1)|dictsort }}{{ options|batch(1, 'x')|list }}{{ options|slice(3, 'x')|list }}"
    "{{ options|first|items|list }}{{ cycler('a', 'b').next() }}{{ joiner(',')() }}",
    "{% autoescape true %}{{ '<i>' }}<b>{{ question|safe }}</b>{{ '<i>' ~ 'x' }}{% endautoescape %}",
    "{% if type == 'single' and points > 0 %}{{ type_zh }}{% elif type %}?{% endif %}{{ subject or '无' }}",
    "{% with n = options|length %}{{ n }}{% endwith %}{% for o in options if o.letter != 'A' %}{{ o.text }}"
    "{% endfor %}{% for o in options %}{{ loop.changed(o.letter) }}{% endfor %}",
]


@pytest.mark.parametrize("source", FEATURES)
def test_ordinary_features_render_as_in_jinja(tmp_path: Path, source: str) -> None:
    from jinja2 import StrictUndefined
    from jinja2.sandbox import SandboxedEnvironment

    from kaoshi.prompts.user import question_values

    values = {**question_values(QUESTION), "system": "", "exemplars": []}
    expected = SandboxedEnvironment(undefined=StrictUndefined).from_string(source).render(values)
    assert render(write(tmp_path, source)).text == expected


# --- the command line: exit 2 with the message, and no run written ------------------------------------------


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("\n{{ question.nope }}", "cannot be rendered: 'str object' has no attribute 'nope' (line 2)"),
        ("{{ 'x'|center(10**9) }}", "renders too much text"),
        ("{% for a in range(10**5) %}{% for b in range(10**5) %}{% endfor %}{% endfor %}", "too much work"),
    ],
)
def test_the_command_line_exits_2_and_writes_no_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, source: str, words: str
) -> None:
    path = write(tmp_path, source)
    show = ["prompt", "show", "--benchmark", "sample", "--question", "s-safe-1", "--prompt", f"file:{path}"]
    with deadline(SECONDS):
        assert main(show) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {path}: the prompt template ") and words in err
    store = tmp_path / "store.sqlite"
    run = [
        "run",
        "--benchmark",
        "sample",
        "--model",
        "random",
        "--prompt",
        f"file:{path}",
        "--store",
        str(store),
    ]
    with deadline(SECONDS):
        assert main(run) == 2
    assert words in capsys.readouterr().err
    assert not store.exists() or runs(store=store) == []


# --- property: any template made of these pieces loads and renders, or fails with a DataError --------------

PIECES = [
    "{{ ",
    " }}",
    "{% for x in ",
    " %}",
    "{% endfor %}",
    "{% if ",
    "{% endif %}",
    "{% set y = ",
    "{% macro m(a) %}",
    "{% endmacro %}",
    "m(x)",
    "question",
    "options",
    "exemplars",
    "x",
    "y",
    "loop.index",
    "range(10**5)",
    "|center(10**9)",
    "|join(",
    "|list",
    "|sort",
    "|first",
    "|format(",
    "|length",
    "|string",
    "|tojson",
    " ~ ",
    " + ",
    " * ",
    " ** ",
    " / ",
    " % ",
    " // ",
    "(",
    ")",
    "[",
    "]",
    ", ",
    "0",
    "1",
    "10**9",
    "'%s'",
    "'{}'",
    ".format(",
    ".center(",
    ".__class__",
    "._x",
    ".letter",
    "[0]",
    "namespace(",
    "dict(",
    "self",
    "'a'",
    "{% include 'x' %}",
    "\n",
    "{#",
    "#}",
    "-",
    "not ",
    " and ",
    " or ",
    " if ",
    " else ",
    "==",
    "is ",
    "defined",
    "none",
    "true",
]


@pytest.mark.slow  # 300 generated templates, each rendered under the limits: about 2 s
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(PIECES), max_size=24))
def test_any_template_renders_or_fails_with_a_clear_error(tmp_path: Path, pieces: list[str]) -> None:
    path = write(tmp_path, "".join(pieces))
    limits = TemplateLimits(steps=20_000, seconds=1.0)
    with deadline(SECONDS):
        try:
            template = UserTemplate.load(path, limits)
            template.render(QUESTION, EXAM, RenderOptions(1))
        except DataError as exc:
            assert str(exc).startswith(str(path))
