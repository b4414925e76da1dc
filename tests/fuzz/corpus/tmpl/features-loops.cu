{% for x in xs %}{{ loop.index }}:{{ x }}{{ ',' if not loop.last }}{% endfor %}
{% for k, v in m|items %}{{ k }}={{ v }} {% endfor %}
{% for i in range(10, 0, -3) %}{{ i }}{% endfor %}
{%- for x in empty -%}never{%- endfor %}
