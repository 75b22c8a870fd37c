// Chat template engine semantics, each expected output produced by jinja2 3.1 under
// transformers' settings (tools/chat_template_oracle.py's environment): whitespace control,
// trim_blocks/lstrip_blocks, loops, scoping, filters, tests, operators, Python printing, and
// the errors (unsupported constructs at parse time, raise_exception at render time).
#include <gtest/gtest.h>

#include "chat/chat_template.h"
#include "io/io_test_files.h"
#include "support/testing.h"

namespace difftx::chat {
namespace {

using difftx::testing::error_of;

std::string render(const std::string& source, const std::string& variables = "{}") {
  return ChatTemplate::parse(source).render(nlohmann::ordered_json::array(), true, nlohmann::ordered_json::parse(variables));
}

struct Case {
  const char* source;
  const char* variables;
  const char* expected;
};

template <size_t N>
void expect_renders(const Case (&cases)[N]) {
  for (const Case& c : cases) {
    SCOPED_TRACE(c.source);
    std::string got;
    try {
      got = render(c.source, c.variables);
    } catch (const Error& e) {
      got = std::string("ERR ") + e.what();
    }
    EXPECT_EQ(got, c.expected);
  }
}

TEST(ChatTemplate, MatchesJinja2) {
  const Case cases[] = {
    {R"~(a  {%- if true -%}  b  {%- endif -%}  c)~", R"~({})~", R"~(abc)~"},
    {R"~(a
  {% if true %}
  b
  {% endif %}
c
)~", R"~({})~", R"~(a
  b
c)~"},
    {R"~(x {% if true %}y{% endif %}
z)~", R"~({})~", R"~(x yz)~"},
    {R"~(  {%+ if true %}k{% endif %})~", R"~({})~", R"~(  k)~"},
    {R"~({% if true +%}
k{% endif %})~", R"~({})~", R"~(
k)~"},
    {R"~({{ 'a' }}
{{ 'b' -}}
  c)~", R"~({})~", R"~(a
bc)~"},
    {R"~(  {# note #}
x{#- c -#}  y)~", R"~({})~", R"~(xy)~"},
    {R"~({% for x in xs %}{{ loop.index }}/{{ loop.index0 }}/{{ loop.revindex }}/{{ loop.first }}/{{ loop.last }}/{{ loop.length }} {% endfor %})~", R"~({"xs": ["a", "b", "c"]})~", R"~(1/0/3/True/False/3 2/1/2/False/False/3 3/2/1/False/True/3 )~"},
    {R"~({% for x in xs if x != 'b' %}{{ loop.index }}{{ x }}{% else %}none{% endfor %})~", R"~({"xs": ["a", "b", "c"]})~", R"~(1a2c)~"},
    {R"~({% for x in [] %}y{% else %}empty{% endfor %})~", R"~({})~", R"~(empty)~"},
    {R"~({% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %})~", R"~({"d": {"z": 1, "a": [1, "x"]}})~", R"~(z=1;a=[1, 'x'];)~"},
    {R"~({% for x in xs %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 4 %}{% break %}{% endif %}{{ x }}{% endfor %})~", R"~({"xs": [1, 2, 3, 4, 5]})~", R"~(13)~"},
    {R"~({% set ns = namespace(n=0) %}{% for x in xs %}{% set ns.n = ns.n + x %}{% set local = x %}{% endfor %}{{ ns.n }}{{ local }})~", R"~({"xs": [1, 2, 3]})~", R"~(6)~"},
    {R"~({% set x %}a{{ 1 + 1 }}b{% endset %}[{{ x }}])~", R"~({})~", R"~([a2b])~"},
    {R"~({% set x | upper %}abc{% endset %}{{ x }})~", R"~({})~", R"~(ABC)~"},
    {R"~({{ '  hi  ' | trim }}|{{ 'abc' | upper }}|{{ 'hello world' | title }}|{{ 'hELLO' | capitalize }}|{{ 'aXa' | replace('a','b') }})~", R"~({})~", R"~(hi|ABC|Hello World|Hello|bXb)~"},
    {R"~({{ xs | length }} {{ xs | first }} {{ xs | last }} {{ xs | join(', ') }} {{ xs | reverse | list }} {{ xs | sort }} {{ xs | unique | list }})~", R"~({"xs": [3, 1, 2, 1]})~", R"~(4 3 1 3, 1, 2, 1 [1, 2, 1, 3] [1, 1, 2, 3] [3, 1, 2])~"},
    {R"~({{ undefined_var | default('dflt') }} {{ '' | d('e', true) }} {{ none | string }})~", R"~({})~", R"~(dflt e None)~"},
    {R"~({{ d | tojson }} {{ d | tojson(indent=2) }} {{ 'é"\n' | tojson }} {{ [] | tojson(indent=4) }})~", R"~({"d": {"b": [1, 2.5, null, true], "a": {}}})~", R"~({"b": [1, 2.5, null, true], "a": {}} {
  "b": [
    1,
    2.5,
    null,
    true
  ],
  "a": {}
} "é\"\n" [])~"},
    {R"~({{ ms | selectattr('role', 'equalto', 'user') | map(attribute='content') | list }} {{ ms | rejectattr('role', 'equalto', 'user') | list | length }})~", R"~({"ms": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]})~", R"~(['a', 'c'] 1)~"},
    {R"~({{ xs | select('odd') | list }} {{ xs | reject('divisibleby', 3) | list }} {{ xs | map('string') | join }})~", R"~({"xs": [1, 2, 3, 4, 5, 6]})~", R"~([1, 3, 5] [1, 2, 4, 5] 123456)~"},
    {R"~({{ '3' | int + 1 }} {{ '2.5' | float }} {{ -3 | abs }} {{ 2.567 | round(2) }} {{ 'one two  three' | wordcount }})~", R"~({})~", R"~(4 2.5 3 2.57 3)~"},
    {R"~({{ 'a
b

c' | indent(2) }}|{{ 'x
y' | indent(3, true) }}|{{ 'x
y' | indent(-2) }})~", R"~({})~", R"~(a
  b

  c|   x
   y|x
y)~"},
    {R"~({{ d | dictsort }} {{ d | items | list }})~", R"~({"d": {"b": 2, "a": 1}})~", R"~([('a', 1), ('b', 2)] [('b', 2), ('a', 1)])~"},
    {R"~({{ x is defined }} {{ y is undefined }} {{ none is none }} {{ 'a' is string }} {{ 1 is number }} {{ 1 is integer }} {{ 1.0 is float }} {{ [] is iterable }} {{ {} is mapping }} {{ 'a' is sequence }} {{ true is boolean }} {{ true is true }} {{ 0 is false }} {{ 4 is even }} {{ 3 is odd }} {{ 9 is divisibleby 3 }} {{ 'a' is in 'cat' }} {{ x is not none }})~", R"~({"x": 1})~", R"~(True True True True True True True True True True True True False True True True True True)~"},
    {R"~({{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 2 ** 10 }} {{ 1 + 2.0 }} {{ 'a' ~ 1 ~ none ~ true }} {{ 'ab' * 3 }} {{ [1] + [2] }} {{ -(3) }})~", R"~({})~", R"~(3 -4 1 2 3.5 1024 3.0 a1NoneTrue ababab [1, 2] -3)~"},
    {R"~({{ 1 < 2 < 3 }} {{ 'a' in ['a'] }} {{ 'z' not in 'abc' }} {{ 1 == 1.0 }} {{ 'x' if false else 'y' }} [{{ 'x' if false }}] {{ not 1 is defined }} {{ 0 or 'b' }} {{ 1 and 'c' }})~", R"~({})~", R"~(True True True True y [] False b c)~"},
    {R"~({{ s[1] }} {{ s[-1] }} {{ s[1:3] }} {{ s[::-1] }} {{ s[::2] }} {{ xs[1:] }} {{ xs[:-1] }} {{ xs[-2:] }})~", R"~({"s": "h€llo😀", "xs": [1, 2, 3]})~", R"~(€ 😀 €l 😀oll€h hlo [2, 3] [1, 2] [2, 3])~"},
    {R"~({{ m.content }} {{ m['role'] }} {{ m.missing }}|{{ m.get('role') }} {{ m.get('x', 'dflt') }} {{ m.keys() | list }} {{ m.values() | list | length }})~", R"~({"m": {"role": "user", "content": "hi"}})~", R"~(hi user |user dflt ['role', 'content'] 2)~"},
    {R"~({{ s.strip() }}|{{ s.lstrip() }}|{{ s.rstrip() }}|{{ s.split() }}|{{ 'a,b,,c'.split(',') }}|{{ 'a,b,c'.split(',', 1) }}|{{ s.startswith('  x') }}|{{ s.endswith(('q', 'y ')) }}|{{ 'xax'.strip('x') }}|{{ 'Ab'.lower() }}{{ 'Ab'.upper() }}|{{ 'a-b'.replace('-', '+') }})~", R"~({"s": "  x y "})~", R"~(x y|x y |  x y|['x', 'y']|['a', 'b', '', 'c']|['a', 'b,c']|True|True|a|abAB|a+b)~"},
    {R"~({{ [1, 'a', none, true, 2.5, {'k': 'v'}] }} {{ {'a': [1]} }} {{ "it's" }} {{ ["it's"] }} {{ 1e16 }} {{ 0.1 + 0.2 }} {{ 1e-5 }} {{ 100.0 }})~", R"~({})~", R"~([1, 'a', None, True, 2.5, {'k': 'v'}] {'a': [1]} it's ["it's"] 1e+16 0.30000000000000004 1e-05 100.0)~"},
    {R"~({{ '\u00e9\x41\t|' }} {{ "a" 'b' }})~", R"~({})~", R"~(éA	| ab)~"},
    {R"~({% if x %}a{% elif y %}b{% else %}c{% endif %}{% if not x and not y %}d{% endif %})~", R"~({"y": 1})~", R"~(b)~"},
    {R"~({{ range(3) | list }} {{ range(1, 7, 2) | list }} {{ dict(a=1) }})~", R"~({})~", R"~([0, 1, 2] [1, 3, 5] {'a': 1})~"},
    {R"~({% for a in [1, 2] %}{% for b in [3, 4] %}{{ loop.index }}{{ a }}{{ b }} {% endfor %}{{ loop.last }}{% endfor %})~", R"~({})~", R"~(113 214 False123 224 True)~"},
    {R"~({{ (1, 2) | list }} {{ xs | sum }} {{ xs | min }} {{ xs | max }})~", R"~({"xs": [4, 2, 9]})~", R"~([1, 2] 15 2 9)~"},
    {R"~({{ 'abc' | list }} {{ 'xyz' | reverse }} {{ d | list }} {{ d | length }} {{ 'héllo' | length }})~", R"~({"d": {"q": 1, "p": 2}})~", R"~(['a', 'b', 'c'] zyx ['q', 'p'] 2 5)~"},
    {R"~({% macro m(a, b=a ~ '!') %}{{ a }}{{ b }}{% endmacro %}{{ m('x') }} {{ m('y', 'z') }})~", R"~({})~", R"~(xx! yz)~"},
    {R"~({% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}{{ greet('a') }} {{ greet('b', '?') }} {{ greet(punct='.', name='c') }} [{{ greet() }}])~", R"~({})~", R"~(Hi a! Hi b? Hi c. [Hi !])~"},
    {R"~({% set top = 'T' %}{% macro m(x) %}{{ top }}{{ x }}{{ item is defined }}{% set top = 'inner' %}{% endmacro %}{% for item in [1] %}{{ m(item) }}{% endfor %}{{ top }})~", R"~({})~", R"~(T1FalseT)~"},
    {R"~({%- macro render(c) -%}
  {%- if c is string -%}{{ c }}{%- else -%}{%- for p in c -%}{{ p.text }}{%- endfor -%}{%- endif -%}
{%- endmacro -%}
{{ render('s') }}|{{ render([{'text': 'a'}, {'text': 'b'}]) }})~", R"~({})~", R"~(s|ab)~"},
    {R"~({% generation %}{% set g = 1 %}gen{% endgeneration %}[{{ g }}])~", R"~({})~", R"~(gen[])~"},
    {R"~({{ 'straße'.upper() }} {{ 'ÉCOLE Ωμέγα' | lower }} {{ 'élan vital' | title }} {{ 'émile ZOLA' | capitalize }} {{ '　wide　' | trim }}|)~", R"~({})~", R"~(STRASSE école ωμέγα Élan Vital Émile zola wide|)~"},
    {R"~({{ 2.5 | round }} {{ 3.5 | round }} {{ 2.567 | round(1, 'floor') }} {{ -2.5 is even }} {{ 4.0 is even }} {{ 7 is divisibleby 3 }})~", R"~({})~", R"~(2.0 4.0 2.5 False True False)~"},
    // Integers beyond int64 (JSON's unsigned 64-bit ones; Python's are unbounded) stay exact.
    {R"~({{ n }} {{ [n] }} {{ n | tojson }} {{ d | tojson }} {{ n + 1 }} {{ n - m }} {{ n == m + 1 }} {{ n > m }} {{ n | string }} {{ n is integer }} {{ -n }} {{ (n * 2) // 3 }})~", R"~({"n": 18446744073709551615, "m": 18446744073709551614, "d": {"id": 9223372036854775808, "x": [-9223372036854775808]}})~", R"~(18446744073709551615 [18446744073709551615] 18446744073709551615 {"id": 9223372036854775808, "x": [-9223372036854775808]} 18446744073709551616 1 True True 18446744073709551615 True -18446744073709551615 12297829382473034410)~"},
    {R"~({{ 170141183460469231731687303715884105727 }} {{ -170141183460469231731687303715884105727 - 1 }} {{ '18446744073709551616' | int }} {{ 1e20 | int }} {{ 2 ** 100 }} {{ (-2) ** 127 }} {{ 1 ** 1000000000000000000000 }} {{ (-n) | abs }} {{ -n | float }} {{ xs[-n:] }} {{ xs[:n] }} {{ xs[-n] is defined }} {{ xs[n] is defined }})~", R"~({"n": 18446744073709551615, "xs": [1, 2]})~", R"~(170141183460469231731687303715884105727 -170141183460469231731687303715884105728 18446744073709551616 100000000000000000000 1267650600228229401496703205376 -170141183460469231731687303715884105728 1 18446744073709551615 -1.8446744073709552e+19 [1, 2] [1, 2] False False)~"},
  };
  expect_renders(cases);
}

// Python's printf-style formatting: the % operator on a string and the format filter (the
// pythonic tool-call templates print arguments with "%s" | format(value)).
TEST(ChatTemplate, PercentFormattingMatchesPython) {
  const Case cases[] = {
    {R"~({{ '%s|%5s|%-5s|%.2s|%r' % ('a', 'ab', 'cd', 'xyz', "it's") }})~", R"~({})~", R"~(a|   ab|cd   |xy|"it's")~"},
    {R"~({{ '%d %i %05d %+d % d %-4d| %.3d' % (3.7, true, 42, 5, 5, 7, 7) }})~", R"~({})~", R"~(3 1 00042 +5  5 7   | 007)~"},
    {R"~({{ '%x %X %o %#x %#o %x' % (255, 255, 8, 255, 8, -255) }})~", R"~({})~", R"~(ff FF 10 0xff 0o10 -ff)~"},
    {R"~({{ '%f %.2f %e %g %G %10.3f|%-10.2e|' % (1.5, 2.345, 12345.678, 0.0001, 1e20, 3.14159, 1234.5) }})~", R"~({})~", R"~(1.500000 2.35 1.234568e+04 0.0001 1E+20      3.142|1.23e+03  |)~"},
    {R"~({{ '%c%c %%|%*d|%-*s|' % (65, 'z', 5, 42, 4, 'a') }})~", R"~({})~", R"~(Az %|   42|a   |)~"},
    {R"~({{ '%(a)s-%(b)05.1f' % d }} {{ '%s' % d }} {{ '%s' % [1, none] }} {{ '%s' % n }} {{ 'x' % () }})~", R"~({"d": {"a": 1, "b": 2.25}, "n": 18446744073709551615})~", R"~(1-002.2 {'a': 1, 'b': 2.25} [1, None] 18446744073709551615 x)~"},
    {R"~({{ '%s' | format(x) }} {{ '%sr' | format(x) }} {{ '%s=%d' | format('k', 3) }} {{ '%(name)s' | format(name='v') }} {{ 'plain' | format }})~", R"~({"x": {"city": "Z\u00fcrich", "days": [1, 2]}})~", R"~({'city': 'Zürich', 'days': [1, 2]} {'city': 'Zürich', 'days': [1, 2]}r k=3 v plain)~"},
    {R"~({{ '%05f|%-6f|%+f|% f|%f|%+.1e|%05.1F' % (1e999, 1e999, -1e999, 1e999 - 1e999, -(1e999 - 1e999), 1e999, 1e999 - 1e999) }})~", R"~({})~", R"~(00inf|inf   |-inf| nan|nan|+inf|00NAN)~"},
    {R"~({{ '%#5.0e|%#.0f|%-+10.2g|%#g|%.0g|%08.3f|%c' % (3.0, 2.0, 0.0001234, 1.0, 2.5, -3.14159, 128512) }})~", R"~({})~", R"~(3.e+00|2.|+0.00012  |1.00000|2|-003.142|😀)~"},
    {R"~({{ '%#.2g|%#.3g|%#.1g|%.2g' % (99.99, 999.9, 9.9, 99.99) }} {{ '{:#.2n}|{:#.2g}|{:#.2}|{:#.3G}'.format(99.99, 99.99, 99.99, 999.9) }})~", R"~({})~", R"~(1.0e+02|1.00e+03|1.e+01|1e+02 1.0e+02|1.0e+02|1.0e+02|1.00E+03)~"},
    {R"~({{ '%a|%5a|%.3a|%a' % ('é', 'x', 'é😀', [1, 'ü']) }})~", R"~({})~", R"~('\xe9'|  'x'|'\x|[1, '\xfc'])~"},
    {R"~({{ '%s-%s' % ((1,) * 2) }} {{ (1, 2) + (3,) }} {{ 2 * (0,) }})~", R"~({})~", R"~(1-1 (1, 2, 3) (0, 0))~"},
  };
  expect_renders(cases);
  EXPECT_EQ(error_of([] { render("{{ '%s %s' % ('a',) }}"); }),
            "chat template line 1: not enough arguments for format string");
  EXPECT_EQ(error_of([] { render("{{ 'abc' % 5 }}"); }),
            "chat template line 1: not all arguments converted during string formatting");
  EXPECT_EQ(error_of([] { render("{{ '%d' % 'x' }}"); }),
            "chat template line 1: %d format: a real number is required, not str");
  EXPECT_EQ(error_of([] { render("{{ '%x' % 1.5 }}"); }),
            "chat template line 1: %x format: an integer is required, not float");
  EXPECT_EQ(error_of([] { render("{{ '%q' % 1 }}"); }),
            "chat template line 1: unsupported format character 'q' (0x71) at index 1");
  EXPECT_EQ(error_of([] { render("{{ 'ab%' % 1 }}"); }), "chat template line 1: incomplete format");
  EXPECT_EQ(error_of([] { render("{{ '%(a)s' % 'x' }}"); }), "chat template line 1: format requires a mapping");
  EXPECT_EQ(error_of([] { render("{{ '%s' | format(1, a=2) }}"); }),
            "chat template line 1: can't handle positional and keyword arguments at the same time");
  EXPECT_EQ(error_of([] { render("{{ '%d' % (1e999 - 1e999) }}"); }),
            "chat template line 1: cannot convert float NaN to integer");
  // Python would build any width; difftx refuses widths and precisions past 100000 and results past 64 MiB.
  EXPECT_EQ(error_of([] { render("{{ '%1000000000d' % 1 }}"); }),
            "chat template line 1: width too big (difftx stops at 100000)");
  EXPECT_EQ(error_of([] { render("{{ '%.100001f' % 1 }}"); }),
            "chat template line 1: precision too big (difftx stops at 100000)");
  EXPECT_EQ(error_of([] { render("{{ '%*d' % (-100001, 1) }}"); }),
            "chat template line 1: width too big (difftx stops at 100000)");
  EXPECT_EQ(error_of([] { render("{{ ('%100000s' * 700) % ((1,) * 700) }}"); }),
            "chat template line 1: a formatted string passed 64 MiB (difftx stops there)");
}

// str.format and str.format_map as jinja2's sandbox runs them: automatic, numbered and named fields,
// attributes and keys looked up as the sandbox does (a missing one is undefined), conversions, and the
// format-spec mini-language of str, int, bool and float (fill, align, sign, z, #, 0, width, grouping,
// precision, types); every error is Python's own message.
TEST(ChatTemplate, StrFormatMatchesPython) {
  const Case cases[] = {
    {R"~({{ '{} {}|{{}} {{{}}}'.format(1, 'a', 'b') }} {{ '{0}{1}{0}|{a}-{b}'.format(1, 'a', a=1, b=2) }} {{ 'x'.format(1, a=2) }} {{ '{00}|{01}'.format(7, 8) }})~", R"~({})~", R"~(1 a|{} {b} 1a1|1-2 x 7|8)~"},
    {R"~({{ '{0[role]} {0.role} {m.content} [{0.missing}] {0[1]} [{0.__class__}]'.format(m, m=m) }} {{ '{0[1]} [{0[5]}] [{0[-1]}] {0[00]}'.format(xs) }} {{ '{x[1]}'.format(x='hello') }})~", R"~({"m": {"role": "user", "content": "hi"}, "xs": [5, 6]})~", R"~(user user hi []  [] 6 [] [] 5 e)~"},
    {R"~({{ '{0[a][b]}{0[a].b} {0[0]} {a.a.b}'.format(d, a=d) }} {{ '{0[a]} {}'.format(d, 9) }})~", R"~({"d": {"a": {"b": 7}, "0": "z"}})~", R"~(77  7 {'b': 7} {'a': {'b': 7}, '0': 'z'})~"},
    {R"~({{ '{0!r} {0!s} {0!a} {1!a}'.format('é', x) }} {{ '{}|{!r}|{}|{!r}|{}'.format([1, 'a'], {'k': 'v'}, none, nothing, nothing) }})~", R"~({"x": {"a": [1, "é😀\u0100"]}})~", R"~('é' é '\xe9' {'a': [1, '\xe9\U0001f600\u0100']} [1, 'a']|{'k': 'v'}|None|Undefined|)~"},
    {R"~({{ '{:>5}|{:<5}|{:^5}|{:*^6}|{:.2}|{:05}|{:é^7}|{:^5}|' .format('a', 'b', 'c', 'd', 'abc', 'ab', 'x', 'ab') }})~", R"~({})~", R"~(    a|b    |  c  |**d***|ab|ab000|éééxééé| ab  |)~"},
    {R"~({{ '{:05}|{:+}|{: }|{:,}|{:_}|{:_x}|{:#x}|{:#b}|{:#o}|{:X}|{:x}|{:#X}|{:_b}'.format(42, 3, 3, 1234567, 1234567, 1234567, 255, 5, 8, 255, -255, -255, 255) }})~", R"~({})~", R"~(00042|+3| 3|1,234,567|1_234_567|12_d687|0xff|0b101|0o10|FF|-ff|-0XFF|1111_1111)~"},
    {R"~({{ '{:010,}|{:09,}|{:08,}|{:0=10,}|{:0,}|{:012,}|{:^012,}|{:*=12,}|{:=^12}'.format(1234, 1234, 1234, 1234, 1, -1e20, -1234, -1234, -1234) }})~", R"~({})~", R"~(00,001,234|0,001,234|0,001,234|00,001,234|1|-000,001e+20|000-1,234000|-******1,234|===-1234====)~"},
    {R"~({{ '{:_o}|{:_X}|{:#_x}|{:010_x}|{:#010_x}|{:#010x}|{:#010b}|{:,}'.format(123456789, 123456789, 123456789, 255, 255, 255, -5, 1234567890123456789012345678901234567) }})~", R"~({})~", R"~(7_2674_6425|75B_CD15|0x75b_cd15|0_0000_00ff|0x000_00ff|0x000000ff|-0b0000101|1,234,567,890,123,456,789,012,345,678,901,234,567)~"},
    {R"~({{ '{:c}{:c}|{:05c}|{:*^5c}|{:<3c}|{:c}|'.format(65, 233, 65, 66, 128512, true) }})~", R"~({})~", R"~(Aé|0000A|**B**|😀  ||)~"},
    {R"~({{ '{:>5}|{}|{:d}|{:#x}|{:%}|{:,}'.format(true, true, true, true, true, true) }})~", R"~({})~", R"~(    1|True|1|0x1|100.000000%|1)~"},
    {R"~({{ '{:=5}|{:0<5}|{:0>5}|{:0^5}|{:-}|{:-5}|{: 5}|{:n}|{:010n}'.format(-3, -3, -3, -3, -3, 3, 3, 1234567, -12) }})~", R"~({})~", R"~(-   3|-3000|000-3|0-300|-3|    3|    3|1234567|-000000012)~"},
    {R"~({{ '{:.2f}|{:.3e}|{:g}|{:.3g}|{:%}|{:.1%}|{}|{:.3}|{:.2}|{:10.3f}|{:<10.2e}|'.format(3.14159, 1234.5, 0.0001, 1234567.0, 0.25, 0.125, 1.5, 100.0, 100.0, 3.14159, 1234.5) }})~", R"~({})~", R"~(3.14|1.234e+03|0.0001|1.23e+06|25.000000%|12.5%|1.5|1e+02|1e+02|     3.142|1.23e+03  |)~"},
    {R"~({{ '{:.3}|{:.3}|{:.3}|{:.3}|{:.3}|{:.1}|{:.2}|{:.2}|{:.3}|{:.17}'.format(1.0, 12.0, 123.0, 0.0001, 0.00001234, 9.99, 9.99, 0.0001234, 0.0, 0.1) }})~", R"~({})~", R"~(1.0|12.0|1.23e+02|0.0001|1.23e-05|1e+01|1e+01|0.00012|0.0|0.10000000000000001)~"},
    {R"~({{ '{:#}|{:#}|{:#.3}|{:#.0f}|{:#g}|{:#.3g}|{:.0}|{:.0g}|{:.0f}|{:.0%}|{:#.0%}|{:#.0e}'.format(1e16, 1.5, 100.0, 2.0, 1.0, 1.0, 2.5, 2.5, 2.5, 0.025, 0.5, 1.0) }})~", R"~({})~", R"~(1.e+16|1.5|1.00e+02|2.|1.00000|1.00|2e+00|2|2|2%|50.%|1.e+00)~"},
    {R"~({{ '{:,}|{:,}|{:_}|{:012,.2f}|{:,}|{:,.2f}|{:_.3f}|{:,g}|{:,}|{:,e}|{:,%}|{:,}'.format(1234.5678e10, 1e20, 12345.5, 1234.5, -0.0, 1234567.891, 1234567.891, 1234567.0, 1234.5, 1234.5, 12345.6, 0.000012345) }})~", R"~({})~", R"~(12,345,678,000,000.0|1e+20|12_345.5|0,001,234.50|-0.0|1,234,567.89|1_234_567.891|1.23457e+06|1,234.5|1.234500e+03|1,234,560.000000%|1.2345e-05)~"},
    {R"~({{ '{:z}|{:z.1f}|{:z.3}|{:ze}|{:z%}|{:z.0f}|{:.3}'.format(-0.0, -0.01, -0.0, -0.0, -0.0, -0.4, -0.0) }})~", R"~({})~", R"~(0.0|0.0|0.0|0.000000e+00|0.000000%|0|-0.0)~"},
    {R"~({{ '{:06.2f}|{:+06.1f}|{:06}|{:^7.2f}|{:.2f}|{:e}|{:%}|{:.3%}|{:e}|{:.20f}|{:.0f}{:.0f}{:.0f}'.format(-1.5, 1.5, -1.5, 3, 5, 5, 5, 1, 123456789012345678901234567890, 0.1, 0.5, 1.5, 2.5) }})~", R"~({})~", R"~(-01.50|+001.5|-001.5| 3.00  |5.00|5.000000e+00|500.000000%|100.000%|1.234568e+29|0.10000000000000000555|022)~"},
    {R"~({% set inf = inf | float %}{% set nan = nan | float %}{{ '{:G}|{:E}|{:F}|{:010F}|{:=+8}|{:010}|{:%}|{:+}|{:f}|{: }|{:n}|{:n}'.format(1e-20, 12345.678, inf, inf, inf, -inf, inf, nan, -nan, nan, 1234567.0, 0.000001) }})~", R"~({"inf": "inf", "nan": "nan"})~", R"~(1E-20|1.234568E+04|INF|0000000INF|+    inf|-000000inf|inf%|+nan|nan| nan|1.23457e+06|1e-06)~"},
    {R"~({{ '{:{w}}|{:{}}|{:{}.{}}|{:>{w}.{p}f}'.format('a', 'b', 4, 3.14159, 8, 3, 2.5, w=3, p=2) }} {{ '{0:{1}}|{0:{0}}'.format(3, 'x<5') }})~", R"~({})~", R"~(a  |b   |    3.14|2.50 3xxxx|  3)~"},
    {R"~({{ '{0.role!r:>10}|{0[content]!s:.2}|{0.role!s:}|{0.role:}'.format(m) }})~", R"~({"m": {"role": "user", "content": "hello"}})~", R"~(    'user'|he|user|user)~"},
    {R"~({{ '{x}-{x[0]}'.format_map(d) }})~", R"~({"d": {"x": [5, 6]}})~", R"~([5, 6]-5)~"},
  };
  expect_renders(cases);
  const std::pair<const char*, const char*> errors[] = {
    {"{{ '{} {0}'.format(1) }}", "cannot switch from manual field specification to automatic field numbering"},
    {"{{ '{0} {}'.format(1) }}", "cannot switch from manual field specification to automatic field numbering"},
    {"{{ '{} {}'.format(1) }}", "tuple index out of range"},
    {"{{ '{0}'.format_map({}) }}", "tuple index out of range"},
    {"{{ '{x}'.format(1) }}", "KeyError: 'x'"},
    {"{{ '{[a]}'.format({'a': 1}) }}", "KeyError: ''"},
    {"{{ 'a}'.format(1) }}", "Single '}' encountered in format string"},
    {"{{ 'a{'.format(1) }}", "Single '{' encountered in format string"},
    {"{{ '{0!x}'.format(1) }}", "Unknown conversion specifier x"},
    {"{{ '{0!rr}'.format(1) }}", "expected ':' after conversion specifier"},
    {"{{ '{0!'.format(1) }}", "end of string while looking for conversion specifier"},
    {"{{ '{0:'.format(1) }}", "unmatched '{' in format spec"},
    {"{{ '{0[}'.format(1) }}", "expected '}' before end of string"},
    {"{{ '{0{'.format(1) }}", "unexpected '{' in field name"},
    {"{{ '{0[a]x}'.format({}) }}", "Only '.' or '[' may follow ']' in format field specifier"},
    {"{{ '{0.}'.format(1) }}", "Empty attribute in format string"},
    {"{{ '{0[]}'.format(1) }}", "Empty attribute in format string"},
    {"{{ '{99999999999999999999999}'.format(1) }}", "Too many decimal digits in format string"},
    {"{{ '{:{:{}}}'.format(1, 2, 3) }}", "Max string recursion exceeded"},
    {"{{ '{:d}'.format(1.5) }}", "Unknown format code 'd' for object of type 'float'"},
    {"{{ '{:s}'.format(true) }}", "Unknown format code 's' for object of type 'bool'"},
    {"{{ '{:é}'.format(1) }}", "Unknown format code '\\xe9' for object of type 'int'"},
    {"{{ '{:+}'.format('ab') }}", "Sign not allowed in string format specifier"},
    {"{{ '{: }'.format('ab') }}", "Space not allowed in string format specifier"},
    {"{{ '{:#}'.format('ab') }}", "Alternate form (#) not allowed in string format specifier"},
    {"{{ '{:z}'.format('ab') }}", "Negative zero coercion (z) not allowed in string format specifier"},
    {"{{ '{:=5}'.format('ab') }}", "'=' alignment not allowed in string format specifier"},
    {"{{ '{:.2d}'.format(5) }}", "Precision not allowed in integer format specifier"},
    {"{{ '{:z}'.format(5) }}", "Negative zero coercion (z) not allowed in integer format specifier"},
    {"{{ '{:+c}'.format(65) }}", "Sign not allowed with integer format specifier 'c'"},
    {"{{ '{:#c}'.format(65) }}", "Alternate form (#) not allowed with integer format specifier 'c'"},
    {"{{ '{:c}'.format(1114112) }}", "%c arg not in range(0x110000)"},
    {"{{ '{:,s}'.format('a') }}", "Cannot specify ',' with 's'."},
    {"{{ '{:,x}'.format(1) }}", "Cannot specify ',' with 'x'."},
    {"{{ '{:_,}'.format(1) }}", "Cannot specify both ',' and '_'."},
    {"{{ '{:5ss}'.format(1) }}", "Invalid format specifier '5ss' for object of type 'int'"},
    {"{{ '{:.}'.format(1.0) }}", "Format specifier missing precision"},
    {"{{ '{:>5}'.format(none) }}", "unsupported format string passed to NoneType.__format__"},
    {"{{ '{:>5}'.format(nothing) }}", "unsupported format string passed to Undefined.__format__"},
    {"{{ '{0.x}'.format(nothing) }}", "'nothing' is undefined"},
    {"{{ '{x}'.format_map(5) }}", "'int' object is not subscriptable"},
    {"{{ '{x}'.format_map({}, 1) }}", "format_map() takes exactly one argument (2 given)"},
    // Python would build any width; difftx refuses widths and precisions past 100000 and results past 64 MiB.
    {"{{ '{:1000000000}'.format(1) }}", "width too big (difftx stops at 100000)"},
    {"{{ '{:{}}'.format(1, 10 ** 9) }}", "width too big (difftx stops at 100000)"},
    {"{{ '{:.1000000000f}'.format(1.0) }}", "precision too big (difftx stops at 100000)"},
    {"{{ 'a\\nb' | indent(1000000) }}", "indent width too big (difftx stops at 100000)"},
    {"{{ ('{0:100000}' * 700).format(1) }}", "a formatted string passed 64 MiB (difftx stops there)"},
  };
  for (const auto& [source, message] : errors) {
    SCOPED_TRACE(source);
    EXPECT_EQ(error_of([&] { render(source); }), std::string("chat template line 1: ") + message);
  }
}

// {% call %}: the called macro gets the block as caller(), which sees the scopes of the call site
// (MiniCPM3's tool template builds its pydantic classes with a recursive call block).
TEST(ChatTemplate, CallBlocksPassTheirBodyAsCaller) {
  const Case cases[] = {
    {R"~({% macro m(x) %}[{{ caller() }}{{ x }}]{% endmacro %}{% for i in [1, 2] %}{% call m(i) %}c{{ i }}{% endcall %}{% endfor %})~", R"~({})~", R"~([c11][c22])~"},
    {R"~({% macro m() %}{{ caller(1) }}{{ caller(2, 'z') }}{% endmacro %}{% call(a, b='y') m() %}<{{ a }}{{ b }}>{% endcall %})~", R"~({})~", R"~(<1y><2z>)~"},
    {R"~({%- macro fields(spec) %}{%- set ns = namespace(f = caller()) %}{%- for k, v in spec | items %}{%- if v is mapping %}{%- call fields(v) %}{{ '\nclass ' + k }}{%- endcall %}{%- endif %}{%- set ns.f = ns.f + ' ' + k %}{%- endfor %}{{- ns.f }}{%- endmacro %}{% call fields({'a': 1, 'b': {'c': 2}}) %}top:{% endcall %})~", R"~({})~", R"~(
class b ctop: a b)~"},
    {R"~({% macro outer() %}{% for t in ['p', 'q'] %}{% call inner() %}{{ t }}{{ loop.index }}{% endcall %}{% endfor %}{% endmacro %}{% macro inner() %}({{ caller() }}){% endmacro %}{{ outer() }})~", R"~({})~", R"~((p1)(q2))~"},
    {R"~({% macro m() %}{{ caller() }}{% endmacro %}{% set v = 'out' %}{% call m() %}{% set v = 'in' %}{{ v }}{% endcall %}{{ v }})~", R"~({})~", R"~(inout)~"},
  };
  expect_renders(cases);
  EXPECT_EQ(error_of([] { render("{% macro m() %}[{{ caller() }}]{% endmacro %}{{ m() }}"); }),
            "chat template line 1: No caller defined");
  EXPECT_EQ(error_of([] { render("{% macro m() %}x{% endmacro %}{% call m() %}body{% endcall %}"); }),
            "chat template line 1: macro 'm' was invoked with two values for the special caller argument. This is "
            "most likely a bug.");
  EXPECT_EQ(error_of([] { ChatTemplate::parse("{% call 'a' %}x{% endcall %}"); }),
            "chat template line 1: expected a call in a call tag");
}

// jinja2 checks filter and test names when it compiles a template, but within an if tag or a
// conditional expression only when the filter runs (OLMo 3's template names a from_json filter
// that jinja2 lacks, in a branch that object arguments never reach).
TEST(ChatTemplate, UnknownFiltersInIfBranchesFailOnlyWhenRun) {
  EXPECT_EQ(render("{% if false %}{{ x | nope }}{{ x is nope }}{% endif %}ok {{ 1 if true else x | nope }} "
                   "{{ (x | nope) if false }}|"),
            "ok 1 |");
  EXPECT_EQ(error_of([] { render("{% if true %}{{ x | from_json }}{% endif %}"); }),
            "chat template line 1: No filter named 'from_json' found.");
  EXPECT_EQ(error_of([] { render("{% if x is defined %}{% else %}{{ x is nope }}{% endif %}"); }),
            "chat template line 1: No test named 'nope' found.");
  EXPECT_EQ(error_of([] {
              ChatTemplate::parse("{% if true %}{% for y in [1] %}{{ y | nope }}{% endfor %}{% endif %}");
            }),
            "chat template line 1: unsupported construct: no filter named 'nope'");
  EXPECT_EQ(error_of([] { ChatTemplate::parse("{% if true %}{% set z %}{{ 1 | nope }}{% endset %}{% endif %}"); }),
            "chat template line 1: unsupported construct: no filter named 'nope'");
}

// {% filter %} blocks: the body's output through one or more filters, in a scope of its own (as set
// blocks are); a break or continue in the body drops the block's output.
TEST(ChatTemplate, FilterBlocksPassTheirOutputThroughFilters) {
  const Case cases[] = {
    {R"~({% filter upper %}ab{{ 'c' }}{% endfilter %} {% filter upper | trim %}  ab  {% endfilter %}| {% filter replace('a', 'x') %}banana{% endfilter %} {% filter upper() %}a{% endfilter %}{% filter default('x') %}{% endfilter %})~", R"~({})~", R"~(ABC AB| bxnxnx A)~"},
    {R"~({% filter indent(2, true) %}a
b{% endfilter %}|{% filter replace(' ', '') | upper | center(9) %} a b {% endfilter %}|{% filter format(1) %}%s{% endfilter %})~", R"~({})~", R"~(  a
  b|    AB   |1)~"},
    {R"~({% filter upper %}{% filter lower %}AbC{% endfilter %}d{% endfilter %} {% filter upper -%}   a   {%- endfilter %}|
  {% filter upper %}
  a
  {% endfilter %}
|)~", R"~({})~", R"~(ABCD A|
  A
|)~"},
    {R"~({% filter upper %}{% set y = 1 %}{% endfilter %}{% set x %}{% set z = 1 %}{% endset %}[{{ y }}{{ z }}] {% set ns = namespace(v=0) %}{% filter upper %}{% set ns.v = 5 %}{% endfilter %}{{ ns.v }})~", R"~({})~", R"~([] 5)~"},
    {R"~({% for i in [1,2,3] %}{% filter upper %}a{{ i }}{% if i == 2 %}{% break %}{% endif %}{% endfilter %}{% endfor %} {% for i in [1,2,3] %}{% filter upper %}a{{ i }}{% if i == 2 %}{% continue %}{% endif %}b{% endfilter %}{% endfor %} {% for i in [1,2,3] %}{% set x %}a{{ i }}{% if i == 2 %}{% break %}{% endif %}{% endset %}{{ x }}{% endfor %})~", R"~({})~", R"~(A1 A1BA3B a1)~"},
    {R"~({% macro m() %}{% filter upper %}{{ caller() }}{% endfilter %}{% endmacro %}{% call m() %}abc{% endcall %} {% set x | upper %}{% filter trim %} a {% endfilter %}{% endset %}[{{ x }}])~", R"~({})~", R"~(ABC [A])~"},
  };
  expect_renders(cases);
  EXPECT_EQ(error_of([] { render("{% filter length %}abc{% endfilter %}"); }),
            "chat template line 1: sequence item: expected str instance, int found");
  EXPECT_EQ(error_of([] { ChatTemplate::parse("{% if false %}{% filter nope %}a{% endfilter %}{% endif %}"); }),
            "chat template line 1: unsupported construct: no filter named 'nope'");
  EXPECT_EQ(error_of([] { ChatTemplate::parse("{% filter %}a{% endfilter %}"); }),
            "chat template line 1: expected a name, found '%}'");
  EXPECT_EQ(error_of([] { ChatTemplate::parse("{% filter upper %}a"); }),
            "chat template line 1: missing {% endfilter %} (the template ended)");
  EXPECT_EQ(error_of([] { ChatTemplate::parse("{% filter upper is defined %}a{% endfilter %}"); }),
            "chat template line 1: expected '%}', found 'is'");
  EXPECT_EQ(error_of([] { ChatTemplate::parse("{% filter upper %}{% break %}{% endfilter %}"); }),
            "chat template line 1: 'break' outside a for loop");
}

// {% raw %}: its text verbatim; the whitespace control of both tags as jinja2's lexer has it (the
// opening tag takes no `+%}` and keeps the newline after it, the closing one trims it).
TEST(ChatTemplate, RawBlocksKeepTheirTextVerbatim) {
  const Case cases[] = {
    {R"~({% raw %}{{ x }}{% if %}{# c #}{% endraw %}|{%raw%}{% endraw x %}{%endraw%})~", R"~({})~", R"~({{ x }}{% if %}{# c #}|{% endraw x %})~"},
    {R"~({% raw %}
x{% endraw %}
y)~", R"~({})~", R"~(
xy)~"},
    {"a  {%- raw -%}  \n b {{ c }} {%- endraw -%}  \n d", R"~({})~", R"~(ab {{ c }}d)~"},
    {R"~(a
  {% raw %}
  x
  {% endraw %}
b)~", R"~({})~", R"~(a

  x
b)~"},
    {R"~(a
  {%+ raw %}x  {%+ endraw +%}
b)~", R"~({})~", "a\n  x  \nb"},
    {"{% raw -%}\n  \n  x{% endraw %}|{% raw -%}  \n  y\n  {% endraw %}|", R"~({})~", R"~(x|y
|)~"},
    {R"~({% raw %}a{% endraw -%}

  b{% raw %}{%- endraw %})~", R"~({})~", R"~(ab)~"},
    {R"~({% for i in [1, 2] %}{% raw %}{{ i }}{% endraw %}{{ i }}{% endfor %})~", R"~({})~", R"~({{ i }}1{{ i }}2)~"},
  };
  expect_renders(cases);
  EXPECT_EQ(error_of([] { ChatTemplate::parse("{% raw %}x\n{{ y }}"); }),
            "chat template line 1: missing {% endraw %} (the template ended)");
  EXPECT_EQ(error_of([] { ChatTemplate::parse("{% raw +%}x{% endraw %}"); }), "chat template line 1: unknown tag 'raw'");
  EXPECT_EQ(error_of([] { ChatTemplate::parse("{% endraw %}"); }), "chat template line 1: unknown tag 'endraw'");
  EXPECT_EQ(error_of([] { render("{% raw %}\n\n{% endraw %}\n{{ nothing.x }}"); }),
            "chat template line 4: 'nothing' is undefined");
}

// {% with %}: a scope of its own whose targets are bound to values computed outside it (so a later
// value does not see an earlier target); loop controls pass through it. {% print %} prints.
TEST(ChatTemplate, WithBlocksBindNamesInAScopeOfTheirOwn) {
  const Case cases[] = {
    {R"~({% with a = 1, b = a %}[{{ a }}{{ b }}]{% endwith %}[{{ a }}])~", R"~({"a": 5})~", R"~([15][5])~"},
    {R"~({% with (a, b) = [1, 2], c = 3 %}{{ a }}{{ b }}{{ c }}{% set d = 4 %}{% endwith %}[{{ a }}{{ c }}{{ d }}])~", R"~({})~", R"~(123[])~"},
    {R"~({% with %}x{% set y = 1 %}{% endwith %}[{{ y }}])~", R"~({})~", R"~(x[])~"},
    {R"~({% for i in [1, 2, 3] %}{% with j = i * 2 %}{% if i == 2 %}{% continue %}{% endif %}{{ j }}{% if i == 3 %}{% break %}{% endif %}{% endwith %}{% endfor %})~", R"~({})~", R"~(26)~"},
    {R"~({% set ns = namespace(v=0) %}{% with x = 5 %}{% set ns.v = x %}{% endwith %}{{ ns.v }})~", R"~({})~", R"~(5)~"},
    {R"~({% with m = messages[0] %}{{ m.role }}: {{ m.content }}{% endwith %})~", R"~({"messages": [{"role": "user", "content": "hi"}]})~", R"~(user: hi)~"},
    {R"~(  {% with a = 1 -%}
  {{ a }}
  {%- endwith %}
|)~", R"~({})~", R"~(1|)~"},
    {R"~({% print 1, 'a' %}|{% print %}|{% print [1] %}|{% print x | upper %}{% print 1
%}
x  {%- print 2 -%}  y)~", R"~({"x": "q"})~", R"~(1a||[1]|Q1x2y)~"},
  };
  expect_renders(cases);
  EXPECT_EQ(error_of([] { ChatTemplate::parse("{% with a = 1 %}x"); }),
            "chat template line 1: missing {% endwith %} (the template ended)");
  EXPECT_EQ(error_of([] { ChatTemplate::parse("{% with a %}{% endwith %}"); }),
            "chat template line 1: expected '=', found '%}'");
  EXPECT_EQ(error_of([] { ChatTemplate::parse("{% with a = 1 b = 2 %}{% endwith %}"); }),
            "chat template line 1: expected ',', found 'b'");
  EXPECT_EQ(error_of([] { ChatTemplate::parse("\n{% with 1 = a %}x{% endwith %}"); }),
            "chat template line 2: cannot assign to '1'");
  EXPECT_EQ(error_of([] { ChatTemplate::parse("{% print 1 2 %}"); }), "chat template line 1: expected ',', found '2'");
}

// for ... recursive: loop(items) renders the loop's body over items a level deeper (loop.depth), in
// the scopes around the for tag, and returns it; loop.changed(...) says whether its arguments changed.
TEST(ChatTemplate, RecursiveLoopsRenderTheirBodyAgain) {
  const Case cases[] = {
    {R"~({% for x in tree recursive %}[{{ x.n }}@{{ loop.depth }}/{{ loop.depth0 }}/{{ loop.index }}/{{ loop.length }}{% if x.c %}{{ loop(x.c) }}{% endif %}]{% endfor %})~", R"~({"tree": [{"n": 1, "c": [{"n": 2, "c": [{"n": 3}]}, {"n": 4}]}, {"n": 5}]})~", R"~([1@1/0/1/2[2@2/1/1/2[3@3/2/1/1]][4@2/1/2/2]][5@1/0/2/2])~"},
    {R"~({% for x in tree if x.n != 2 recursive %}<{{ x.n }}{{ loop(x.c or []) | upper }}>{% else %}E{% endfor %})~", R"~({"tree": [{"n": 1, "c": [{"n": 2, "c": [{"n": 3}]}, {"n": 4}]}, {"n": 5}]})~", R"~(<1<4E>><5E>)~"},
    {R"~({% for x in tree recursive %}{% if x.n == 3 %}{% break %}{% endif %}{{ x.n }}{% set z = loop(x.c or []) %}({{ z }}){% endfor %})~", R"~({"tree": [{"n": 1, "c": [{"n": 2, "c": [{"n": 3}]}, {"n": 4}]}, {"n": 5}]})~", R"~(1(2()4())5())~"},
    {R"~({% for k, v in d | items recursive %}{{ k }}{% if v is mapping %}({{ loop(v | items) }}){% endif %}{{ loop.depth }};{% endfor %})~", R"~({"d": {"a": {"b": 1, "c": {"d": 2}}, "e": 3}})~", R"~(a(b2;c(d3;)2;)1;e1;)~"},
    {R"~({% set v = 'T' %}{% for x in tree recursive %}{% if loop.depth == 1 %}{% set outer = 'O' %}{% endif %}{{ v }}[{{ outer }}]{{ loop(x.c or []) }}{% endfor %})~", R"~({"tree": [{"n": 1, "c": [{"n": 2, "c": [{"n": 3}]}, {"n": 4}]}]})~", R"~(T[O]T[]T[]T[])~"},
    {R"~({% for x in tree recursive %}{% for y in [0] %}{{ loop.depth }}{% endfor %}{{ loop.depth }}{% macro m() %}{{ loop.depth }}{% endmacro %}{{ m() }}{{ loop(x.c or []) }}{% endfor %})~", R"~({"tree": [{"n": 1, "c": [{"n": 2, "c": [{"n": 3}]}, {"n": 4}]}]})~", R"~(111122133122)~"},
    {R"~({% for x in xs %}{{ loop.changed(x) }},{{ loop.changed(x, 1) }};{% endfor %} {{ loop is callable }}{% for x in [1] %}{{ loop is callable }}{% endfor %})~", R"~({"xs": [1, 1, 2, 1]})~", R"~(True,True;True,True;True,True;True,True; TrueTrue)~"},
  };
  expect_renders(cases);
  EXPECT_EQ(error_of([] { render("{% for x in [1] %}\n{{ loop([1]) }}{% endfor %}"); }),
            "chat template line 2: The loop must have the 'recursive' marker to be called recursively.");
  EXPECT_EQ(error_of([] { render("{% for x in xs recursive %}\n{{ loop(xs) }}{% endfor %}", R"({"xs": [1]})"); }),
            "chat template line 2: the recursive loop: recursion deeper than 200 calls");
  EXPECT_EQ(error_of([] { ChatTemplate::parse("{% for x in xs recursive if x %}{% endfor %}"); }),
            "chat template line 1: expected '%}', found 'if'");
}

// Tuples as jinja2 has them: unpacked in set, for and with targets (nested, in parentheses), built by
// commas in {{ }}, set values, for iterables and if conditions, and as keys of a subscript (which
// no list, string or JSON dict has).
TEST(ChatTemplate, TuplesAreBuiltAndUnpackedAsInJinja2) {
  const Case cases[] = {
    {R"~({% set a, b = pair %}{{ a }}-{{ b }} {% set a, b = 'xy' %}{{ a }}-{{ b }} {% set a, b = d %}{{ a }}-{{ b }} {% set (a, (b, c)) = [1, [2, 3]] %}{{ a }}{{ b }}{{ c }})~", R"~({"pair": [1, 2], "d": {"k": 1, "j": 2}})~", R"~(1-2 x-y k-j 123)~"},
    {R"~({% set t = 1, 2 %}{{ t }} {{ t | length }} {{ t[0] }} {{ t is sequence }} {% set u = 1, %}{{ u }} {% set a, b = t %}{{ b }}{{ a }} {% set (c,) = u %}{{ c }}{% set () = [] %})~", R"~({})~", R"~((1, 2) 2 1 True (1,) 21 1)~"},
    {R"~({% for a, (b, c) in xs %}{{ a }}{{ b }}{{ c }}{% endfor %} {% for (a, b), c in ys %}{{ a }}{{ b }}{{ c }}{% endfor %} {% for (k, v) in d.items() %}{{ k }}{{ v }}{% endfor %})~", R"~({"xs": [[1, [2, 3]]], "ys": [[[1, 2], 3], ["xy", "z"]], "d": {"k": 1}})~", R"~(123 123xyz k1)~"},
    {R"~({% set ns = namespace(x=1) %}{% set ns.x %}ab{% endset %}{{ ns.x }} {% set a, b %}xy{% endset %}{{ b }}{{ a }})~", R"~({})~", R"~(ab yx)~"},
    {R"~({{ 1, 2 }} {{ (1,) }} {{ () }} {{ 1, }} {{ (1, 2)[1:] }} {{ (1, 2)[::-1] }} {{ (1, 2) == [1, 2] }} {{ (1, 2) != [1, 2] }} {{ (1, 2) == (1, 2) }} {{ [(1, 2)] }} {{ (1, 2) | tojson }})~", R"~({})~", R"~((1, 2) (1,) () (1,) (2,) (2, 1) False True True [(1, 2)] [1, 2])~"},
    {R"~({% if 0, %}y{% endif %}{% if () %}n{% endif %}{% if false %}{% elif 0, 0 %}z{% endif %} {% for x in 1, 2 %}{{ x }}{% endfor %}{% for x in (3, 4) if x > 3 %}{{ x }}{% endfor %})~", R"~({})~", R"~(yz 124)~"},
    {R"~({{ xs[1, 2] }}|{{ 'abc'[0, 1] }}|{{ d[1, 2] }}|{{ xs[1, 2] is defined }}|{{ d['a', 'b'] is defined }})~", R"~({"xs": [1, 2, 3], "d": {"a": 1}})~", R"~(|||False|False)~"},
  };
  expect_renders(cases);
  const std::pair<const char*, const char*> errors[] = {
    {"{% set a, b = 1, 2, 3 %}", "too many values to unpack (expected 2)"},
    {"{% set a, b = [1] %}", "not enough values to unpack (expected 2, got 1)"},
    {"{% set a, b = 5 %}", "cannot unpack non-iterable int object"},
    {"{% set a, = [1] %}", "cannot assign to '='"},
    {"{% set [a] = [1] %}", "cannot assign to '['"},
    {"{% set none = 1 %}", "cannot assign to 'none'"},
    {"{% if 1 if 0 else 0 %}{% endif %}", "expected '%}', found 'if'"},
    {"{{ xs[0:1, 1] }}", "unsupported construct: a slice in a tuple subscript"},
  };
  for (const auto& [source, message] : errors) {
    SCOPED_TRACE(source);
    EXPECT_EQ(error_of([&] { render(source); }), std::string("chat template line 1: ") + message);
  }
}

// *args and **kwargs spread into calls, filters and tests in the order jinja2 allows them; a macro
// whose body reads varargs or kwargs takes the extra arguments there.
TEST(ChatTemplate, StarArgumentsSpreadAsInPython) {
  const Case cases[] = {
    {R"~({{ '%s-%s' | format(*xs) }} {{ 'a{}b{}'.format(*xs) }} {{ '{x}'.format(**d) }} {{ dict(**d) }} {{ dict(y=2, **d) }} {{ namespace(**d).x }} {{ d.get(*['x']) }})~", R"~({"xs": [1, 2], "d": {"x": 5}})~", R"~(1-2 a1b2 5 {'x': 5} {'y': 2, 'x': 5} 5 5)~"},
    {R"~({{ range(*xs) | list }} {{ xs | join(*['-']) }} {{ 3 is divisibleby(*[3]) }} {{ xs | map(*['string']) | list }})~", R"~({"xs": [1, 4]})~", R"~([1, 2, 3] 1-4 True ['1', '4'])~"},
    {R"~({% macro m(a) %}{{ a }}|{{ varargs }}|{{ kwargs }}{% endmacro %}{{ m(1, 2, 3, k=4) }} {{ m() }} {{ m(*[1, 2], **{'z': 1}) }} {{ m(*'ab') }})~", R"~({})~", R"~(1|(2, 3)|{'k': 4} |()|{} 1|(2,)|{'z': 1} a|('b',)|{})~"},
    {R"~({% macro m(a, b=2) %}{{ a }}{{ b }}{{ varargs }}{% endmacro %}{{ m(1, 2, 3) }} {{ m(*[7]) }} {{ m(b=1, a=2) }})~", R"~({})~", R"~(12(3,) 72() 21())~"},
    {R"~({% macro m(a) %}{{ a }}{{ kwargs }}{% endmacro %}{{ m(1, a=2) }} {% macro n(varargs) %}{{ varargs }}{% endmacro %}{{ n(1) }})~", R"~({})~", R"~(1{'a': 2} 1)~"},
    {R"~({% macro m() %}{% for k, v in kwargs | items %}{{ k }}={{ v }};{% endfor %}{% endmacro %}{{ m(b=1, a=2) }} {% macro o() %}{% macro inner() %}{{ varargs }}{% endmacro %}{{ inner() }}{% endmacro %}{{ o(1, 2) }})~", R"~({})~", R"~(b=1;a=2; ())~"},
    {R"~({% macro m() %}{{ caller(1, 2, z=3) }}{% endmacro %}{% call m() %}{{ varargs }}{{ kwargs }}{% endcall %})~", R"~({})~", R"~((1, 2){'z': 3})~"},
  };
  expect_renders(cases);
  const std::pair<const char*, const char*> errors[] = {
    {"{{ f(*xs, 1) }}", "invalid syntax for function call expression"},
    {"{{ f(**d, *xs) }}", "invalid syntax for function call expression"},
    {"{{ f(**d, a=1) }}", "invalid syntax for function call expression"},
    {"{{ f(*xs, *ys) }}", "invalid syntax for function call expression"},
    {"{{ f(a=1, 2) }}", "invalid syntax for function call expression"},
    {"{{ range(*5) }}", "Value after * must be an iterable, not int"},
    {"{{ dict(**[1]) }}", "argument after ** must be a mapping, not list"},
    {"{{ dict(a=1, **{'a': 2}) }}", "got multiple values for keyword argument 'a'"},
    {"{% macro m(a) %}{% endmacro %}{{ m(1, 2, a=3) }}", "macro 'm' takes no keyword argument 'a'"},
    {"{% macro m(a) %}{% endmacro %}{{ m(1, a=2) }}", "macro 'm' takes no keyword argument 'a'"},
    // kwargs assigned before it is read is no catch-all; varargs read is
    {"{% macro m() %}{% set kwargs = 1 %}{{ kwargs }}{{ varargs }}{% endmacro %}{{ m(1, a=1) }}",
     "macro 'm' takes no keyword argument 'a'"},
  };
  for (const auto& [source, message] : errors) {
    SCOPED_TRACE(source);
    EXPECT_EQ(error_of([&] { render(source); }), std::string("chat template line 1: ") + message);
  }
}

// groupby (with .grouper and .list), batch, slice, truncate, filesizeformat, urlencode, the joiner
// and cycler globals and the filter and test tests.
TEST(ChatTemplate, GroupbyAndTheOtherFiltersMatchJinja2) {
  const Case cases[] = {
    {R"~({% for city, items in users | groupby('city', default='ZZ') %}{{ city }}:{{ items | map(attribute='name') | join(',') }};{% endfor %})~", R"~({"users": [{"name": "a", "city": "NY"}, {"name": "b", "city": "CA"}, {"name": "c", "city": "ny"}, {"name": "d"}, {"name": "e", "city": "CA"}]})~", R"~(CA:b,e;NY:a,c;ZZ:d;)~"},
    {R"~({% for g in users | groupby('city', default='ZZ', case_sensitive=true) %}{{ g.grouper }}:{{ g.list | length }}:{{ g[0] }}{{ g['grouper'] }};{% endfor %} {{ users[:2] | groupby('city') }})~", R"~({"users": [{"name": "a", "city": "NY"}, {"name": "b", "city": "CA"}, {"name": "c", "city": "ny"}, {"name": "d"}, {"name": "e", "city": "CA"}]})~", R"~(CA:2:CACA;NY:1:NYNY;ZZ:1:ZZZZ;ny:1:nyny; [('CA', [{'name': 'b', 'city': 'CA'}]), ('NY', [{'name': 'a', 'city': 'NY'}])])~"},
    {R"~({{ xs | groupby(0) | list }} {{ xs | groupby('1') | map(attribute='grouper') | list }} {{ ys | groupby('a.b') }} {{ [] | groupby('x') }} {{ m | groupby('role') | tojson }} {{ (m | groupby('role'))[0] | string }})~", R"~({"xs": [[2, "b"], [1, "a"], [2, "c"]], "ys": [{"a": {"b": 2}}, {"a": {"b": 1}}], "m": [{"role": "u"}, {"role": "a"}]})~", R"~([(1, [[1, 'a']]), (2, [[2, 'b'], [2, 'c']])] ['a', 'b', 'c'] [(1, [{'a': {'b': 1}}]), (2, [{'a': {'b': 2}}])] [] [["a", [{"role": "a"}]], ["u", [{"role": "u"}]]] ('a', [{'role': 'a'}]))~"},
    {R"~({{ xs | map(attribute='a.b', default=0) | list }} {{ xs | map(attribute='q', default=none) | list }})~", R"~({"xs": [{"a": {"b": 2}}, {"a": {}}]})~", R"~([2, 0] [Undefined, Undefined])~"},
    {R"~({{ xs | batch(2) | list }} {{ xs | batch(2, 'x') | list }} {{ xs | batch(3, 0) | list }} {{ xs | batch(10) | list }} {{ [] | batch(2) | list }} {{ xs | batch(0) | list }} {{ xs | batch(-1, 'f') | list }})~", R"~({"xs": [1, 2, 3, 4, 5]})~", R"~([[1, 2], [3, 4], [5]] [[1, 2], [3, 4], [5, 'x']] [[1, 2, 3], [4, 5, 0]] [[1, 2, 3, 4, 5]] [] [[], [1, 2, 3, 4, 5]] [[1, 2, 3, 4, 5]])~"},
    {R"~({{ xs | slice(2) | list }} {{ xs | slice(3, 'x') | list }} {{ xs | slice(7) | list }} {{ xs | slice(7, 0) | list }} {{ [] | slice(2) | list }} {{ 'abcde' | slice(2) | list }} {{ xs | slice(-2) | list }})~", R"~({"xs": [1, 2, 3, 4, 5]})~", R"~([[1, 2, 3], [4, 5]] [[1, 2], [3, 4], [5, 'x']] [[1], [2], [3], [4], [5], [], []] [[1], [2], [3], [4], [5], [0], [0]] [[], []] [['a', 'b', 'c'], ['d', 'e']] [])~"},
    {R"~({{ 'hello world foo bar' | truncate(9) }}|{{ 'hello world foo bar' | truncate(9, true) }}|{{ 'hello world foo bar' | truncate(9, end='>') }}|{{ 'hello world' | truncate(9, leeway=0) }}|{{ 'hello world' | truncate(8) }}|{{ 'hello' | truncate }}|{{ 'helloworld' | truncate(5, leeway=0) }}|{{ 'héllo wörld' | truncate(7, leeway=0) }}|{{ nothing | truncate(3) }}|)~", R"~({})~", R"~(hello...|hello ...|hello>|hello...|hello world|hello|he...|héll...||)~"},
    {R"~({{ 1 | filesizeformat }} {{ 0 | filesizeformat }} {{ 999 | filesizeformat }} {{ 1000 | filesizeformat }} {{ 1500 | filesizeformat }} {{ 1024 | filesizeformat(true) }} {{ 1e9 | filesizeformat }} {{ 1e30 | filesizeformat }} {{ '2048' | filesizeformat(binary=true) }} {{ 1.5 | filesizeformat }} {{ -5 | filesizeformat }} {{ 123456789 | filesizeformat(true) }} {{ true | filesizeformat }})~", R"~({})~", R"~(1 Byte 0 Bytes 999 Bytes 1.0 kB 1.5 kB 1.0 KiB 1.0 GB 1000000.0 YB 2.0 KiB 1 Bytes -5 Bytes 117.7 MiB 1 Byte)~"},
    {R"~({{ 'a b/c?d=é&' | urlencode }}|{{ d | urlencode }}|{{ [('a', 1), ['b c', 'd/e']] | urlencode }}|{{ 5 | urlencode }}|{{ none | urlencode }}|{{ nothing | urlencode }}|{{ {} | urlencode }}|{{ '~_.-' | urlencode }}|{{ ['ab'] | urlencode }})~", R"~({"d": {"q": "x y", "n": 1, "é": "&"}})~", R"~(a%20b/c%3Fd%3D%C3%A9%26|q=x+y&n=1&%C3%A9=%26|a=1&b+c=d%2Fe|5|None|||~_.-|a=b)~"},
    {R"~({% set j = joiner('|') %}{% for x in [1, 2, 3] %}{{ j() }}{{ x }}{% endfor %}{% set k = joiner() %}{{ k() }}{{ k() }}{{ k() }} {% set c = cycler('a', 'b') %}{{ c.current }}{{ c.next() }}{{ c.next() }}{{ c.next() }}{{ c.current }}{{ c.reset() }}{{ c.current }}{{ c.items }})~", R"~({})~", R"~(1|2|3, ,  aababNonea('a', 'b'))~"},
    {R"~({{ 'upper' is filter }} {{ 'nope' is filter }} {{ 'defined' is test }} {{ 1 is filter }} {{ 'groupby' is filter }} {{ 'upper' is test }} {{ 'filter' is test }} {{ nothing is callable }} {{ none is callable }})~", R"~({})~", R"~(True False True False True True True True False)~"},
  };
  expect_renders(cases);
  const std::pair<const char*, const char*> errors[] = {
    {"{{ 'hello' | truncate(2) }}", "expected length >= 3, got 2"},
    {"{{ [1] | slice(0) | list }}", "integer division or modulo by zero"},
    {"{{ 'x' | filesizeformat }}", "could not convert string to float: 'x'"},
    {"{{ cycler() }}", "at least one item has to be provided"},
    {"{{ [1] | urlencode }}", "cannot unpack non-iterable int object"},
    // jinja2 would build it; difftx's lists stop at 2^20 items.
    {"{{ [1] | batch(10000000, 0) | list }}", "linecount 10000000 is too big (difftx stops at 1048576 items)"},
  };
  for (const auto& [source, message] : errors) {
    SCOPED_TRACE(source);
    EXPECT_EQ(error_of([&] { render(source); }), std::string("chat template line 1: ") + message);
  }
}

TEST(ChatTemplate, ConcatenationErrorsReadAsPythons) {
  EXPECT_EQ(error_of([] { render("{{ 'a' + [1] }}"); }),
            "chat template line 1: can only concatenate str (not \"list\") to str");
  EXPECT_EQ(error_of([] { render("{{ [1] + 'a' }}"); }),
            "chat template line 1: can only concatenate list (not \"str\") to list");
  EXPECT_EQ(error_of([] { render("{{ none + 'a' }}"); }),
            "chat template line 1: unsupported operand type(s) for +: 'NoneType' and 'str'");
}

// A template given apart from the model (--chat-template) takes the model's special tokens even
// when the model has no template of its own.
TEST(ChatTemplate, TakesTheSpecialTokensOfAModelWithoutATemplate) {
  testing::TempDir dir;
  testing::write_bytes(dir / "tokenizer_config.json",
                       R"({"bos_token": "<s>", "eos_token": {"content": "</s>"}, "pad_token": "<pad>"})");
  EXPECT_FALSE(ChatTemplate::from_model_dir(dir.path().string()).has_value());
  auto t = ChatTemplate::parse("{{ bos_token }}|{{ eos_token }}|{{ pad_token }}");
  t.take_special_tokens_of(dir.path().string());
  EXPECT_EQ(t.render(nlohmann::json::array(), false), "<s>|</s>|<pad>");
}

// A list of named templates (Hermes 2 Pro, Command R): the default renders a call without tools,
// tool_use one with them, as transformers chooses; the tool-call format is read from tool_use's.
TEST(ChatTemplate, ANamedToolUseTemplateRendersCallsWithTools) {
  testing::TempDir dir;
  testing::write_bytes(dir / "tokenizer_config.json", R"({"eos_token": "</s>", "chat_template": [
      {"name": "default", "template": "D{{ messages[0].content }}{{ eos_token }}"},
      {"name": "tool_use", "template": "T{{ tools | length }}<tool_call>{{ eos_token }}"}]})");
  const auto t = ChatTemplate::from_model_dir(dir.path().string());
  ASSERT_TRUE(t.has_value());
  const auto messages = nlohmann::json::parse(R"([{"role": "user", "content": "hi"}])");
  EXPECT_EQ(t->render(messages, false), "Dhi</s>");
  EXPECT_EQ(t->render(messages, false, {{"tools", nullptr}}), "Dhi</s>");
  EXPECT_EQ(t->render(messages, false, {{"tools", nlohmann::json::array({{{"type", "function"}}})}}), "T1<tool_call></s>");
  EXPECT_EQ(t->tools_source(), "T{{ tools | length }}<tool_call>{{ eos_token }}");
}

// transformers reads a list as {entry["name"]: entry["template"]}: an entry of another form is
// named, not skipped into "no default entry".
TEST(ChatTemplate, ANamedTemplateOfTheWrongTypeIsNamed) {
  testing::TempDir dir;
  testing::write_bytes(dir / "tokenizer_config.json", R"({"chat_template": [{"name": "default", "template": 5}]})");
  const std::string e = error_of([&] { ChatTemplate::from_model_dir(dir.path().string()); });
  EXPECT_NE(e.find(R"(tokenizer_config.json: chat_template's entries must be {"name": string, "template": string}, )"
                   R"(got {"name":"default","template":5})"), std::string::npos) << e;
}

// Python's repr escapes what str.isprintable refuses (no-break and other spaces, format and line
// separators, C1 controls) and keeps the rest; json.dumps(ensure_ascii=True) escapes DEL. The
// expected texts are what jinja2 printed for the same template.
TEST(ChatTemplate, ReprAndAsciiJsonEscapeAsPython) {
  EXPECT_EQ(render(R"({{ xs }})", R"({"xs": ["a\u00a0b", "c\u200bd", "e\u2028f", "g\u00e9h", "\ud83d\ude00", "\u0085"]})"),
            "['a\\xa0b', 'c\\u200bd', 'e\\u2028f', 'g\u00e9h', '\U0001F600', '\\x85']");
  EXPECT_EQ(render(R"({{ x | tojson(ensure_ascii=true) }})", R"({"x": "\u007f"})"), R"("\u007f")");
}

// Whitespace control strips what Python's str.isspace calls whitespace, as jinja2's `\s` and rstrip()
// do: the Unicode spaces too (no-break, ideographic, en quad to hair space, ...), before and after a
// tag, in lstrip_blocks, inside tags and around raw's.
TEST(ChatTemplate, WhitespaceControlStripsUnicodeSpacesAsPython) {
  const Case cases[] = {
    {"x {{- 'a' }}\u00a0{%- if true %}y{% endif %}", "{}", "xay"},
    {"a\u3000\u2003 {{- 'b' -}} \u2028\u205f\x1c"" c", "{}", "abc"},
    {"a\n \u00a0 {% if true %}b{% endif %}\n\u3000{% if true %}c{% endif %}", "{}", "a\nbc"},
    {"{{\u00a0'a'\u3000}}|{%\u2000if true\u202f%}x{%\u2009endif\u00a0%}", "{}", "a|x"},
    {"{%\u00a0raw\u3000%}{{ x }}{%\u00a0endraw -%}\u00a0\u0085 y", "{}", "{{ x }}y"},
    {"a {#- c -#} \u00a0b", "{}", "ab"},
    {"\u00a0\n  {% if true %}x{% endif %}", "{}", "\u00a0\nx"},
    {"é {{- 'x' -}} ü", "{}", "éxü"},
    {"{{ 'a' -}}\u00a0\n\u00a0  b", "{}", "ab"},
  };
  expect_renders(cases);
}

TEST(ChatTemplate, NormalizesNewlinesAndDropsOneTrailingNewline) {
  EXPECT_EQ(render("line1\r\nline2\rline3\n\n"), "line1\nline2\nline3\n");
}

TEST(ChatTemplate, PrintsUndefinedAsEmptyButFailsOnItsAttributes) {
  EXPECT_EQ(render("[{{ nothing }}]{% for x in nothing %}x{% endfor %}{{ nothing | length }}"), "[]0");
  EXPECT_EQ(render("{{ [nothing] }} {{ '%r' % nothing }}"), "[Undefined] Undefined");
  EXPECT_EQ(error_of([] { render("{{ xs[-1].x }}", R"({"xs": []})"); }),
            "chat template line 1: list object has no element -1");
  EXPECT_EQ(error_of([] { render("{{ none.x.y }}"); }), "chat template line 1: 'None' has no attribute 'x'");
  EXPECT_EQ(error_of([] { render("{{ nothing.field }}"); }), "chat template line 1: 'nothing' is undefined");
  EXPECT_EQ(error_of([] { render("\n{{ nothing() }}"); }), "chat template line 2: 'nothing' is undefined");
  EXPECT_EQ(error_of([] { render("{% if nothing + 1 %}{% endif %}"); }),
            "chat template line 1: 'nothing' is undefined");
}

TEST(ChatTemplate, RaiseExceptionCarriesTheTemplatesMessage) {
  const auto t = ChatTemplate::parse(
      "{% for m in messages %}{% if m.role != 'user' %}{{ raise_exception('roles must alternate') }}{% endif %}"
      "{% endfor %}ok");
  const auto messages = nlohmann::json::parse(R"([{"role": "assistant", "content": "x"}])");
  try {
    t.render(messages, true);
    FAIL() << "no exception";
  } catch (const TemplateError& e) {
    EXPECT_STREQ(e.what(), "roles must alternate");
  }
  EXPECT_EQ(t.render(nlohmann::json::parse(R"([{"role": "user", "content": "x"}])"), true), "ok");
}

TEST(ChatTemplate, UnsupportedConstructsFailAtParseNamingThemAndTheLine) {
  // include, import, from and extends need a template loader, which transformers does not give
  // (jinja2 fails when it runs them); do and trans need extensions it does not load (jinja2 refuses
  // them too); difftx does not implement block and autoescape (jinja2 renders them).
  for (const char* tag : {"include 'x'", "import 'x' as y", "from 'x' import y", "extends 'x'", "block b",
                          "do x", "trans", "autoescape true"}) {
    const std::string name = std::string(tag).substr(0, std::string(tag).find(' '));
    EXPECT_EQ(error_of([&] { ChatTemplate::parse(std::string("a\n{% ") + tag + " %}"); }),
              "chat template line 2: unsupported construct: the '" + name + "' tag");
  }
  EXPECT_EQ(error_of([] { ChatTemplate::parse("{{ x | frobnicate }}"); }),
            "chat template line 1: unsupported construct: no filter named 'frobnicate'");
  EXPECT_EQ(error_of([] { ChatTemplate::parse("\n\n{% set y = x is frob %}"); }),
            "chat template line 3: unsupported construct: no test named 'frob'");
  EXPECT_EQ(error_of([] { ChatTemplate::parse("{% if x %}"); }),
            "chat template line 1: missing {% endif %} (the template ended)");
  EXPECT_EQ(error_of([] { ChatTemplate::parse("{{ 'abc }}"); }),
            "chat template line 1: a string literal is never closed");
  EXPECT_EQ(error_of([] { ChatTemplate::parse("{% break %}"); }), "chat template line 1: 'break' outside a for loop");
}

TEST(ChatTemplate, RefusesNestingDeepEnoughToExhaustTheStack) {
  const std::string deep = "{{ " + std::string(100000, '(') + "1" + std::string(100000, ')') + " }}";
  EXPECT_EQ(error_of([&] { ChatTemplate::parse(deep); }),
            "chat template line 1: tags and expressions nested too deeply (a limit of 600 levels)");
  std::string ifs;
  for (int i = 0; i < 5000; ++i) ifs += "{% if true %}";
  EXPECT_NE(error_of([&] { ChatTemplate::parse(ifs); }).find("nested too deeply"), std::string::npos);
  EXPECT_NE(error_of([&] { ChatTemplate::parse("{{ " + std::string(5000, '-') + "1 }}"); }).find("nested too deeply"),
            std::string::npos);
  const std::string target = "{% set " + std::string(100000, '(') + "a" + std::string(100000, ')') + " = 1 %}";
  EXPECT_NE(error_of([&] { ChatTemplate::parse(target); }).find("nested too deeply"), std::string::npos);
}

// Chains built in a loop are trees one level deeper per link: 100,000 links are refused (they
// overflowed the stack when rendered or freed); a few hundred are fine, and ~ is one flat node.
TEST(ChatTemplate, RefusesChainsLongEnoughToExhaustTheStack) {
  const auto repeated = [](const std::string& piece, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += piece;
    return out;
  };
  for (const char* link : {" + 1", " and x", " or x", " * 1", " ** 1", ".a", "[0]", "()", "|string", "|upper is string"}) {
    const std::string chain = "{% if false %}{{ x" + repeated(link, 100000) + " }}{% endif %}";
    EXPECT_NE(error_of([&] { ChatTemplate::parse(chain); }).find("nested too deeply"), std::string::npos) << link;
  }
  EXPECT_EQ(render("{{ 0" + repeated(" + 1", 300) + " }}"), "300");
  EXPECT_EQ(render("{{ 'a'" + repeated(" ~ 'a'", 5000) + " }}"), std::string(5001, 'a'));
  EXPECT_EQ(render("{{ 'ab'" + repeated("|upper|lower", 200) + " }}"), "ab");
}

TEST(ChatTemplate, ListsAndDictsAreImmutableAsInTheSandbox) {
  EXPECT_EQ(error_of([] { render("{% set xs = [] %}{{ xs.append(1) }}"); }),
            "chat template line 1: access to attribute 'append' of 'list' object is unsafe.");
  EXPECT_EQ(error_of([] { render("{% set d = {} %}{{ d.update({'a': 1}) }}"); }),
            "chat template line 1: access to attribute 'update' of 'dict' object is unsafe.");
}

TEST(ChatTemplate, RunawayTemplatesStopWithAnError) {
  EXPECT_EQ(error_of([] { render("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}"); }),
            "chat template line 1: macro 'f': recursion deeper than 200 calls");
  EXPECT_NE(error_of([] { render("{{ 'ab' * 10000000000 }}"); }).find("too big"), std::string::npos);
  // What a render may build is bounded (value.h): strings doubled past 64 MiB, lists past 2^20
  // items, output past 64 MiB, loops and macro calls past 10M; each an error, never a hang or an
  // allocation that takes the machine's memory.
  EXPECT_EQ(error_of([] { render("{{ ('a' * 40000000) ~ ('b' * 40000000) }}"); }),
            "chat template line 1: a string of 80000000 bytes is too big (difftx stops at 64 MiB)");
  EXPECT_EQ(error_of([] { render("{{ ([1, 2] * 600000)|length }}"); }),
            "chat template line 1: a repetition of 600000 copies is too big (difftx stops at 64 MiB or 1048576 items)");
  EXPECT_EQ(error_of([] { render("{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}"); }),
            "chat template line 1: the output passed 64 MiB (difftx stops there)");
  EXPECT_EQ(error_of([] { render("{% for i in range(100000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}"); }),
            "chat template line 1: the template ran past 10000000 loop iterations and macro calls (difftx stops there)");
  EXPECT_EQ(error_of([] {
              render("{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}");
            }),
            "chat template line 1: the template ran past 10000000 loop iterations and macro calls (difftx stops there)");
}

// Python's ints are unbounded; difftx's stop at 128 bits with an error, never a wrong number.
TEST(ChatTemplate, IntegersBeyond128BitsAreErrors) {
  EXPECT_EQ(error_of([] { render("{{ 2 ** 127 }}"); }),
            "chat template line 1: integer overflow in 2 ** 127 (difftx's integers are 128-bit)");
  EXPECT_EQ(error_of([] { render("{{ n * n }}", R"({"n": 18446744073709551615})"); }),
            "chat template line 1: integer overflow in 18446744073709551615 * 18446744073709551615 (difftx's "
            "integers are 128-bit)");
  EXPECT_EQ(error_of([] { ChatTemplate::parse("{{ 170141183460469231731687303715884105728 }}"); }),
            "chat template line 1: integer literal 170141183460469231731687303715884105728 is beyond 128 bits");
  EXPECT_EQ(error_of([] { render("{{ 1e300 | int }}"); }),
            "chat template line 1: integer overflow in int(1e+300) (difftx's integers are 128-bit)");
  EXPECT_EQ(error_of([] { render("{{ range(n) }}", R"({"n": 18446744073709551615})"); }),
            "chat template line 1: argument 'stop' is 18446744073709551615, beyond 64 bits");
}

// Number literals as jinja2's lexer reads them (underscores, 0x/0o/0b, floats beyond the range), and
// the int and float filters as Python's int() and float() read strings.
TEST(ChatTemplate, NumbersReadAsPythonReadsThem) {
  const Case cases[] = {
    {R"~({{ 1_000 }} {{ 1_000.5 }} {{ 0x1F }} {{ 0o17 }} {{ 0b101 }} {{ 0X_ff }} {{ 00 }} {{ 007.5 }} {{ 1e999 }} {{ -1e999 }} {{ 1e-999 }} {{ 2E+3 }})~", R"~({})~", R"~(1000 1000.5 31 15 5 255 0 7.5 inf -inf 0.0 2000.0)~"},
    {R"~({{ xs.1 }} {{ xs.0.1 }})~", R"~({"xs": [[7, 8], 9]})~", R"~(9 8)~"},
    {R"~({{ '1e999' | float }} {{ ' 2.5 ' | float }} {{ '1_0.5' | float }} {{ '.5' | float }} {{ '1.' | float }} {{ '-Infinity' | float }} {{ '0x10' | float }} {{ '1__0' | float }} {{ '1e' | float(-1) }})~", R"~({})~", R"~(inf 2.5 10.5 0.5 1.0 -inf 0.0 0.0 -1)~"},
    {R"~({{ '1_000' | int }} {{ '0x1A' | int }} {{ '0x1A' | int(base=16) }} {{ '1A' | int(0, 16) }} {{ '0b11' | int(base=0) }} {{ '010' | int(base=0) }} {{ ' -3.9 ' | int }} {{ 'nan' | int(7) }} {{ 2.5e3 | int }} {{ true | int }})~", R"~({})~", R"~(1000 0 26 26 3 10 -3 7 2500 1)~"},
    {R"~({{ xs | map(attribute='99999999999999999999') | list }} {{ xs | map(attribute='0') | list }})~", R"~({"xs": [[1]]})~", R"~([Undefined] [1])~"},
  };
  expect_renders(cases);
  EXPECT_EQ(error_of([] { ChatTemplate::parse("{{ 007 }}"); }), "chat template line 1: expected '}}', found '7'");
  EXPECT_EQ(error_of([] { render("{{ '1e999' | int }}"); }),
            "chat template line 1: cannot convert float infinity to integer");
}

TEST(ChatTemplate, StrftimeNowUsesTheGivenDate) {
  auto t = ChatTemplate::parse("{{ strftime_now('%d %b %Y') }}");
  t.date = "2024-07-26";
  EXPECT_EQ(t.render(nlohmann::json::array(), true), "26 Jul 2024");
}

TEST(ChatTemplate, KeepsKeyOrderWithOrderedJson) {
  const auto t = ChatTemplate::parse("{{ messages[0] | tojson }}");
  const auto messages = nlohmann::ordered_json::parse(R"([{"role": "user", "content": "x"}])");
  EXPECT_EQ(t.render(messages, true, nlohmann::ordered_json::object()), R"({"role": "user", "content": "x"})");
}

TEST(ChatTemplate, SpecialTokensAreUndefinedWhenAbsent) {
  auto t = ChatTemplate::parse("{{ bos_token is defined }}{{ eos_token }}");
  t.eos_token = "</s>";
  EXPECT_EQ(t.render(nlohmann::json::array(), false), "False</s>");
}

}  // namespace
}  // namespace difftx::chat
