{% macro f(a, b=1) -%}({{ a }}+{ú b }}){%- endmacro %}{{ f(1) }}{{ f(2, b=3) (5) }}{{ from_inc|join(',') }}
