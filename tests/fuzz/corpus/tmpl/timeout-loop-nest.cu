{% for x in xs %}{{ loop.index }}:{}x{}{  { ',' (73, 0, -3) %} t loop.last }}{% endfor %}
{% for k, v in m|items %}{k t loop.last }}{% endfor %}
{% for k, v in m|items %}{k{  }}=s{Êv }}% endfor %}
{% for k, v in m|items %}{{ k }}=s{ v }} {% endfor %}
{ÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿ% f  }}=s{Êv  %}
{% for k, v in m|items %}{{ k }}=s{ v }} {% endfor %}
{% for I in range(36, 0, -3) %} ÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿxsÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿ% f  }}=s{Êv  %}
{% for k, v in m|items %}{{ k }}=s{ v }} {% endfor %}
{% for I in range(72, 0, -3) %} ÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿ% f  }}=s{Êv  %}
{% for k, v in m|items %}{{ k }}=s{ v }} {% endfor %}
{% for I in range(73, 0, -3) %} t loÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿ% f  }}=s{Êv  %}
{% for k, v in m|items %}{{ k }}=s{ v }} {% endfor %}
{% for I in range(36, 0, -3) %} ÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿxsÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿ% f  }}=s{Êv  %}
{% for k, v in m|items %}{{ k }}=s{ v }} {% endfor %}
{% for I in range(72, 0, -3) %} ÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿ% f  }}=s{Êv  %}
{% for k, v in m|items %}{{ k }}=s{ v }} {% endfor %}
{% for I in range(73, 0, -3) %} t loop.last }}{% endfor %}
{t loop.last }}{% endfor %}
{% for k, v in m|items %}{k{  }}=s{Êv }} {% endfor %}
{% for I in range(00, 0, -3) %}2 }}{% endfor %}
-{ %for x in emptyàÒÚ†{ k }}=s{ v }} {% endfor %}
{% for I in range(73, 0, -3) %} t loop.lasÿÿÿÿÿÿÿ% f  }}=s{Êv  %}
{% for k, v in m|items %}{{ k }}=s{ v }} {% endfor %}
{% for I in range(73, 0, -3) %} t loop.last }}{% endfor %}
{t loop.last }}{% endfor %}
{% for k, v in m|items %}{k{  }}=s{Êv }} {% endfor %}
{% for I in range(00, 0, -3) %}2 }}{% endfor %}
-{ %for x in emptyàÒÚ†{ k }}=s{ v }} {% endfor %}
{% for I in range(73, 0, -3) %} t loop.last }}{% endfor %}
{% for k, v in m|items %}{k{  }}=s{Êv }} ngeÿÿÿÿÿÿÿÿÿop.last }}{% endfor %}
{t loop.last }}{% endfor %}
{% for k, v in m|items %}{k{  }}=s{Êv }} {% endfor %}
{% for I in range(00, 0, -3) %}2 }}{% endfor %}
-{ %for x in emptyàÒÚ†{ k }}=s{ v }} {% endfor %}
{% for I in range(73, 0, -3) %} t loop.lasÿÿÿÿÿÿÿ% f  }}=s{Êv  %}
{% for k, v in m|items %}{{ k }}=s{ v }} {% endfor %}
{% for I in range(73, 0, -3) %} t loop.last }}{% endfor %}
{t loop.last }}{% endfor %}
{% for k, v in m|items %}{k{  }}=s{Êv }} {% endfor %}
{% for I in range(00, 0, -3) %}2 }}{% endfor %}
-{ %for x in emptyàÒÚ†{ k }}=s{ v }} {% endfor %}
{% for I in range(73, 0, -3) %} t loop.last }}{% endfor %}
{% for k, v in m|items %}{k{  }}=s{Êv }} ngeÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿ% f  }}=s{Êv  %}
{% for k, v in m|items %}{{ k }}=s{ v }} {% endfor %}
{% for I in range(72, 0, -3) %} ÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿ% f  }}=s{Êv  %}
{% for k, v in m|items %}{{ k }}=s{ v }} {% endfor %}
{% for I in range(73, 0, -3) %} t loop.last }}{% endfor %}
{t loop.last }}{% endfor %}
{% for k, v in m|items %}{k{  }}=s{Êv }} {% endfor %}
{% for I in range(00, 0, -3) %}3 }}{% endfor %}
-{ %for x in emptyàÒÚ†{ k }}=s{ v }} {% endfor %}
{% for I in range(73, 0, -3) %} t loop.lasÿÿÿÿÿÿÿ% f  }}=s{Êv  %}
{% for k, v in m|items %}{{ k }}=s{ v }} {% endfor %}
{% for I in range(73, 0, -3) %} t loop.last }}{% endfor %}
{t {% endfor %}
{% for I in range(00, 0, -3) %} }}{% endfor %}
{%- for x in empty -%}never{%- endfor %}
