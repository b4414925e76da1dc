{% macro f(a, b=1) -%}({{ a }}+{{ b }}){%- endmacro %}{{ f(1) }}{{ f(2, b=3) }}{{ f(n)|length }}
{% include 'inc.cuh' %}{{ twice(4) }}{{ from_inc|join(',') }}
