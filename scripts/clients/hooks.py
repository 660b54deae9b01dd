"""Schemathesis hooks of dmar's contract test (run.sh loads them).

Schemathesis steers fuzzing with hypothesis.target(); Hypothesis' optimiser
for it can fail with an IndexError of its own ("Index N out of range
[-N, N)" in optimiser.hill_climb), which ends an operation's tests with an
error that says nothing about dmar (seen in 2 of 6 runs of 150 s). Targeting
is a search heuristic, not a check: it is turned off, and every check stays on.
"""

import hypothesis


def _no_target(observation, *, label=""):
    return observation


hypothesis.target = _no_target
