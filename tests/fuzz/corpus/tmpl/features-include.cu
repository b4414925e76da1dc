{% include 'common.cuh' %}{{ udiv('x', m.d) }} {{ times('y', 3) }}
{% include 'self.cu' if n > 100 else 'inc.cuh' %}
