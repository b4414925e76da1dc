/* Tests of the template engine (generator/template/tmpl.h): golden renders of every feature, exact
 * float literals, and every error with its "name:line:col:" prefix. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template/tmpl.h"

/* ---- helpers ---- */

typedef struct named_text {
    const char *name;
    const char *text;
} named_text;

static const named_text included[] = {
    {"hello.cu", "hello {{ who }}"},
    {"macros.cuh", "{%- macro twice(x) -%}{{ x }}{{ x }}{%- endmacro -%}\n{% set from_include = 7 %}"},
    {"bad.cuh", "line one\n  {{ missing_var }}"},
    {"badmacro.cuh", "{% macro boom(x) %}\n{{ x + 'a' }}{% endmacro %}"},
    {"syntax.cuh", "ok\n{% if %}"},
    {"self.cu", "x{% include 'self.cu' %}"},
    {"loopvars.cuh", "[{{ item }}:{{ loop.index }}]"},
    {NULL, NULL},
};

static tmpl_source load_table(void *user, const char *name)
{
    const named_text *t = user ? user : included;
    for (; t->name; ++t)
        if (strcmp(t->name, name) == 0)
            return (tmpl_source){.text = t->text};
    return (tmpl_source){0};
}

/* Renders and returns the output, failing the test with the error on failure. */
static char *render_ok(const char *text, const tmpl_value *ctx)
{
    char *out = NULL, err[512] = "";
    bool ok = tmpl_render("t.cu", text, ctx, load_table, NULL, &out, err, sizeof err);
    if (!ok)
        fail_msg("render failed: %s", err);
    assert_non_null(out);
    return out;
}

static void expect_render(const char *text, const tmpl_value *ctx, const char *want)
{
    char *out = render_ok(text, ctx);
    assert_string_equal(out, want);
    free(out);
}

static void expect_error(const char *text, const tmpl_value *ctx, const char *want)
{
    char *out = (char *)"untouched", err[512] = "";
    bool ok = tmpl_render("t.cu", text, ctx, load_table, NULL, &out, err, sizeof err);
    if (ok) {
        fail_msg("expected error '%s', rendered '%s'", want, out);
    }
    assert_null(out);
    assert_string_equal(err, want);
}

