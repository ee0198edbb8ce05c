"""Store adapters of schemes that keep normalised tables of their own (the only other place their SQL lives).

`ADAPTERS` are mixed into `app.store.Project`; a scheme without one is stored generically (`Project.write_samples`).
"""
from app.schemes.rubric.store import RubricStoreMixin
from app.store.schemes.violations import ViolationsStoreMixin
from app.store.schemes.violations_configs import MatchConfigsMixin

ADAPTERS = (ViolationsStoreMixin, MatchConfigsMixin, RubricStoreMixin)
