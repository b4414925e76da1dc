{#- Pieces shared by the templates. Everything they print was decided by the generator:
    a digit list says which magic constants divide which index, in which order. -#}

{#- x / d for a shape constant d, exact over the dividend range the generator derived. -#}
{%- macro udiv(x, d) -%}
{%- if d.pow2 -%}
({{ x }} >> {{ d.shift }})
{%- else -%}
(__umulhi({{ x }}, {{ d.mul|hex }}u) >> {{ d.shift }})
{%- endif -%}
{%- endmacro -%}

{#- x * k for a constant k, with the multiplication by 1 left out. -#}
{%- macro times(x, k) -%}{{ x if k == 1 else x ~ " * " ~ k ~ "u" }}{%- endmacro -%}

{#- Tap f of a spatial dimension as the input sees it: flipped for convolution. -#}
{%- macro tap(d) -%}{% if d.flip %}({{ d.kmax }}u - f{{ d.i }}){% else %}f{{ d.i }}{% endif %}{%- endmacro -%}

{#- Splits a flat index into its mixed-radix digits, innermost first. -#}
{%- macro decompose(digits, indent) -%}
{%- for g in digits %}
{%- if g.kind == "div" %}
{{ indent }}const unsigned {{ g.quot }} = {{ udiv(g.src, g.div) }};  // {{ g.src }} / {{ g.size }}
{{ indent }}const unsigned {{ g.name }} = {{ g.src }} - {{ g.quot }} * {{ g.size }}u;
{%- elif g.kind == "rest" %}
{{ indent }}const unsigned {{ g.name }} = {{ g.src }};
{%- else %}
{{ indent }}const unsigned {{ g.name }} = 0u;
{%- endif %}
{%- endfor %}
{%- endmacro -%}

{#- The file header: what this is and how it was derived, one comment line per entry. -#}
{%- macro file_header(lines) -%}
/*
{%- for line in lines %}
 *{{ " " ~ line if line else "" }}
{%- endfor %}
 */
{%- endmacro -%}