/* A context with a few values of every kind. */
static tmpl_value *sample_ctx(void)
{
    tmpl_value *c = tmpl_map();
    tmpl_set_int(c, "n", 3);
    tmpl_set_int(c, "neg", -5);
    tmpl_set_float(c, "half", 0.5);
    tmpl_set_str(c, "name", "conv");
    tmpl_set_bool(c, "yes", true);
    tmpl_set_bool(c, "no", false);
    tmpl_value *xs = tmpl_list();
    for (int i = 1; i <= 3; ++i)
        tmpl_list_push(xs, tmpl_int(i * 10));
    tmpl_map_set(c, "xs", xs);
    tmpl_value *m = tmpl_map();
    tmpl_set_int(m, "zeta", 1);
    tmpl_set_int(m, "alpha", 2);
    tmpl_set_str(m, "mid", "m");
    tmpl_map_set(c, "m", m);
    tmpl_value *d = tmpl_map();
    tmpl_set_int(d, "stride", 2);
    tmpl_set_bool(d, "flip", true);
    tmpl_map_set(c, "dim", d);
    tmpl_map_set(c, "empty", tmpl_list());
    assert_true(tmpl_ok(c));
    return c;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng_next(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* ---- text, output, literals ---- */

static void test_text_with_lone_braces_passes_through(void **state)
{
    (void)state;
    expect_render("__global__ void k() { if (a) { b[0] = {1}; } }\n", NULL,
                  "__global__ void k() { if (a) { b[0] = {1}; } }\n");
    expect_render("{ {x} }", NULL, "{ {x} }");
}

static void test_output_prints_ints_floats_strings_and_cpp_bools(void **state)
{
    tmpl_value *c = sample_ctx();
    (void)state;
    expect_render("{{ n }} {{ neg }} {{ half }} {{ name }} {{ yes }} {{ no }} {{ 0.1 }}", c,
                  "3 -5 0.5 conv true false 0.10000000000000001");
    expect_render("{{ True }} {{ False }} {{ true }} {{ 9223372036854775807 }}", c,
                  "true false true 9223372036854775807");
    tmpl_unref(c);
}

static void test_string_literals_decode_escapes_in_both_quotes(void **state)
{
    (void)state;
    expect_render("{{ 'a\\nb\\tc\\\\d\\'e\\\"f' }}|{{ \"x'y\\\"z\" }}|{{ 'keep\\q' }}", NULL,
                  "a\nb\tc\\d'e\"f|x'y\"z|keep\\q");
}

static void test_list_and_map_literals_index_and_attribute(void **state)
{
    (void)state;
    expect_render("{{ [1, 2, 3][1] }} {{ {'a': 1, 'b': {'c': 5}}.b.c }} {{ {'k': 'v'}['k'] }} "
                  "{{ [[1, 2], [3, 4]][1][0] }} {{ [] | length }} {{ [1, 2,] | length }}",
                  NULL, "2 5 v 3 0 2");
}

static void test_map_literal_may_end_with_double_brace(void **state)
{
    (void)state;
    expect_render("{{ {'a': {'b': 42}}.a.b }}", NULL, "42");
    expect_render("{% set m = {'a': {'b': 1}} %}{{ m.a.b }}", NULL, "1");
}

static void test_negative_index_counts_from_the_end(void **state)
{
    tmpl_value *c = sample_ctx();
    (void)state;
    expect_render("{{ xs[-1] }} {{ xs[-3] }} {{ xs[0] }} {{ name[-1] }}", c, "30 10 10 v");
    tmpl_unref(c);
}

static void test_attribute_and_key_access_on_context_maps(void **state)
{
    tmpl_value *c = sample_ctx();
    (void)state;
    expect_render("{{ dim.stride }} {{ dim['flip'] }} {{ m.mid }}", c, "2 true m");
    tmpl_unref(c);
}

/* ---- operators ---- */

static void test_operator_precedence_follows_jinja(void **state)
{
    (void)state;
    expect_render("{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }} {{ 10 - 2 - 3 }} "
                  "{{ 1 ~ 2 * 3 }} {{ not 1 == 2 }} {{ 1 < 2 and 2 < 1 or 3 }} {{ -3|abs }}",
                  NULL, "7 9 64 4 5 16 true 3 3");
}

static void test_integer_division_and_modulo_floor_like_python(void **state)
{
    (void)state;
    expect_render("{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 // -2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ -6 % 3 }}",
                  NULL, "3 -4 -4 1 2 -2 0");
    expect_render("{{ 7.5 // 2 }} {{ -7.5 % 2 }} {{ 5.0 % -3 }}", NULL, "3 0.5 -1");
}

static void test_true_division_of_ints_gives_float(void **state)
{
    (void)state;
    expect_render("{{ 1 / 4 }} {{ 6 / 3 }} {{ (6 / 3)|f32 }} {{ 2 ** -1 }}", NULL, "0.25 2 2.0f 0.5");
}

static void test_int_and_float_mix_gives_float(void **state)
{
    tmpl_value *c = sample_ctx();
    (void)state;
    expect_render("{{ n + half }} {{ n * 1.5 }} {{ n - 0.5 }} {{ (n * 1.0)|f32 }} {{ 2 ** 0.5 }}", c,
                  "3.5 4.5 2.5 3.0f 1.4142135623730951");
    tmpl_unref(c);
}

static void test_strings_concatenate_repeat_and_tilde_joins_any_values(void **state)
{
    tmpl_value *c = sample_ctx();
    (void)state;
    expect_render("{{ 'ab' + 'cd' }}|{{ '-' * 3 }}|{{ 2 * 'x' }}|{{ 'x' * 0 }}|{{ name ~ n ~ yes ~ half }}|"
                  "{{ ([1] + [2])|join(',') }}",
                  c, "abcd|---|xx||conv3true0.5|1,2");
    /* the empty string repeated 2^63 - 1 times is made at once (it looped that many times) */
    expect_render("[{{ '' * 9223372036854775807 }}{{ 9223372036854775807 * '' }}]", c, "[]");
    tmpl_unref(c);
}

static void test_comparisons_chain_like_python(void **state)
{
    (void)state;
    expect_render("{{ 1 < 2 < 3 }} {{ 1 < 3 < 2 }} {{ 2 == 2.0 }} {{ 'a' < 'b' }} {{ 1 != 'a' }} "
                  "{{ [1, 2] == [1, 2] }} {{ {'a': 1} == {'a': 1} }} {{ 3 >= 3 > 2 <= 2 }} {{ none == none }}",
                  NULL, "true false true true true true true true true");
}

static void test_in_and_not_in_on_strings_lists_and_maps(void **state)
{
    tmpl_value *c = sample_ctx();
    (void)state;
    expect_render("{{ 'on' in name }} {{ 20 in xs }} {{ 25 in xs }} {{ 'mid' in m }} {{ 'x' not in m }} "
                  "{{ 20 not in xs }}",
                  c, "true true false true true false");
    tmpl_unref(c);
}

static void test_and_or_return_the_deciding_operand_with_python_truthiness(void **state)
{
    tmpl_value *c = sample_ctx();
    (void)state;
    expect_render("{{ 0 or 'x' }} {{ 2 and 3 }} {{ '' or 0 }} {{ not empty }} {{ not xs }} {{ not 0.0 }} "
                  "{{ not none }} {{ not {} }} {{ 0 and missing }} {{ 1 or missing }}",
                  c, "x 3 0 true false true true true 0 1");
    tmpl_unref(c);
}

static void test_conditional_expression_without_else_is_empty(void **state)
{
    tmpl_value *c = sample_ctx();
    (void)state;
    expect_render("[{{ 'a' if yes else 'b' }}][{{ 'a' if no else 'b' }}][{{ 'a' if no }}]"
                  "[{{ 1 if no else 2 if yes else 3 }}]",
                  c, "[a][b][][2]");
    tmpl_unref(c);
}

/* ---- statements ---- */

static void test_for_loop_exposes_loop_index_and_index0(void **state)
{
    tmpl_value *c = sample_ctx();
    (void)state;
    expect_render("{% for x in xs %}{{ loop.index }}:{{ loop.index0 }}:{{ x }} {% endfor %}", c,
                  "1:0:10 2:1:20 3:2:30 ");
    tmpl_unref(c);
}

static void test_for_loop_exposes_loop_first_last_and_length(void **state)
{
    tmpl_value *c = sample_ctx();
    (void)state;
    expect_render("{% for x in xs %}{{ '[' if loop.first }}{{ x }}/{{ loop.length }}"
                  "{{ ', ' if not loop.last else ']' }}{% endfor %}",
                  c, "[10/3, 20/3, 30/3]");
    expect_render("{% for x in xs %}{{ loop.revindex }}{{ loop.revindex0 }}{% endfor %}", c, "322110");
    expect_render("{% for x in empty %}never{% endfor %}done", c, "done");
    tmpl_unref(c);
}

static void test_for_over_map_items_keeps_insertion_order(void **state)
{
    tmpl_value *c = sample_ctx();
    (void)state;
    expect_render("{% for k, v in m|items %}{{ k }}={{ v }};{% endfor %}", c, "zeta=1;alpha=2;mid=m;");
    expect_render("{% for k in m %}{{ k }},{% endfor %}", c, "zeta,alpha,mid,");
    expect_render("{% for a, b in [[1, 2], [3, 4]] %}{{ a + b }} {% endfor %}", c, "3 7 ");
    tmpl_unref(c);
}

static void test_nested_loops_shadow_the_loop_variable(void **state)
{
    (void)state;
    expect_render("{% for i in range(2) %}{% for j in range(3) %}{{ loop.index }}{% endfor %}"
                  "|{{ loop.index }}{{ i }} {% endfor %}",
                  NULL, "123|10 123|21 ");
}

static void test_loop_variable_kept_by_a_set_is_not_changed_later(void **state)
{
    (void)state;
    /* Stored in a list that outlives one iteration only inside that iteration's scope. */
    expect_render("{% for i in range(3) %}{% set l = [loop] %}{{ l[0].index }}{% endfor %}", NULL, "123");
}

static void test_range_with_one_two_three_arguments_and_negative_step(void **state)
{
    (void)state;
    expect_render("{{ range(4)|join(',') }}|{{ range(2, 5)|join(',') }}|{{ range(0, 10, 3)|join(',') }}|"
                  "{{ range(5, 0, -2)|join(',') }}|{{ range(3, 3)|join(',') }}|{{ range(0, 3, -1)|join(',') }}|"
                  "{{ range(-3)|length }}",
                  NULL, "0,1,2,3|2,3,4|0,3,6,9|5,3,1|||0");
}

static void test_if_elif_else_chain_takes_first_true_branch(void **state)
{
    (void)state;
    const char *t = "{% for v in [1, 2, 3, 0] %}{% if v == 1 %}one{% elif v == 2 %}two{% elif v == 3 %}three"
                    "{% else %}other{% endif %} {% endfor %}";
    expect_render(t, NULL, "one two three other ");
    expect_render("{% if 0 %}a{% endif %}b{% if 1 %}c{% endif %}", NULL, "bc");
}

static void test_set_assigns_in_current_scope_and_loop_body_scope_is_private(void **state)
{
    (void)state;
    expect_render("{% set x = 5 %}{{ x }}{% for i in range(2) %}{% set x = i %}{{ x }}{% endfor %}{{ x }}", NULL,
                  "5015");
    expect_render("{% set x = 1 %}{% set x = x + 1 %}{% if true %}{% set x = x * 10 %}{% endif %}{{ x }}", NULL,
                  "20");
}

static void test_set_in_loop_does_not_carry_to_next_iteration(void **state)
{
    (void)state;
    expect_render("{% for i in range(3) %}{{ v|default('-') }}{% set v = i %}{{ v }}{% endfor %}", NULL,
                  "-0-1-2");
}

static void test_comments_are_dropped_and_may_span_lines(void **state)
{
    (void)state;
    expect_render("a{# one #}b{# two\nlines {{ not parsed }} #}c", NULL, "abc");
}

static void test_whitespace_control_strips_whitespace_and_newlines_on_its_side(void **state)
{
    (void)state;
    expect_render("a  \n  {%- if true -%}  \n  b  \n  {%- endif -%}\n  c", NULL, "abc");
    expect_render("x \n {{- 1 -}} \n y", NULL, "x1y");
    expect_render("x \n {#- c -#} \n y", NULL, "xy");
    expect_render("x \n {{- 1 }} \n y", NULL, "x1 \n y");
    expect_render("x \n {{ 1 -}} \n y", NULL, "x \n 1y");
}

static void test_blocks_keep_their_newlines_without_trim_blocks(void **state)
{
    (void)state;
    expect_render("{% for i in range(2) %}\n  v{{ i }}\n{% endfor %}\n", NULL, "\n  v0\n\n  v1\n\n");
    expect_render("line\n", NULL, "line\n"); /* a trailing newline is kept */
}

static void test_typical_cuda_loop_with_dash_tags(void **state)
{
    tmpl_value *c = sample_ctx();
    (void)state;
    const char *t = "{\n"
                    "{%- for x in xs %}\n"
                    "    a[{{ loop.index0 }}] = {{ x }};\n"
                    "{%- endfor %}\n"
                    "}\n";
    expect_render(t, c, "{\n    a[0] = 10;\n    a[1] = 20;\n    a[2] = 30;\n}\n");
    tmpl_unref(c);
}

static void test_macro_with_default_and_keyword_arguments(void **state)
{
    (void)state;
    const char *t = "{% macro f(a, b=2, c=a * 10) %}<{{ a }},{{ b }},{{ c }}>{% endmacro %}"
                    "{{ f(1) }}{{ f(1, 3) }}{{ f(1, c=0) }}{{ f(b=5, a=4) }}";
    expect_render(t, NULL, "<1,2,10><1,3,10><1,2,0><4,5,40>");
}

static void test_macro_calls_macro_and_sees_root_variables_but_not_caller_locals(void **state)
{
    tmpl_value *c = sample_ctx();
    (void)state;
    const char *t = "{% set top = 'T' %}"
                    "{% macro inner(x) %}({{ x }}{{ top }}{{ name }}){% endmacro %}"
                    "{% macro outer(x) %}[{{ inner(x) }}{{ local|default('-') }}]{% endmacro %}"
                    "{% for i in range(2) %}{% set local = 'L' %}{{ outer(i) }}{% endfor %}";
    expect_render(t, c, "[(0Tconv)-][(1Tconv)-]");
    tmpl_unref(c);
}

static void test_macro_output_is_a_string_usable_in_expressions(void **state)
{
    (void)state;
    const char *t = "{% macro v(i) %}x{{ i }}{% endmacro %}{{ v(1) ~ '+' ~ v(2) }} {{ v(10)|length }} "
                    "{{ v(3)|upper }}";
    expect_render(t, NULL, "x1+x2 3 X3");
}

static void test_macro_body_keeps_whitespace_control(void **state)
{
    (void)state;
    const char *t = "{%- macro udiv(x, d) -%}\n"
                    "{%- if d.pow2 -%}\n"
                    "({{ x }} >> {{ d.shift }})\n"
                    "{%- else -%}\n"
                    "(__umulhi({{ x }}, {{ d.mul|hex }}u) >> {{ d.shift }})\n"
                    "{%- endif -%}\n"
                    "{%- endmacro -%}\n"
                    "q = {{ udiv('i', {'pow2': false, 'mul': 2863311531, 'shift': 1}) }};\n"
                    "r = {{ udiv('j', {'pow2': true, 'shift': 3}) }};\n";
    expect_render(t, NULL, "q = (__umulhi(i, 0xaaaaaaabu) >> 1);\nr = (j >> 3);\n");
}

static void test_include_sees_current_variables(void **state)
{
    tmpl_value *c = tmpl_map();
    (void)state;
    tmpl_set_str(c, "who", "ctx");
    expect_render("<{% include 'hello.cu' %}>{% set who = 'set' %}<{% include \"hello.cu\" %}>", c,
                  "<hello ctx><hello set>");
    expect_render("{% for item in ['a', 'b'] %}{% include 'loopvars.cuh' %}{% endfor %}", c, "[a:1][b:2]");
    tmpl_unref(c);
}

static void test_include_by_expression_and_its_macros_stay_visible(void **state)
{
    tmpl_value *c = tmpl_map();
    (void)state;
    tmpl_set_str(c, "lib", "macros");
    expect_render("{%- include lib ~ '.cuh' -%}\n{{ twice('ab') }} {{ from_include }}", c, "abab 7");
    tmpl_unref(c);
}

/* ---- globals and filters ---- */

static void test_globals_len_min_max_on_lists_and_arguments(void **state)
{
    tmpl_value *c = sample_ctx();
    (void)state;
    expect_render("{{ len(xs) }} {{ len('abcd') }} {{ len(m) }} {{ min(xs) }} {{ max(xs) }} {{ min(4, 2, 9) }} "
                  "{{ max(1, 2.5) }} {{ max('a', 'c', 'b') }}",
                  c, "3 4 3 10 30 2 2.5 c");
    tmpl_unref(c);
}

static void test_filter_f32_prints_shortest_exact_literals(void **state)
{
    tmpl_value *c = tmpl_map();
    (void)state;
    tmpl_set_float(c, "flt_min", FLT_MIN);
    tmpl_set_float(c, "flt_max", FLT_MAX);
    tmpl_set_float(c, "denorm", 0x1p-149);
    tmpl_set_float(c, "pi", 3.14159265358979);
    tmpl_set_float(c, "third", 1.0 / 3.0);
    expect_render("{{ 0.5|f32 }} {{ 1|f32 }} {{ -0.0|f32 }} {{ 0.0|f32 }} {{ 0.1|f32 }} {{ 100|f32 }} {{ 1e10|f32 }} "
                  "{{ -2.5|f32 }} {{ 1e6|f32 }} {{ 1.5e6|f32 }} {{ -120|f32 }} {{ 1e7|f32 }} {{ 0.0001|f32 }} {{ 1e-5|f32 }}",
                  c, "0.5f 1.0f -0.0f 0.0f 0.1f 100.0f 1e+10f -2.5f 1000000.0f 1500000.0f -120.0f 1e+07f 0.0001f 1e-05f");
    expect_render("{{ flt_min|f32 }} {{ flt_max|f32 }} {{ denorm|f32 }} {{ pi|f32 }} {{ third|f32 }}", c,
                  "1.1754944e-38f 3.4028235e+38f 1e-45f 3.1415927f 0.33333334f");
    tmpl_unref(c);
}

/* Checks one literal: suffix f, a '.' or exponent, and strtof gives back the same bits. */
static void check_f32_literal(const char *lit, float want)
{
    size_t len = strlen(lit);
    assert_true(len >= 2 && lit[len - 1] == 'f');
    assert_non_null(strpbrk(lit, ".e"));
    char *end;
    float back = strtof(lit, &end);
    assert_ptr_equal(end, lit + len - 1);
    if (memcmp(&back, &want, sizeof back) != 0)
        fail_msg("%s does not read back as %a", lit, (double)want);
    /* Shortest: one digit fewer (where there is more than one) must not round-trip. */
    char shorter[64];
    int digits = 0;
    for (const char *p = lit; *p && *p != 'e' && *p != 'f'; ++p)
        digits += *p >= '0' && *p <= '9';
    if (digits > 1 && strchr(lit, 'e')) {
        snprintf(shorter, sizeof shorter, "%.*e", digits - 2, (double)want);
        float s = strtof(shorter, NULL);
        assert_true(memcmp(&s, &want, sizeof s) != 0 || strlen(shorter) >= len);
    }
}

static void test_filter_f32_round_trips_random_floats_including_subnormals(void **state)
{
    (void)state;
    enum { COUNT = 100000 };
    tmpl_value *c = tmpl_map(), *list = tmpl_list();
    float *want = malloc(COUNT * sizeof *want);
    assert_non_null(want);
    for (int i = 0; i < COUNT; ++i) {
        uint32_t bits = (uint32_t)rng_next();
        if (i % 4 == 0)
            bits &= 0x807fffffu; /* subnormals and zeros */
        if ((bits & 0x7f800000u) == 0x7f800000u)
            bits &= 0xbfffffffu; /* no inf or nan */
        memcpy(&want[i], &bits, sizeof bits);
        tmpl_list_push(list, tmpl_float(want[i]));
    }
    tmpl_map_set(c, "xs", list);
    assert_true(tmpl_ok(c));
    char *out = render_ok("{% for x in xs %}{{ x|f32 }}\n{% endfor %}", c);
    char *line = out;
    for (int i = 0; i < COUNT; ++i) {
        char *nl = strchr(line, '\n');
        assert_non_null(nl);
        *nl = '\0';
        check_f32_literal(line, want[i]);
        line = nl + 1;
    }
    assert_string_equal(line, "");
    free(out);
    free(want);
    tmpl_unref(c);
}

static void test_filter_f64_round_trips_doubles_without_suffix(void **state)
{
    (void)state;
    enum { COUNT = 20000 };
    expect_render("{{ 0.1|f64 }} {{ 1|f64 }} {{ -0.0|f64 }} {{ (1 / 3)|f64 }} {{ 1e300|f64 }}", NULL,
                  "0.1 1.0 -0.0 0.3333333333333333 1e+300");
    tmpl_value *c = tmpl_map(), *list = tmpl_list();
    double *want = malloc(COUNT * sizeof *want);
    assert_non_null(want);
    for (int i = 0; i < COUNT; ++i) {
        uint64_t bits = rng_next();
        if (i % 4 == 0)
            bits &= 0x800fffffffffffffull;
        if ((bits & 0x7ff0000000000000ull) == 0x7ff0000000000000ull)
            bits &= 0xbfffffffffffffffull;
        memcpy(&want[i], &bits, sizeof bits);
        tmpl_list_push(list, tmpl_float(want[i]));
    }
    tmpl_map_set(c, "xs", list);
    char *out = render_ok("{% for x in xs %}{{ x|f64 }}\n{% endfor %}", c), *line = out;
    for (int i = 0; i < COUNT; ++i) {
        char *nl = strchr(line, '\n');
        assert_non_null(nl);
        *nl = '\0';
        assert_non_null(strpbrk(line, ".e"));
        double back = strtod(line, NULL);
        assert_memory_equal(&back, &want[i], sizeof back);
        line = nl + 1;
    }
    free(out);
    free(want);
    tmpl_unref(c);
}

static void test_filter_hex_upper_lower(void **state)
{
    (void)state;
    expect_render("{{ 31|hex }} {{ 0|hex }} {{ 4294967295|hex }} {{ 'aBc'|upper }} {{ 'AbC'|lower }}", NULL,
                  "0x1f 0x0 0xffffffff ABC abc");
}

static void test_filter_join_length_and_chained_filters(void **state)
{
    tmpl_value *c = sample_ctx();
    (void)state;
    expect_render("{{ xs|join(', ') }}|{{ [1, 'a', true, 0.5]|join }}|{{ xs|length }}|{{ name|length }}|"
                  "{{ m|length }}|{{ xs|join('-')|length }}|{{ name|upper|length + 1 }}",
                  c, "10, 20, 30|1atrue0.5|3|4|3|8|5");
    tmpl_unref(c);
}

static void test_filter_int_float_abs(void **state)
{
    (void)state;
    expect_render("{{ 3.9|int }} {{ -3.9|int }} {{ '42'|int }} {{ true|int }} {{ 3|float }} {{ '2.5'|float }} "
                  "{{ -4|abs }} {{ -2.5|abs }} {{ (7|float / 2)|int }}",
                  NULL, "3 -3 42 1 3 2.5 4 2.5 3");
}

static void test_filter_default_replaces_only_undefined(void **state)
{
    tmpl_value *c = sample_ctx();
    (void)state;
    expect_render("{{ missing|default(5) }} {{ n|default(5) }} {{ dim.nope|default('d') }} {{ m['x']|default(1) }} "
                  "{{ no|default('f') }} {{ no|default('f', true) }} [{{ missing|default }}]",
                  c, "5 3 d 1 false f []");
    tmpl_unref(c);
}

static void test_filter_indent_indents_all_lines_but_the_first(void **state)
{
    (void)state;
    expect_render("{{ 'a\\nb\\n\\nc\\n'|indent(2) }}|{{ 'x\\ny'|indent }}", NULL, "a\n  b\n\n  c\n|x\n    y");
    expect_render("{% macro body() %}l1\nl2{% endmacro %}  {{ body()|indent(2) }}", NULL, "  l1\n  l2");
}

static void test_filter_items_pairs_keys_and_values(void **state)
{
    tmpl_value *c = sample_ctx();
    (void)state;
    expect_render("{{ (m|items)[1][0] }}={{ (m|items)[1][1] }} {{ m|items|length }}", c, "alpha=2 3");
    tmpl_unref(c);
}

/* ---- values API ---- */

static void test_map_set_replaces_value_and_keeps_position(void **state)
{
    tmpl_value *c = tmpl_map(), *inner = tmpl_map();
    (void)state;
    tmpl_set_int(inner, "a", 1);
    tmpl_set_int(inner, "b", 2);
    tmpl_set_str(inner, "a", "again");
    tmpl_map_set(c, "inner", inner);
    expect_render("{% for k, v in inner|items %}{{ k }}={{ v }};{% endfor %}", c, "a=again;b=2;");
    tmpl_unref(c);
}

static void test_large_map_lookups_stay_correct(void **state)
{
    tmpl_value *c = tmpl_map(), *big = tmpl_map();
    char key[32];
    (void)state;
    for (int i = 0; i < 1000; ++i) {
        snprintf(key, sizeof key, "k%d", i);
        tmpl_set_int(c, key, i * 3);
        tmpl_set_int(big, key, i);
    }
    tmpl_set_int(c, "k500", -1);
    tmpl_set_int(big, "k500", -1);
    tmpl_map_set(c, "big", big);
    expect_render("{{ k0 }} {{ k7 }} {{ k8 }} {{ k9 }} {{ k500 }} {{ k999 }} {{ 'k1000' in big }}", c,
                  "0 21 24 27 -1 2997 false");
    expect_render("{{ big|length }} {{ (big|items)[500][0] }}={{ big.k500 }} {{ (big|items)[999][1] }}", c,
                  "1000 k500=-1 999");
    tmpl_unref(c);
}

static void test_tmpl_ok_reports_a_failed_element_anywhere(void **state)
{
    (void)state;
    tmpl_value *c = tmpl_map(), *inner = tmpl_list();
    tmpl_list_push(inner, tmpl_int(1));
    tmpl_map_set(c, "inner", inner);
    assert_true(tmpl_ok(c));
    tmpl_list_push(inner, NULL); /* as when a constructor ran out of memory */
    assert_false(tmpl_ok(c));
    assert_false(tmpl_ok(NULL));
    char *out = NULL, err[256];
    assert_false(tmpl_render("t.cu", "x", c, NULL, NULL, &out, err, sizeof err));
    assert_string_equal(err, "t.cu:1:1: the context is incomplete (out of memory while building it)");
    tmpl_unref(c);
}

static void test_values_are_reference_counted(void **state)
{
    (void)state;
    tmpl_value *s = tmpl_str("shared"), *a = tmpl_map(), *b = tmpl_map();
    tmpl_map_set(a, "s", tmpl_ref(s));
    tmpl_map_set(b, "s", tmpl_ref(s));
    tmpl_unref(a); /* s lives on in b */
    expect_render("{{ s }}", b, "shared");
    tmpl_unref(b);
    tmpl_unref(s); /* valgrind/ASan check that this was the last reference */
}

static void test_render_of_hundreds_of_lines_is_complete(void **state)
{
    tmpl_value *c = tmpl_map(), *rows = tmpl_list();
    (void)state;
    for (int i = 0; i < 3000; ++i)
        tmpl_list_push(rows, tmpl_int(i));
    tmpl_map_set(c, "rows", rows);
    char *out = render_ok("{%- for r in rows %}\n    acc[{{ r }}] = fmaf(a[{{ r % 7 }}], {{ (r * 0.5)|f32 }}, acc[{{ r }}]);"
                          "{%- endfor %}\n",
                          c);
    assert_non_null(strstr(out, "\n    acc[2999] = fmaf(a[3], 1499.5f, acc[2999]);\n"));
    size_t lines = 0;
    for (const char *p = out; *p; ++p)
        lines += *p == '\n';
    assert_int_equal(lines, 3001);
    free(out);
    tmpl_unref(c);
}

/* ---- errors: each names the template, line and column ---- */

static void test_error_names_template_line_and_column(void **state)
{
    (void)state;
    expect_error("line 1\nline 2 {{ tile_m }}", NULL, "t.cu:2:11: unknown variable 'tile_m'");
}

static void test_error_unknown_filter(void **state)
{
    (void)state;
    expect_error("{{ 1 }}\n  {{ x|nope }}", NULL, "t.cu:2:8: unknown filter 'nope'");
    /* Reported even in a branch never taken: filters are checked when parsing. */
    expect_error("{% if false %}{{ 1|f23 }}{% endif %}", NULL, "t.cu:1:20: unknown filter 'f23'");
}

static void test_error_unknown_key_and_attribute(void **state)
{
    tmpl_value *c = sample_ctx();
    (void)state;
    expect_error("{{ dim.strid }}", c, "t.cu:1:8: unknown key 'strid'");
    expect_error("{{ m['nope'] }}", c, "t.cu:1:5: unknown key 'nope'");
    expect_error("{{ n.x }}", c, "t.cu:1:6: int has no attribute 'x'");
    expect_error("{% for x in xs %}{{ loop.idx }}{% endfor %}", c, "t.cu:1:26: unknown loop attribute 'idx'");
    tmpl_unref(c);
}

static void test_error_type_mismatch_in_operators(void **state)
{
    tmpl_value *c = sample_ctx();
    (void)state;
    expect_error("{{ name + n }}", c, "t.cu:1:9: cannot add string and int");
    expect_error("{{ n - 'a' }}", c, "t.cu:1:6: cannot subtract int and string");
    expect_error("{{ xs * 2.0 }}", c, "t.cu:1:7: cannot multiply list and float");
    expect_error("{{ n < 'a' }}", c, "t.cu:1:6: cannot compare int and string");
    expect_error("{{ true + 1 }}", c, "t.cu:1:9: cannot add bool and int");
    expect_error("{{ -name }}", c, "t.cu:1:4: cannot apply unary '-' to string");
    expect_error("{{ 1 in 2 }}", c, "t.cu:1:6: cannot look for int in int");
    expect_error("{{ 9223372036854775807 + 1 }}", c, "t.cu:1:24: integer overflow");
    expect_error("{{ xs[name] }}", c, "t.cu:1:6: cannot index list with string");
    tmpl_unref(c);
}

static void test_error_printing_a_list_map_or_none(void **state)
{
    tmpl_value *c = sample_ctx();
    (void)state;
    expect_error("x\n{{ xs }}", c, "t.cu:2:4: cannot print a list");
    expect_error("{{ m }}", c, "t.cu:1:4: cannot print a map");
    expect_error("{{ none }}", c, "t.cu:1:4: cannot print none");
    expect_error("{{ 'a' ~ [1] }}", c, "t.cu:1:8: cannot print a list");
    /* a list on the left of ~ was joined as a list to the right side, read as one whatever it was
     * (found by fuzz_tmpl: a heap overflow) */
    expect_error("{{ [1] ~ 'a' }}", c, "t.cu:1:8: cannot print a list");
    expect_error("{{ xs ~ n }}", c, "t.cu:1:7: cannot print a list");
    tmpl_unref(c);
}

static void test_error_unterminated_tags_strings_and_comments(void **state)
{
    (void)state;
    expect_error("ok\n  {{ x ", NULL, "t.cu:2:3: unterminated '{{'");
    expect_error("{% if x %}\n{% endif", NULL, "t.cu:2:1: unterminated '{%'");
    expect_error("{{ 'abc }}", NULL, "t.cu:1:4: unterminated string");
    expect_error("a\nb {# never closed", NULL, "t.cu:2:3: unterminated comment");
}

static void test_error_unexpected_tokens(void **state)
{
    (void)state;
    expect_error("{{ a b }}", NULL, "t.cu:1:6: unexpected 'b'");
    expect_error("{{ }}", NULL, "t.cu:1:4: unexpected '}}'");
    expect_error("{{ 1 + }}", NULL, "t.cu:1:8: unexpected '}}'");
    expect_error("{{ (1, 2) }}", NULL, "t.cu:1:6: unexpected ','");
    expect_error("{% for in xs %}{% endfor %}", NULL, "t.cu:1:8: unexpected 'in'");
    expect_error("{% set = 1 %}", NULL, "t.cu:1:8: unexpected '='");
    expect_error("{{ x @ y }}", NULL, "t.cu:1:6: unexpected character");
    expect_error("{% frobnicate %}", NULL, "t.cu:1:4: unknown statement 'frobnicate'");
    expect_error("{{ 99999999999999999999 }}", NULL, "t.cu:1:4: integer literal too large");
}

static void test_error_unmatched_end_tags(void **state)
{
    (void)state;
    expect_error("a\n{% endfor %}", NULL, "t.cu:2:4: unmatched 'endfor'");
    expect_error("{% for x in [] %}{% endif %}{% endfor %}", NULL, "t.cu:1:21: unmatched 'endif'");
    expect_error("{% endmacro %}", NULL, "t.cu:1:4: unmatched 'endmacro'");
    expect_error("{% else %}", NULL, "t.cu:1:4: unexpected 'else'");
    expect_error("{% if 1 %}{% else %}{% else %}{% endif %}", NULL, "t.cu:1:24: unexpected 'else'");
}

static void test_error_missing_end_tags_at_end_of_template(void **state)
{
    (void)state;
    expect_error("x\n  {% for i in range(3) %}{{ i }}", NULL, "t.cu:2:6: 'for' is not closed (missing 'endfor')");
    expect_error("{% if 1 %}a{% elif 2 %}b", NULL, "t.cu:1:4: 'if' is not closed (missing 'endif')");
    expect_error("{% macro m() %}a", NULL, "t.cu:1:4: 'macro' is not closed (missing 'endmacro')");
}

static void test_error_bad_range(void **state)
{
    (void)state;
    expect_error("{{ range(1, 5, 0)|length }}", NULL, "t.cu:1:4: range() step must not be zero");
    expect_error("{{ range('3')|length }}", NULL, "t.cu:1:4: 'range' expects int arguments, got string");
    expect_error("{{ range()|length }}", NULL, "t.cu:1:4: function 'range' takes 1 to 3 arguments, got 0");
    expect_error("{{ range(0, 1000000000)|length }}", NULL, "t.cu:1:4: range() of 1000000000 elements is too long");
}

static void test_error_division_by_zero(void **state)
{
    (void)state;
    expect_error("{{ 1 / 0 }}", NULL, "t.cu:1:6: division by zero");
    expect_error("{{ 1 // 0 }}", NULL, "t.cu:1:6: division by zero");
    expect_error("{{ 1 % 0 }}", NULL, "t.cu:1:6: division by zero");
    expect_error("{{ 1.5 / 0.0 }}", NULL, "t.cu:1:8: division by zero");
    expect_error("{{ 1.5 % 0 }}", NULL, "t.cu:1:8: division by zero");
}

static void test_error_index_out_of_range(void **state)
{
    tmpl_value *c = sample_ctx();
    (void)state;
    expect_error("{{ xs[3] }}", c, "t.cu:1:6: index 3 out of range for list of length 3");
    expect_error("{{ xs[-4] }}", c, "t.cu:1:6: index -4 out of range for list of length 3");
    expect_error("{{ empty[0] }}", c, "t.cu:1:9: index 0 out of range for list of length 0");
    tmpl_unref(c);
}

static void test_error_missing_include_points_at_its_name(void **state)
{
    (void)state;
    expect_error("a\n{% include 'nope.cuh' %}", NULL, "t.cu:2:12: template 'nope.cuh' not found");
    expect_error("{% include 42 %}", NULL, "t.cu:1:12: include expects a template name, got int");
}

static void test_error_inside_include_names_the_included_template(void **state)
{
    (void)state;
    expect_error("x\n{% include 'bad.cuh' %}", NULL, "bad.cuh:2:6: unknown variable 'missing_var'");
    expect_error("{% include 'syntax.cuh' %}", NULL, "syntax.cuh:2:7: unexpected '%}'");
    /* A macro reports errors in the template that defined it. */
    expect_error("{% include 'badmacro.cuh' %}\n{{ boom(1) }}", NULL, "badmacro.cuh:2:6: cannot add int and string");
}

static void test_error_recursive_include_is_stopped(void **state)
{
    (void)state;
    expect_error("{% include 'self.cu' %}", NULL,
                 "self.cu:1:13: includes nested too deep (does 'self.cu' include itself?)");
}

static void test_error_macro_argument_count_mismatch(void **state)
{
    (void)state;
    const char *def = "{% macro f(a, b=1) %}{% endmacro %}{% macro g(a) %}{% endmacro %}";
    char t[256];
    snprintf(t, sizeof t, "%s{{ f(1, 2, 3) }}", def);
    expect_error(t, NULL, "t.cu:1:69: macro 'f' takes 1 to 2 arguments, got 3");
    snprintf(t, sizeof t, "%s{{ f() }}", def);
    expect_error(t, NULL, "t.cu:1:69: macro 'f' takes 1 to 2 arguments, got 0");
    snprintf(t, sizeof t, "%s{{ g(1, 2) }}", def);
    expect_error(t, NULL, "t.cu:1:69: macro 'g' takes 1 argument, got 2");
    snprintf(t, sizeof t, "%s{{ g(c=1) }}", def);
    expect_error(t, NULL, "t.cu:1:69: macro 'g' has no parameter 'c'");
    snprintf(t, sizeof t, "%s{{ g(1, a=1) }}", def);
    expect_error(t, NULL, "t.cu:1:69: macro 'g' got argument 'a' twice");
    expect_error("{% macro h(a=1, b) %}{% endmacro %}", NULL,
                 "t.cu:1:17: parameter 'b' without a default follows one with a default");
}

/* Depth limits bound the stack, not the work: a loop nest that would run for ever stops at the
 * render's budget (fuzz_tmpl found eleven nested loops of 25 that hung). */
static void test_error_runaway_render_is_stopped(void **state)
{
    (void)state;
    const char *why = "the render takes over 16777216 loop iterations, macro calls and includes (a runaway loop "
                      "nest or recursion?)";
    char want[256];
    snprintf(want, sizeof want, "t.cu:1:30: %s", why);
    expect_error("{% for a in range(4096) %}{% for b in range(4097) %}{% endfor %}{% endfor %}", NULL, want);
    /* (macro calls count the same way; a doubling recursion to depth 40 takes seconds to spend it) */
    /* text stops at 256 MiB: checked before a repetition is made (the same check follows
     * concatenations, joins, indents and the output as they grow) */
    expect_error("{{ 'ab' * 134217729 }}", NULL, "t.cu:1:9: text over 256 MiB (a runaway template?)");
}

static void test_error_recursive_macro_is_stopped(void **state)
{
    (void)state;
    expect_error("{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}", NULL,
                 "t.cu:1:20: macro calls nested too deep (is 'r' recursive?)");
}

static void test_error_unknown_function_and_not_callable(void **state)
{
    tmpl_value *c = sample_ctx();
    (void)state;
    expect_error("{{ frob(1) }}", c, "t.cu:1:4: unknown function 'frob'");
    expect_error("{{ n(1) }}", c, "t.cu:1:4: int is not callable");
    /* a callee that is a temporary (a macro's output) is freed before the message names its kind
     * (found by fuzz_tmpl: a use after free) */
    expect_error("{% macro f() %}x{% endmacro %}{{ f()(5) }}", c, "t.cu:1:34: string is not callable");
    expect_error("{{ len(1, 2) }}", c, "t.cu:1:4: function 'len' takes 1 argument, got 2");
    expect_error("{{ min([]) }}", c, "t.cu:1:4: min() of an empty list");
    tmpl_unref(c);
}

static void test_error_bad_filter_arguments_and_values(void **state)
{
    (void)state;
    expect_error("{{ 1e39|f32 }}", NULL, "t.cu:1:9: 1e+39 is not a finite float");
    expect_error("{{ (1e308 * 10)|f64 }}", NULL, "t.cu:1:17: inf is not a finite double");
    expect_error("{{ 'x'|f32 }}", NULL, "t.cu:1:8: 'f32' expects a number, got string");
    expect_error("{{ -1|hex }}", NULL, "t.cu:1:7: 'hex' of negative number -1");
    expect_error("{{ 1.5|hex }}", NULL, "t.cu:1:8: 'hex' expects an int, got float");
    expect_error("{{ [1]|join(',', 2) }}", NULL, "t.cu:1:8: filter 'join' takes 0 to 1 arguments, got 2");
    expect_error("{{ 'ab'|int }}", NULL, "t.cu:1:9: cannot convert 'ab' to int");
    expect_error("{{ 3|items }}", NULL, "t.cu:1:6: 'items' expects a map, got int");
    expect_error("{{ (1 + 'a')|default(2) }}", NULL, "t.cu:1:7: cannot add int and string");
}

static void test_error_loop_over_non_list_and_bad_unpacking(void **state)
{
    (void)state;
    expect_error("{% for x in 3 %}{% endfor %}", NULL, "t.cu:1:13: cannot iterate over int");
    expect_error("{% for a, b in [[1, 2, 3]] %}{% endfor %}", NULL, "t.cu:1:4: cannot unpack a list of 3 into 2 names");
    expect_error("{% for a, b in [1] %}{% endfor %}", NULL, "t.cu:1:4: cannot unpack int into 2 names");
}

static void test_error_context_must_be_a_map_and_message_is_truncated_safely(void **state)
{
    (void)state;
    tmpl_value *l = tmpl_list();
    char *out = NULL, err[12];
    assert_false(tmpl_render("t.cu", "x", l, NULL, NULL, &out, err, sizeof err));
    assert_string_equal(err, "t.cu:1:1: t"); /* truncated to errlen */
    assert_null(out);
    assert_false(tmpl_render("t.cu", "{{ x }}", NULL, NULL, NULL, &out, NULL, 0)); /* no err buffer */
    tmpl_unref(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_with_lone_braces_passes_through),
        cmocka_unit_test(test_output_prints_ints_floats_strings_and_cpp_bools),
        cmocka_unit_test(test_string_literals_decode_escapes_in_both_quotes),
        cmocka_unit_test(test_list_and_map_literals_index_and_attribute),
        cmocka_unit_test(test_map_literal_may_end_with_double_brace),
        cmocka_unit_test(test_negative_index_counts_from_the_end),
        cmocka_unit_test(test_attribute_and_key_access_on_context_maps),
        cmocka_unit_test(test_operator_precedence_follows_jinja),
        cmocka_unit_test(test_integer_division_and_modulo_floor_like_python),
        cmocka_unit_test(test_true_division_of_ints_gives_float),
        cmocka_unit_test(test_int_and_float_mix_gives_float),
        cmocka_unit_test(test_strings_concatenate_repeat_and_tilde_joins_any_values),
        cmocka_unit_test(test_comparisons_chain_like_python),
        cmocka_unit_test(test_in_and_not_in_on_strings_lists_and_maps),
        cmocka_unit_test(test_and_or_return_the_deciding_operand_with_python_truthiness),
        cmocka_unit_test(test_conditional_expression_without_else_is_empty),
        cmocka_unit_test(test_for_loop_exposes_loop_index_and_index0),
        cmocka_unit_test(test_for_loop_exposes_loop_first_last_and_length),
        cmocka_unit_test(test_for_over_map_items_keeps_insertion_order),
        cmocka_unit_test(test_nested_loops_shadow_the_loop_variable),
        cmocka_unit_test(test_loop_variable_kept_by_a_set_is_not_changed_later),
        cmocka_unit_test(test_range_with_one_two_three_arguments_and_negative_step),
        cmocka_unit_test(test_if_elif_else_chain_takes_first_true_branch),
        cmocka_unit_test(test_set_assigns_in_current_scope_and_loop_body_scope_is_private),
        cmocka_unit_test(test_set_in_loop_does_not_carry_to_next_iteration),
        cmocka_unit_test(test_comments_are_dropped_and_may_span_lines),
        cmocka_unit_test(test_whitespace_control_strips_whitespace_and_newlines_on_its_side),
        cmocka_unit_test(test_blocks_keep_their_newlines_without_trim_blocks),
        cmocka_unit_test(test_typical_cuda_loop_with_dash_tags),
        cmocka_unit_test(test_macro_with_default_and_keyword_arguments),
        cmocka_unit_test(test_macro_calls_macro_and_sees_root_variables_but_not_caller_locals),
        cmocka_unit_test(test_macro_output_is_a_string_usable_in_expressions),
        cmocka_unit_test(test_macro_body_keeps_whitespace_control),
        cmocka_unit_test(test_include_sees_current_variables),
        cmocka_unit_test(test_include_by_expression_and_its_macros_stay_visible),
        cmocka_unit_test(test_globals_len_min_max_on_lists_and_arguments),
        cmocka_unit_test(test_filter_f32_prints_shortest_exact_literals),
        cmocka_unit_test(test_filter_f32_round_trips_random_floats_including_subnormals),
        cmocka_unit_test(test_filter_f64_round_trips_doubles_without_suffix),
        cmocka_unit_test(test_filter_hex_upper_lower),
        cmocka_unit_test(test_filter_join_length_and_chained_filters),
        cmocka_unit_test(test_filter_int_float_abs),
        cmocka_unit_test(test_filter_default_replaces_only_undefined),
        cmocka_unit_test(test_filter_indent_indents_all_lines_but_the_first),
        cmocka_unit_test(test_filter_items_pairs_keys_and_values),
        cmocka_unit_test(test_map_set_replaces_value_and_keeps_position),
        cmocka_unit_test(test_large_map_lookups_stay_correct),
        cmocka_unit_test(test_tmpl_ok_reports_a_failed_element_anywhere),
        cmocka_unit_test(test_values_are_reference_counted),
        cmocka_unit_test(test_render_of_hundreds_of_lines_is_complete),
        cmocka_unit_test(test_error_names_template_line_and_column),
        cmocka_unit_test(test_error_unknown_filter),
        cmocka_unit_test(test_error_unknown_key_and_attribute),
        cmocka_unit_test(test_error_type_mismatch_in_operators),
        cmocka_unit_test(test_error_printing_a_list_map_or_none),
        cmocka_unit_test(test_error_unterminated_tags_strings_and_comments),
        cmocka_unit_test(test_error_unexpected_tokens),
        cmocka_unit_test(test_error_unmatched_end_tags),
        cmocka_unit_test(test_error_missing_end_tags_at_end_of_template),
        cmocka_unit_test(test_error_bad_range),
        cmocka_unit_test(test_error_division_by_zero),
        cmocka_unit_test(test_error_index_out_of_range),
        cmocka_unit_test(test_error_missing_include_points_at_its_name),
        cmocka_unit_test(test_error_inside_include_names_the_included_template),
        cmocka_unit_test(test_error_recursive_include_is_stopped),
        cmocka_unit_test(test_error_macro_argument_count_mismatch),
        cmocka_unit_test(test_error_recursive_macro_is_stopped),
        cmocka_unit_test(test_error_runaway_render_is_stopped),
        cmocka_unit_test(test_error_unknown_function_and_not_callable),
        cmocka_unit_test(test_error_bad_filter_arguments_and_values),
        cmocka_unit_test(test_error_loop_over_non_list_and_bad_unpacking),
        cmocka_unit_test(test_error_context_must_be_a_map_and_message_is_truncated_safely),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
