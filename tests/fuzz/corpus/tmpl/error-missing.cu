a
{% include 'broken.cuh' %}{{ big + 1 }}