{% set t = n * 2 %}{% if t > 10 %}big{% elif t > 4 %}mid {{ t }}{% else %}small{% endif %}
{# a comment #}{%- if yes -%}  yes  {%- endif -%}
