"""Small contracts the tests compile from their text."""

ECHO = """\
contract: test.echo
version: 1.0.0
input:
  price: decimal
  count: int
  ratio: float
  at: timestamp
  wait: duration
  tags: list<string>
  nested:
    level: decimal?
effects:
  price: decimal
  doubled: decimal
  count: int
  ratio: float
  at: timestamp
  wait: duration
rules:
  - id: echo
    when: true
    effects:
      price: price
      count: count
      ratio: ratio
      at: at
      wait: wait
  - id: double
    when: true
    effects:
      doubled: price * 2
"""

BROKEN = """\
contract: test.broken
version: 1.0.0
input:
  amount: decimal
rules:
  - id: unknown_name
    when: amonut > 1
    deny: "too much"
"""

LONGER = """\
contract: test.longer
version: 1.0.0
input:
  d: duration
  at: timestamp
effects:
  longer: bool
  at: timestamp
rules:
  - id: longer
    when: true
    effects:
      longer: d > duration("1s")
  - id: at
    when: true
    effects:
      at: at
"""
