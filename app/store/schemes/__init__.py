"""Store adapters of schemes that keep normalised tables of their own (the only other place their SQL lives).

`ADAPTERS` are mixed into `app.store.Project`; a scheme without one is stored generically (`Project.write_samples`).
"""
from app.schemes.rubric.store import RubricStoreMixin
from app.schemes.violations.store import ViolationsStoreMixin
from app.schemes.violations.store_configs import MatchConfigsMixin

ADAPTERS = (ViolationsStoreMixin, MatchConfigsMixin, RubricStoreMixin)
