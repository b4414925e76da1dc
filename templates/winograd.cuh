{#- Winograd transform programs (generator/winograd_program.c): one statement per temporary, each
    a sum of terms whose coefficients are folded in: +-1 as additions and subtractions, other
    constants as fp32 literals; terms with a zero coefficient never reach the template. -#}

{#- One term of a sum: "x", " + x", " - c * x" ... -#}
{%- macro wino_term(t, first) -%}
{%- if first -%}{{ "-" if t.negative }}{%- else -%}{{ " - " if t.negative else " + " }}{%- endif -%}
{%- if not t.unit -%}{{ t.magnitude|f32 }} * {% endif -%}{{ t.operand }}
{%- endmacro -%}

{#- The statements of program `prog`, then its outputs: out[i] = the temporary holding row i. -#}
{%- macro wino_program(prog, out, indent) -%}
{%- for s in prog.stmts %}
{{ indent }}const float {{ s.name }} = {% for t in s.terms %}{{ wino_term(t, loop.first) }}{% endfor %}{{ "0.0f" if not s.terms }};
{%- endfor %}
{%- for o in prog.outputs %}
{{ indent }}{{ out }}[{{ loop.index0 }}] = {{ o }};
{%- endfor %}
{%- endmacro -%}

{#- Dimension 1 of a 2-D transform: row i of d (`cols` values) through prog into the array
    `prefix`i of `outs` values, for each of the `rows` rows. -#}
{%- macro wino_rows(prog, rows, cols, outs, prefix, indent) -%}
{%- for i in range(rows) %}
{{ indent }}float {{ prefix }}{{ i }}[{{ outs }}];
{{ indent }}{
{{ indent }}    const float in[{{ cols }}] = { {% for j in range(cols) %}{{ ", " if not loop.first }}d[{{ i }}][{{ j }}]{% endfor %} };
{{- wino_program(prog, prefix ~ i, indent ~ "    ") }}
{{ indent }}}
{%- endfor %}
{%- endmacro -%}

{#- Dimension 0's input for column j: the rows' results `prefix`0[j], `prefix`1[j], ... -#}
{%- macro wino_column_in(rows, prefix, j) -%}
const float in[{{ rows }}] = { {% for i in range(rows) %}{{ ", " if not loop.first }}{{ prefix }}{{ i }}[{{ j }}]{% endfor %} };
{%- endmacro -%}
